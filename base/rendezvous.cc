// The unique id and the rendezvous (see rendezvous.h). Every structure travels in native byte
// order (hosts of one cluster) and is zeroed before it is filled, so padding never leaks memory
// contents.
#include "base/rendezvous.h"

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "base/checks.h"
#include "base/param.h"
#include "base/pending.h"

namespace {

using Key = std::array<uint8_t, kSzKeyBytes>;
constexpr uint32_t kIdMagic = 0x535A4944;    // "SZID"
constexpr uint32_t kRootMagic = 0x535A5254;  // "SZRT"
// 3: the reply's MAC covers the address table (2 left the table unproven).
constexpr uint16_t kIdVersion = 3;
// RootReply.status when a greeting of another version arrives (no MAC: the root cannot prove
// anything to a rank whose proof it cannot check); RootReply.nranks then holds the root's version.
constexpr int32_t kStatusOtherVersion = -0x5652;  // "VR"
// RootReply.status (with its MAC) when not all ranks arrived and a greeting of another version
// did: RootReply.nranks then holds that version, so the ranks that waited learn why.
constexpr int32_t kStatusTimeoutOtherVersion = -0x5654;  // "VT"
// How long past its deadline a rank waits for the root's reply (sent at the deadline at the latest).
constexpr int kReplyGraceMs = 500;
// The id came from SZ_COMM_ID: no root runs yet; rank 0's szBootstrapInit starts it.
constexpr uint16_t kIdFlagCommId = 0x1;

// szUniqueId.internal (128 bytes), zero after the fields:
//   uint32 magic "SZID" | uint16 version | uint16 flags (kIdFlagCommId) |
//   uint8 idKey[32]     | szSocketAddress root (28 bytes: sockaddr_in or sockaddr_in6)
struct IdLayout {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint8_t idKey[kSzKeyBytes];
  szSocketAddress root;
};
static_assert(sizeof(IdLayout) <= SZ_UNIQUE_ID_BYTES, "unique id layout too large");

// Rank -> root, after the root's challenge. `mac` covers the challenge and every field before it.
struct RootHello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  szSocketAddress listen;  // where this rank accepts bootstrap messages
  uint8_t nonce[kSzNonceBytes];
  uint8_t mac[kSzMacBytes];
};
// Root -> rank; when status is szSuccess, nranks szSocketAddress follow (the address table), and
// `mac` covers them too: a changed byte anywhere in what the root sends is refused.
struct RootReply {
  uint32_t magic;
  int32_t status;
  int32_t nranks;
  uint8_t wrappedKey[kSzKeyBytes];  // the session key XOR an HMAC of both nonces
  uint8_t mac[kSzMacBytes];
};

void helloMac(const Key& idKey, const szAuthChallenge& c, const RootHello& h, uint8_t mac[kSzMacBytes]) {
  static const char kLabel[] = "splitzip rendezvous hello";
  szAuthMac(idKey.data(), kSzKeyBytes, {{kLabel, sizeof(kLabel)}, {c.nonce, kSzNonceBytes}, {&h, offsetof(RootHello, mac)}},
            mac);
}

// Over the reply's fields and the address table that follows it (empty unless status is szSuccess).
void replyMac(const Key& idKey, const szAuthChallenge& c, const uint8_t* helloNonce, const RootReply& r,
              const std::vector<szSocketAddress>& table, uint8_t mac[kSzMacBytes]) {
  static const char kLabel[] = "splitzip rendezvous reply";
  const size_t tableBytes = r.status == szSuccess ? table.size() * sizeof(szSocketAddress) : 0;
  szAuthMac(idKey.data(), kSzKeyBytes,
            {{kLabel, sizeof(kLabel)}, {helloNonce, kSzNonceBytes}, {c.nonce, kSzNonceBytes},
             {&r, offsetof(RootReply, mac)}, {table.data(), tableBytes}},
            mac);
}

// The mask of the session key for one rank: only a holder of the id key that saw both nonces
// can compute it.
void keyMask(const Key& idKey, const szAuthChallenge& c, const uint8_t* helloNonce, uint8_t mask[kSzKeyBytes]) {
  static const char kLabel[] = "splitzip session key";
  static_assert(kSzKeyBytes == kSzMacBytes, "the mask is one HMAC");
  szAuthMac(idKey.data(), kSzKeyBytes, {{kLabel, sizeof(kLabel)}, {c.nonce, kSzNonceBytes}, {helloNonce, kSzNonceBytes}},
            mask);
}

