// Connection authentication (see auth.h) over OpenSSL's libcrypto.
#include "base/auth.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/checks.h"

namespace {

constexpr uint32_t kChallengeMagic = 0x535A4348;  // "SZCH"
constexpr uint32_t kHelloMagic = 0x535A4845;      // "SZHE"
constexpr uint32_t kVerdictMagic = 0x535A5644;    // "SZVD"
constexpr uint32_t kAuthVersion = 1;

// The connector's proof: over the purpose, the acceptor's nonce and every field of the hello.
void helloMac(const uint8_t* key, const char* purpose, const szAuthChallenge& c, const szAuthHello& h,
              uint8_t mac[kSzMacBytes]) {
  static const char kLabel[] = "splitzip hello";
  szAuthMac(key, kSzKeyBytes,
            {{kLabel, sizeof(kLabel)}, {purpose, strlen(purpose) + 1}, {c.nonce, kSzNonceBytes},
             {&h.rank, sizeof(h.rank)}, {&h.peer, sizeof(h.peer)}, {&h.index, sizeof(h.index)},
             {h.nonce, kSzNonceBytes}},
            mac);
}

// The acceptor's proof: over the connector's nonce first, so it cannot be replayed as a hello.
void verdictMac(const uint8_t* key, const char* purpose, const szAuthChallenge& c, const szAuthHello& h,
                int32_t status, uint8_t mac[kSzMacBytes]) {
  static const char kLabel[] = "splitzip verdict";
  szAuthMac(key, kSzKeyBytes,
            {{kLabel, sizeof(kLabel)}, {purpose, strlen(purpose) + 1}, {h.nonce, kSzNonceBytes},
             {c.nonce, kSzNonceBytes}, {&status, sizeof(status)}},
            mac);
}

szResult_t transfer(int fd, bool send, void* data, size_t bytes, szDeadline deadline, const szAuthWait& wait) {
  size_t offset = 0;
  for (;;) {
    SZCHECK(send ? szSocketSendSome(fd, data, bytes, &offset) : szSocketRecvSome(fd, data, bytes, &offset));
    if (offset == bytes) return szSuccess;
    if (szClock::now() >= deadline) return szSetError(szTimeout, "authentication: timed out");
    SZCHECK(wait(fd, send ? POLLOUT : POLLIN, deadline));
  }
}

}  // namespace

szResult_t szAuthRandom(void* data, size_t bytes) {
  if (RAND_bytes(static_cast<unsigned char*>(data), int(bytes)) != 1)
    return szSetError(szSystemError, "RAND_bytes: %s", ERR_error_string(ERR_get_error(), nullptr));
  return szSuccess;
}

void szAuthMac(const uint8_t* key, size_t keyBytes, std::initializer_list<std::pair<const void*, size_t>> parts,
               uint8_t mac[kSzMacBytes]) {
  // EVP_MAC: OpenSSL 3's interface for HMAC (HMAC_CTX is deprecated there).
  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* ctx = hmac ? EVP_MAC_CTX_new(hmac) : nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
  size_t len = 0;
  bool ok = ctx != nullptr && EVP_MAC_init(ctx, key, keyBytes, params) == 1;
  for (const auto& [p, n] : parts) ok = ok && EVP_MAC_update(ctx, static_cast<const unsigned char*>(p), n) == 1;
  ok = ok && EVP_MAC_final(ctx, mac, &len, kSzMacBytes) == 1 && len == kSzMacBytes;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(hmac);
  // A MAC that could not be computed must never match one that was: fill it with fresh
  // randomness (or, failing that, leave a value no peer will have sent).
  if (!ok) {
    WARN("auth: HMAC-SHA256 failed: %s", ERR_error_string(ERR_get_error(), nullptr));
    if (RAND_bytes(mac, int(kSzMacBytes)) != 1) memset(mac, 0xA5, kSzMacBytes);
  }
}

namespace {

// GCM takes int-sized pieces: `bytes` at `in` through `ctx` (out null: additional data).
bool gcmUpdate(EVP_CIPHER_CTX* ctx, bool seal, uint8_t* out, const void* in, size_t bytes) {
  constexpr size_t kPiece = size_t(1) << 30;
  int len = 0;
  for (size_t at = 0; at < bytes; at += kPiece) {
    const size_t piece = bytes - at < kPiece ? bytes - at : kPiece;
    const auto* from = static_cast<const unsigned char*>(in) + at;
    unsigned char* to = out != nullptr ? out + at : nullptr;
    if ((seal ? EVP_EncryptUpdate(ctx, to, &len, from, int(piece)) : EVP_DecryptUpdate(ctx, to, &len, from, int(piece))) != 1)
      return false;
  }
  return true;
}

// One AES-256-GCM pass (seal: encrypt and write the tag; else decrypt and check it).
bool gcm(bool seal, const uint8_t* key, const uint8_t nonce[12], szAuthParts aad, uint8_t* data, size_t bytes,
         uint8_t tag[16]) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  bool ok = ctx != nullptr && (seal ? EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nonce)
                                    : EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nonce)) == 1;
  for (const auto& [p, n] : aad) ok = ok && gcmUpdate(ctx, seal, nullptr, p, n);
  ok = ok && gcmUpdate(ctx, seal, data, data, bytes);
  if (seal)
    ok = ok && EVP_EncryptFinal_ex(ctx, nullptr, &len) == 1 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
  else
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 && EVP_DecryptFinal_ex(ctx, nullptr, &len) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

}  // namespace

