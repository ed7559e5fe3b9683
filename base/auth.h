// Authentication of connections between ranks (OpenSSL's libcrypto: HMAC-SHA256, RAND_bytes,
// CRYPTO_memcmp). A connection is trusted once its connector has answered a fresh challenge:
//
//   acceptor -> connector   szAuthChallenge  a random nonce
//   connector -> acceptor   szAuthHello      who it is (rank, the rank it wants, which connection),
//                                            its own nonce, HMAC(key, purpose, both nonces, fields)
//   acceptor -> connector   szAuthVerdict    accepted or refused, HMAC over both nonces: proves to
//                                            the connector that it reached a holder of the key
//
// The key is the communicator's session key (random, made by the rendezvous); `purpose` names
// the channel ("bootstrap", "tcp"), so a hello made for one channel is no good on another, and a
// nonce is never reused, so a recorded hello is no good later. Nothing here hides the bytes that
// follow: see docs/PIPELINE.md, "What the wire protects".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <utility>

#include "base/socket.h"
#include "splitzip.h"

constexpr size_t kSzKeyBytes = 32;
constexpr size_t kSzNonceBytes = 16;
constexpr size_t kSzMacBytes = 32;

struct szAuthChallenge {
  uint32_t magic;
  uint32_t version;
  uint8_t nonce[kSzNonceBytes];
};
struct szAuthHello {
  uint32_t magic;
  int32_t rank;   // the connector
  int32_t peer;   // the acceptor it wants
  int32_t index;  // which of the pair's connections
  uint8_t nonce[kSzNonceBytes];
  uint8_t mac[kSzMacBytes];
};
struct szAuthVerdict {
  uint32_t magic;
  int32_t status;  // szSuccess, or why the acceptor refused (szInvalidUsage: that slot is taken)
  uint8_t mac[kSzMacBytes];
};

// Cryptographically strong random bytes. Errors: szSystemError.
szResult_t szAuthRandom(void* data, size_t bytes);
// HMAC-SHA256 under `key` of the concatenation of `parts` (pointer, length).
void szAuthMac(const uint8_t* key, size_t keyBytes, std::initializer_list<std::pair<const void*, size_t>> parts,
               uint8_t mac[kSzMacBytes]);
// Constant-time comparison: the time taken says nothing about where two secrets differ.
// AES-256-GCM under the kSzKeyBytes `key` with a 12-byte `nonce` that must never repeat under one
// key: `aad` (pointer, length pieces) is authenticated, the `bytes` at `data` (null when 0: GMAC,
// a tag alone) are encrypted in place, and the 16-byte tag goes to `tag`. A tag that could not be
// computed is random (it matches nothing).
using szAuthParts = std::initializer_list<std::pair<const void*, size_t>>;
void szAuthSeal(const uint8_t* key, const uint8_t nonce[12], szAuthParts aad, uint8_t* data, size_t bytes,
                uint8_t tag[16]);
// szAuthSeal's inverse: decrypts the `bytes` at `data` in place and checks `tag` over `aad` and
// them; false when it does not match (the bytes at `data` are then not the plaintext).
bool szAuthOpen(const uint8_t* key, const uint8_t nonce[12], szAuthParts aad, uint8_t* data, size_t bytes,
                const uint8_t tag[16]);

bool szAuthEqual(const void* a, const void* b, size_t bytes);

// A new challenge (fresh nonce). Errors: szSystemError.
szResult_t szAuthMakeChallenge(szAuthChallenge* challenge);

// Waits until `fd` is ready for `events` or the deadline passes; the bootstrap passes one that
// keeps serving its own incoming connections meanwhile.
using szAuthWait = std::function<szResult_t(int fd, short events, szDeadline deadline)>;
szResult_t szAuthPollWait(int fd, short events, szDeadline deadline);

// Receives the acceptor's challenge on a connected socket and checks its format.
// Errors: szRemoteError (not a SplitZip endpoint of this version, or it closed), szTimeout.
szResult_t szAuthRecvChallenge(int fd, szDeadline deadline, const szAuthWait& wait, szAuthChallenge* challenge);

// Connector side, on a connected socket: answers the acceptor's challenge as rank `rank`
// wanting rank `peer` (connection `index`) and checks its verdict.
// Errors: szRemoteError (the other end does not hold the key, or closed), szInvalidUsage (it
// refused: the slot is taken), szTimeout, szSystemError.
szResult_t szAuthConnect(int fd, const uint8_t* key, const char* purpose, int rank, int peer, int index,
                         szDeadline deadline, const szAuthWait& wait = szAuthPollWait);

// Acceptor side: true if `hello` answers `challenge` under `key` and wants rank `self`.
bool szAuthCheckHello(const uint8_t* key, const char* purpose, int self, const szAuthChallenge& challenge,
                      const szAuthHello& hello);
// Sends the verdict on a hello that passed szAuthCheckHello (a small message: it fits in the
// socket buffer of a fresh connection and does not wait).
szResult_t szAuthSendVerdict(int fd, const uint8_t* key, const char* purpose, const szAuthChallenge& challenge,
                             const szAuthHello& hello, szResult_t status);