// The id key of an SZ_COMM_ID id: HMAC-SHA256(SZ_COMM_SECRET, SZ_COMM_ID).
void deriveIdKey(const char* commId, uint8_t* idKey) {
  static const char kLabel[] = "splitzip SZ_COMM_ID";
  const char* secret = getenv("SZ_COMM_SECRET");
  if (secret == nullptr || *secret == '\0') {
    static std::once_flag once;
    // Once per process, at every log level (as an invalid setting is, base/param.cc): the
    // insecure path says so and names the two secure ones.
    std::call_once(once, [commId] {
      fprintf(stderr, "SplitZip: WARNING: SZ_COMM_ID=%s without SZ_COMM_SECRET: any process that can reach that "
              "address can join the communicator (as with NCCL_COMM_ID). Set SZ_COMM_SECRET to one secret value "
              "on every rank, or share a unique id from szGetUniqueId through the launcher (MPI_Bcast; "
              "Communicator.from_torch_distributed in Python)\n", commId);
    });
    secret = "";
  }
  szAuthMac(reinterpret_cast<const uint8_t*>(secret), strlen(secret),
            {{kLabel, sizeof(kLabel)}, {commId, strlen(commId)}}, idKey);
}

Key keyOf(const IdLayout& layout) {
  Key k;
  memcpy(k.data(), layout.idKey, kSzKeyBytes);
  return k;
}

// One rank's connection to the root until the reply: what its reply is computed from.
struct Arrival {
  int fd = -1;
  szAuthChallenge challenge;
  uint8_t nonce[kSzNonceBytes];
};

// The rendezvous, served by a thread of its own: collects one greeting per rank, then sends
// every rank the table of listen addresses and the session key. `nranks` is 0 when the
// greetings decide it (a detached root), else the root's own rank count. Inconsistent
// greetings (ranks disagreeing on nranks, a rank twice) fail every rank that has arrived with
// szInvalidUsage; at `deadline` those that arrived learn of the timeout.
void rootServe(int listenFd, Key idKey, Key sessionKey, int nranks, szDeadline deadline) {
  int arrived = 0;
  std::vector<Arrival> ranks(nranks), extra;  // extra: told of a failure with the others
  std::vector<szSocketAddress> table(nranks);
  int32_t status = szSuccess;
  uint32_t otherVersion = 0;  // a greeting of this version arrived (0: none)
  szResult_t res = szAcceptHellos(listenFd, sizeof(RootHello), deadline,
                                  [&](int fd, const szAuthChallenge& c, const void* p) {
    RootHello h;
    memcpy(&h, p, sizeof(h));
    uint8_t expect[kSzMacBytes];
    helloMac(idKey, c, h, expect);
    if (h.magic == kRootMagic && h.version != kIdVersion) {
      // Unproven either way: the rank learns the versions differ, nothing else.
      WARN("bootstrap root: a rank of rendezvous version %u tried to join (version %u here): build every rank "
           "from one SplitZip version", h.version, unsigned(kIdVersion));
      otherVersion = h.version;
      RootReply notice;
      memset(&notice, 0, sizeof(notice));
      notice.magic = kRootMagic;
      notice.status = kStatusOtherVersion;
      notice.nranks = kIdVersion;
      (void)szSocketSendAll(fd, &notice, sizeof(notice), deadline);
      return szHelloVerdict::kDrop;
    }
    if (h.magic != kRootMagic || !szAuthEqual(expect, h.mac, kSzMacBytes)) {
      INFO(SZ_INIT | SZ_NET, "bootstrap root: dropped a connection with a bad greeting or proof");
      return szHelloVerdict::kDrop;
    }
    // Authenticated; still a holder of the id key is not trusted to size the root's tables.
    if (h.nranks < 1 || h.nranks > kSzMaxRanks || h.rank < 0 || h.rank >= h.nranks) {
      WARN("bootstrap root: dropped a greeting for rank %d of %d ranks (1 to %d ranks)", h.rank, h.nranks,
           kSzMaxRanks);
      return szHelloVerdict::kDrop;
    }
    if (nranks == 0) {
      nranks = h.nranks;
      ranks.resize(nranks);
      table.resize(nranks);
    }
    Arrival a;
    a.fd = fd;
    a.challenge = c;
    memcpy(a.nonce, h.nonce, kSzNonceBytes);
    if (h.nranks != nranks || ranks[h.rank].fd >= 0) {
      WARN("bootstrap root: rank %d says nranks=%d, but %s", h.rank, h.nranks,
           h.nranks != nranks ? "the communicator has another size" : "that rank already joined");
      status = szInvalidUsage;
      extra.push_back(a);
      return szHelloVerdict::kDone;
    }
    ranks[h.rank] = a;
    table[h.rank] = h.listen;
    return ++arrived == nranks ? szHelloVerdict::kDone : szHelloVerdict::kKeep;
  });
  if (res != szSuccess) {
    INFO(SZ_INIT | SZ_NET, "bootstrap root: %d of %d ranks arrived: %s", arrived, nranks, szGetLastError(nullptr));
    status = res;
  }
  ranks.insert(ranks.end(), extra.begin(), extra.end());
  for (Arrival& a : ranks) {
    if (a.fd < 0) continue;
    RootReply reply;
    memset(&reply, 0, sizeof(reply));
    reply.magic = kRootMagic;
    reply.status = status;
    reply.nranks = nranks;
    if (status == szTimeout && otherVersion != 0) {
      reply.status = kStatusTimeoutOtherVersion;
      reply.nranks = int32_t(otherVersion);
    }
    keyMask(idKey, a.challenge, a.nonce, reply.wrappedKey);
    for (size_t i = 0; i < kSzKeyBytes; i++) reply.wrappedKey[i] ^= sessionKey[i];
    replyMac(idKey, a.challenge, a.nonce, reply, table, reply.mac);
    // A rank that gave up meanwhile costs only its own reply. Past the deadline the small reply
    // still goes out: it fits in the socket buffer, and sending it does not wait.
    if (szSocketSendAll(a.fd, &reply, sizeof(reply), deadline) != szSuccess ||
        (status == szSuccess &&
         szSocketSendAll(a.fd, table.data(), table.size() * sizeof(table[0]), deadline) != szSuccess))
      INFO(SZ_INIT | SZ_NET, "bootstrap root: could not reply to a rank: %s", szGetLastError(nullptr));
    szSocketClose(&a.fd);
  }
  close(listenFd);
}