void szAuthSeal(const uint8_t* key, const uint8_t nonce[12], szAuthParts aad, uint8_t* data, size_t bytes,
                uint8_t tag[16]) {
  if (!gcm(true, key, nonce, aad, data, bytes, tag)) {
    WARN("auth: AES-256-GCM failed: %s", ERR_error_string(ERR_get_error(), nullptr));
    if (RAND_bytes(tag, 16) != 1) memset(tag, 0xA5, 16);
  }
}

bool szAuthOpen(const uint8_t* key, const uint8_t nonce[12], szAuthParts aad, uint8_t* data, size_t bytes,
                const uint8_t tag[16]) {
  uint8_t t[16];
  memcpy(t, tag, 16);
  return gcm(false, key, nonce, aad, data, bytes, t);
}

bool szAuthEqual(const void* a, const void* b, size_t bytes) { return CRYPTO_memcmp(a, b, bytes) == 0; }

szResult_t szAuthMakeChallenge(szAuthChallenge* challenge) {
  memset(challenge, 0, sizeof(*challenge));
  challenge->magic = kChallengeMagic;
  challenge->version = kAuthVersion;
  return szAuthRandom(challenge->nonce, kSzNonceBytes);
}

szResult_t szAuthPollWait(int fd, short events, szDeadline deadline) {
  pollfd p = {fd, events, 0};
  if (poll(&p, 1, szPollTimeoutMs(deadline)) < 0 && errno != EINTR)
    return szSetError(szSystemError, "authentication: poll: %s", strerror(errno));
  return szSuccess;
}

szResult_t szAuthRecvChallenge(int fd, szDeadline deadline, const szAuthWait& wait, szAuthChallenge* c) {
  SZCHECK(transfer(fd, false, c, sizeof(*c), deadline, wait));
  if (c->magic != kChallengeMagic || c->version != kAuthVersion)
    return szSetError(szRemoteError, "authentication: not a SplitZip endpoint (or another version)");
  return szSuccess;
}

szResult_t szAuthConnect(int fd, const uint8_t* key, const char* purpose, int rank, int peer, int index,
                         szDeadline deadline, const szAuthWait& wait) {
  szAuthChallenge c;
  SZCHECK(szAuthRecvChallenge(fd, deadline, wait, &c));
  szAuthHello h;
  memset(&h, 0, sizeof(h));
  h.magic = kHelloMagic;
  h.rank = rank;
  h.peer = peer;
  h.index = index;
  SZCHECK(szAuthRandom(h.nonce, kSzNonceBytes));
  helloMac(key, purpose, c, h, h.mac);
  SZCHECK(transfer(fd, true, &h, sizeof(h), deadline, wait));
  szAuthVerdict v;
  szResult_t res = transfer(fd, false, &v, sizeof(v), deadline, wait);
  if (res == szRemoteError)
    return szSetError(szRemoteError, "authentication: rank %d closed the %s connection instead of answering "
                      "(it did not accept this rank's key)", peer, purpose);
  SZCHECK(res);
  uint8_t expect[kSzMacBytes];
  verdictMac(key, purpose, c, h, v.status, expect);
  if (v.magic != kVerdictMagic || !szAuthEqual(expect, v.mac, kSzMacBytes))
    return szSetError(szRemoteError, "authentication: the %s endpoint of rank %d does not hold this "
                      "communicator's key", purpose, peer);
  if (v.status != szSuccess)
    return szSetError(szInvalidUsage, "authentication: rank %d refused %s connection %d from rank %d: "
                      "another connection already holds that place", peer, purpose, index, rank);
  return szSuccess;
}

bool szAuthCheckHello(const uint8_t* key, const char* purpose, int self, const szAuthChallenge& challenge,
                      const szAuthHello& hello) {
  uint8_t expect[kSzMacBytes];
  helloMac(key, purpose, challenge, hello, expect);
  return hello.magic == kHelloMagic && szAuthEqual(expect, hello.mac, kSzMacBytes) && hello.peer == self;
}

szResult_t szAuthSendVerdict(int fd, const uint8_t* key, const char* purpose, const szAuthChallenge& challenge,
                             const szAuthHello& hello, szResult_t status) {
  szAuthVerdict v;
  memset(&v, 0, sizeof(v));
  v.magic = kVerdictMagic;
  v.status = status;
  verdictMac(key, purpose, challenge, hello, v.status, v.mac);
  size_t offset = 0;
  SZCHECK(szSocketSendSome(fd, &v, sizeof(v), &offset));
  if (offset != sizeof(v)) return szSetError(szSystemError, "authentication: verdict did not fit the socket buffer");
  return szSuccess;
}