// Starts the root thread on `listenFd` with a fresh session key.
szResult_t startRoot(int listenFd, const IdLayout& id, int nranks, szDeadline deadline, std::thread* root) {
  Key sessionKey;
  szResult_t res = szAuthRandom(sessionKey.data(), kSzKeyBytes);
  if (res != szSuccess) {
    close(listenFd);
    return res;
  }
  *root = std::thread(rootServe, listenFd, keyOf(id), sessionKey, nranks, deadline);
  return szSuccess;
}

// Rank side of the rendezvous: prove the id key, learn every rank's listen address and the key.
szResult_t meetRoot(const IdLayout& id, int rank, int nranks, const szSocketAddress& myListen, szDeadline deadline,
                    std::vector<szSocketAddress>* peers, uint8_t sessionKey[kSzKeyBytes]) {
  Key idKey = keyOf(id);
  int fd = -1;
  SZCHECK(szSocketConnect(id.root, deadline, &fd));
  szAuthChallenge c;
  RootHello hello;
  memset(&hello, 0, sizeof(hello));
  hello.magic = kRootMagic;
  hello.version = kIdVersion;
  hello.rank = rank;
  hello.nranks = nranks;
  hello.listen = myListen;
  RootReply reply;
  uint8_t expect[kSzMacBytes];
  szResult_t res;
  SZCHECKGOTO(szAuthRecvChallenge(fd, deadline, szAuthPollWait, &c), res, out);
  SZCHECKGOTO(szAuthRandom(hello.nonce, kSzNonceBytes), res, out);
  helloMac(idKey, c, hello, hello.mac);
  SZCHECKGOTO(szSocketSendAll(fd, &hello, sizeof(hello), deadline), res, out);
  // The root answers at the latest at the shared deadline, saying why it gave up (who did not
  // arrive, a rank of another version): a moment's grace lets that answer arrive.
  res = szSocketRecvAll(fd, &reply, sizeof(reply), deadline + std::chrono::milliseconds(kReplyGraceMs));
  if (res == szRemoteError) {
    res = szSetError(szRemoteError, "the root closed the connection: it did not accept this rank's key "
                     "(SZ_COMM_SECRET differs?) or greeting, or it runs a SplitZip build from before rendezvous version 3");
    goto out;
  }
  if (res != szSuccess) goto out;
  if (reply.magic == kRootMagic && reply.status == kStatusOtherVersion) {
    res = szSetError(szInvalidUsage, "bootstrap: rank %d: the root at %s speaks rendezvous version %d, this rank "
                     "version %u: build every rank from one SplitZip version", rank,
                     szSocketAddressString(id.root).c_str(), reply.nranks, unsigned(kIdVersion));
    goto out;
  }
  if (reply.magic == kRootMagic && reply.status == szSuccess) {
    // The table's size is this rank's own nranks (the root replies szSuccess only when every
    // rank said the same); the MAC below proves it and the table.
    if (reply.nranks != nranks) {
      res = szSetError(szRemoteError, "%s is not this communicator's root (its reply says %d ranks, this rank %d)",
                       szSocketAddressString(id.root).c_str(), reply.nranks, nranks);
      goto out;
    }
    peers->resize(size_t(nranks));
    SZCHECKGOTO(szSocketRecvAll(fd, peers->data(), size_t(nranks) * sizeof((*peers)[0]), deadline), res, out);
  }
  replyMac(idKey, c, hello.nonce, reply, *peers, expect);
  if (reply.magic != kRootMagic || !szAuthEqual(expect, reply.mac, kSzMacBytes)) {
    peers->clear();
    res = szSetError(szRemoteError, "the reply from %s failed its proof: not this communicator's root, or bytes "
                     "changed on the path", szSocketAddressString(id.root).c_str());
    goto out;
  }
  if (reply.status == szInvalidUsage) {
    res = szSetError(szInvalidUsage, "bootstrap: rank %d: the ranks disagree on nranks (this rank says %d) or "
                     "two ranks claim one rank number", rank, nranks);
    goto out;
  }
  if (reply.status == kStatusTimeoutOtherVersion) {
    res = szSetError(szInvalidUsage, "bootstrap: rank %d: not all ranks arrived in time, and a rank of rendezvous "
                     "version %d tried to join (this rank: version %u): build every rank from one SplitZip version",
                     rank, reply.nranks, unsigned(kIdVersion));
    goto out;
  }
  if (reply.status != szSuccess) {
    bool late = reply.status == szTimeout;
    res = szSetError(late ? szTimeout : szRemoteError, "the root gave up: %s",
                     late ? "not all ranks arrived in time" : "it failed to accept connections");
    goto out;
  }
  keyMask(idKey, c, hello.nonce, sessionKey);
  for (size_t i = 0; i < kSzKeyBytes; i++) sessionKey[i] ^= reply.wrappedKey[i];
out:
  szSocketClose(&fd);
  return res;
}

}  // namespace

szResult_t szRendezvousNewId(szUniqueId* id) {
  if (id == nullptr) return szSetError(szInvalidArgument, "szGetUniqueId: NULL id");
  IdLayout layout;
  memset(&layout, 0, sizeof(layout));
  layout.magic = kIdMagic;
  layout.version = kIdVersion;
  const char* commId = getenv("SZ_COMM_ID");
  if (commId != nullptr && *commId != '\0') {
    SZCHECK(szSocketParseAddress(commId, &layout.root));
    layout.flags = kIdFlagCommId;
    deriveIdKey(commId, layout.idKey);
    INFO(SZ_INIT, "unique id from SZ_COMM_ID=%s", commId);
  } else {
    SZCHECK(szAuthRandom(layout.idKey, kSzKeyBytes));
    int fd = -1;
    SZCHECK(szSocketLocalAddress(&layout.root));
    SZCHECK(szSocketListen(&layout.root, &fd));
    // Detached like NCCL's: whoever called szGetUniqueId may never be a rank. It serves one
    // rendezvous and exits, at the latest after SZ_TIMEOUT_MS.
    std::thread root;
    SZCHECK(startRoot(fd, layout, 0, szDeadlineAfterMs(szParamTimeoutMs()), &root));
    root.detach();
    INFO(SZ_INIT, "unique id: root listening on %s", szSocketAddressString(layout.root).c_str());
  }
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, &layout, sizeof(layout));
  return szSuccess;
}

szResult_t szRendezvousJoin(const szUniqueId& id, int rank, int nranks, const szSocketAddress& myListen,
                            szDeadline deadline, std::vector<szSocketAddress>* peers,
                            uint8_t sessionKey[kSzKeyBytes]) {
  IdLayout layout;
  memcpy(&layout, id.internal, sizeof(layout));
  if (layout.magic != kIdMagic)
    return szSetError(szInvalidArgument, "bootstrap: not a SplitZip unique id");
  if (layout.version != kIdVersion)
    return szSetError(szInvalidArgument, "bootstrap: a unique id of version %u, this build takes version %u: build "
                      "every rank from one SplitZip version", unsigned(layout.version), unsigned(kIdVersion));
  if (nranks < 1 || nranks > kSzMaxRanks)
    return szSetError(szInvalidArgument, "bootstrap: %d ranks (1 to %d)", nranks, kSzMaxRanks);
  std::thread root;
  if ((layout.flags & kIdFlagCommId) && rank == 0) {
    // Processes started separately: rank 0 serves the rendezvous at SZ_COMM_ID, knowing the
    // communicator's size. Listening here (not in the thread) reports a taken port to the
    // caller. The root shares this call's deadline, so joining it below never waits longer
    // than the call itself may.
    szSocketAddress rootAddr = layout.root;
    int rootFd = -1;
    SZCHECK(szSocketListen(&rootAddr, &rootFd));
    SZCHECK(startRoot(rootFd, layout, nranks, deadline, &root));
  }
  szResult_t res = meetRoot(layout, rank, nranks, myListen, deadline, peers, sessionKey);
  if (root.joinable()) root.join();
  return res;
}
