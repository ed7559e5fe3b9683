// Bootstrap: the unique id, the rendezvous (root) thread, and small point-to-point messages
// between ranks over TCP (see bootstrap.h). Sockets: one root connection per rank during init;
// afterwards, one connection per (sender, receiver) pair that has exchanged a message, opened
// by the sender on first use and carrying only that direction.
//
// Every structure below travels in native byte order (hosts of one cluster) and is zeroed
// before it is filled, so padding never leaks memory contents.
#include "bootstrap.h"

#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <string>
#include <thread>
#include <vector>

#include "checks.h"
#include "param.h"
#include "socket.h"

namespace {

constexpr int kSecretBytes = 16;
using Secret = std::array<uint8_t, kSecretBytes>;
constexpr uint32_t kIdMagic = 0x535A4944;     // "SZID"
constexpr uint32_t kRootMagic = 0x535A5254;   // "SZRT"
constexpr uint32_t kPeerMagic = 0x535A5052;   // "SZPR"
constexpr uint32_t kMsgMagic = 0x535A4D53;    // "SZMS"
constexpr uint16_t kIdVersion = 1;
// The id came from SZ_COMM_ID: no root runs yet; rank 0's szBootstrapInit starts it.
constexpr uint16_t kIdFlagCommId = 0x1;
// A message bigger than this kills its connection: the receiver allocates the announced size.
constexpr uint64_t kMaxMessageBytes = 64ull << 20;
// Tags below zero belong to the bootstrap's own collectives.
constexpr int kTagAllGather = -1;
constexpr int kTagBarrier = -2;

// szUniqueId.internal (128 bytes), zero after the fields:
//   uint32 magic "SZID" | uint16 version | uint16 flags (kIdFlagCommId) |
//   uint8 secret[16]    | szSocketAddress root (28 bytes: sockaddr_in or sockaddr_in6)
// The root address is where ranks rendezvous; the secret is what every connection presents.
// (A sockaddr_storage does not fit next to the rest: it takes 128 bytes.)
struct IdLayout {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;
  uint8_t secret[kSecretBytes];
  szSocketAddress root;
};
static_assert(sizeof(IdLayout) <= SZ_UNIQUE_ID_BYTES, "unique id layout too large");

// Rank -> root, the whole greeting.
struct RootHello {
  uint32_t magic;
  uint32_t version;
  uint8_t secret[kSecretBytes];
  int32_t rank;
  int32_t nranks;
  szSocketAddress listen;  // where this rank accepts bootstrap messages
};
// Root -> rank; when status is szSuccess, nranks szSocketAddress follow (the address table).
// The secret proves to the rank that it reached the real root.
struct RootReply {
  uint32_t magic;
  int32_t status;
  uint8_t secret[kSecretBytes];
};
// Sender -> receiver, once per connection, then any number of [MsgHeader][payload].
struct PeerHello {
  uint32_t magic;
  int32_t rank;
  uint8_t secret[kSecretBytes];
};
struct MsgHeader {
  uint32_t magic;
  int32_t tag;
  uint64_t bytes;
};

bool sameSecret(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;  // no early exit: the time taken says nothing about the secret
  for (int i = 0; i < kSecretBytes; i++) diff |= a[i] ^ b[i];
  return diff == 0;
}

// The secret of an SZ_COMM_ID id: two 64-bit FNV-1a hashes of "SZ_COMM_ID\0SZ_COMM_SECRET".
// It keeps strangers (a port scanner, another job on a reused port) out, but it is only as
// secret as SZ_COMM_SECRET: without it anyone who knows SZ_COMM_ID can compute it.
void deriveSecret(const char* commId, uint8_t* secret) {
  const char* extra = getenv("SZ_COMM_SECRET");
  std::string text = std::string(commId) + '\0' + (extra != nullptr ? extra : "");
  for (int half = 0; half < 2; half++) {
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(half + 1);
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    memcpy(secret + 8 * half, &h, 8);
  }
}

// The rendezvous, served by a thread of its own: collects one greeting per rank, then sends
// every rank the table of listen addresses. Inconsistent greetings (ranks disagreeing on
// nranks, a rank twice) fail every rank that has arrived with szInvalidUsage; at `deadline`
// those that arrived learn of the timeout.
void rootServe(int listenFd, Secret secret, szDeadline deadline) {
  int nranks = 0, arrived = 0;
  std::vector<int> fds;
  std::vector<szSocketAddress> table;
  int32_t status = szSuccess;
  szResult_t res = szSocketAcceptHellos(listenFd, sizeof(RootHello), deadline, [&](int fd, const void* p) {
    RootHello h;
    memcpy(&h, p, sizeof(h));
    if (h.magic != kRootMagic || h.version != kIdVersion || !sameSecret(h.secret, secret.data()) ||
        h.nranks < 1 || h.rank < 0 || h.rank >= h.nranks) {
      INFO(SZ_INIT | SZ_NET, "bootstrap root: dropped a connection with a bad greeting or secret");
      return szHelloVerdict::kDrop;
    }
    if (nranks == 0) {
      nranks = h.nranks;
      fds.assign(nranks, -1);
      table.resize(nranks);
    }
    if (h.nranks != nranks || fds[h.rank] >= 0) {
      WARN("bootstrap root: rank %d says nranks=%d, but %s", h.rank, h.nranks,
           h.nranks != nranks ? "an earlier rank said otherwise" : "that rank already joined");
      status = szInvalidUsage;
      fds.push_back(fd);  // told of the failure with the others
      return szHelloVerdict::kDone;
    }
    fds[h.rank] = fd;
    table[h.rank] = h.listen;
    return ++arrived == nranks ? szHelloVerdict::kDone : szHelloVerdict::kKeep;
  });
  if (res != szSuccess) {
    INFO(SZ_INIT | SZ_NET, "bootstrap root: %d of %d ranks arrived: %s", arrived, nranks,
         szGetLastError(nullptr));
    status = res;
  }
  RootReply reply;
  memset(&reply, 0, sizeof(reply));
  reply.magic = kRootMagic;
  reply.status = status;
  memcpy(reply.secret, secret.data(), kSecretBytes);
  for (int& fd : fds) {
    if (fd < 0) continue;
    // A rank that gave up meanwhile costs only its own reply. Past the deadline the small reply
    // still goes out: it fits in the socket buffer, and sending it does not wait.
    if (szSocketSendAll(fd, &reply, sizeof(reply), deadline) != szSuccess ||
        (status == szSuccess &&
         szSocketSendAll(fd, table.data(), table.size() * sizeof(table[0]), deadline) != szSuccess))
      INFO(SZ_INIT | SZ_NET, "bootstrap root: could not reply to a rank: %s", szGetLastError(nullptr));
  }
  for (int& fd : fds) szSocketClose(&fd);
  close(listenFd);
}

// A connection a peer opened to this rank's listen socket, read as a stream of
// [PeerHello] [MsgHeader][payload] [MsgHeader][payload] ...
struct InConn {
  int fd;
  int peer = -1;  // known once the greeting checks out
  PeerHello hello;
  MsgHeader header;
  std::vector<uint8_t> payload;
  size_t got = 0;  // bytes of the current piece (greeting, header or payload)
  bool inPayload = false;
};

struct Message {
  int tag;
  std::vector<uint8_t> data;
};

}  // namespace

struct szBootstrap {
  int rank = 0, nranks = 0, timeoutMs = 0;
  uint8_t secret[kSecretBytes];
  int listenFd = -1;
  std::vector<szSocketAddress> peers;  // listen addresses, by rank
  std::vector<int> outFds;             // to each peer, opened on first send; -1 before
  std::vector<std::string> outError;   // why an outgoing connection broke ("" if it did not)
  std::list<InConn> inConns;
  std::vector<std::deque<Message>> inbox;  // arrived but not yet received, by sender
  std::vector<std::string> inError;        // why a sender's connection ended
};

namespace {

szResult_t decodeId(const szUniqueId& id, IdLayout* layout) {
  memcpy(layout, id.internal, sizeof(*layout));
  if (layout->magic != kIdMagic || layout->version != kIdVersion)
    return szSetError(szInvalidArgument, "bootstrap: not a SplitZip unique id (or another version)");
  return szSuccess;
}

Secret secretOf(const IdLayout& layout) {
  Secret s;
  memcpy(s.data(), layout.secret, kSecretBytes);
  return s;
}

void encodeId(const IdLayout& layout, szUniqueId* id) {
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, &layout, sizeof(layout));
}

// Rank side of the rendezvous: greet the root, learn every rank's listen address.
szResult_t meetRoot(szBootstrap* b, const IdLayout& id, const szSocketAddress& myListen,
                    szDeadline deadline) {
  int fd = -1;
  SZCHECK(szSocketConnect(id.root, deadline, &fd));
  RootHello hello;
  memset(&hello, 0, sizeof(hello));
  hello.magic = kRootMagic;
  hello.version = kIdVersion;
  memcpy(hello.secret, id.secret, kSecretBytes);
  hello.rank = b->rank;
  hello.nranks = b->nranks;
  hello.listen = myListen;
  RootReply reply;
  szResult_t res;
  SZCHECKGOTO(szSocketSendAll(fd, &hello, sizeof(hello), deadline), res, out);
  SZCHECKGOTO(szSocketRecvAll(fd, &reply, sizeof(reply), deadline), res, out);
  if (reply.magic != kRootMagic || !sameSecret(reply.secret, id.secret)) {
    res = szSetError(szRemoteError, "bootstrap: %s is not this communicator's root",
                     szSocketAddressString(id.root).c_str());
    goto out;
  }
  if (reply.status == szInvalidUsage) {
    res = szSetError(szInvalidUsage, "bootstrap: rank %d: the ranks disagree on nranks (this rank "
                     "says %d) or two ranks claim one rank number", b->rank, b->nranks);
    goto out;
  }
  if (reply.status != szSuccess) {
    bool late = reply.status == szTimeout;
    res = szSetError(late ? szTimeout : szRemoteError, "the root gave up: %s",
                     late ? "not all ranks arrived in time" : "it failed to accept connections");
    goto out;
  }
  b->peers.resize(b->nranks);
  SZCHECKGOTO(szSocketRecvAll(fd, b->peers.data(), b->nranks * sizeof(b->peers[0]), deadline), res, out);
out:
  szSocketClose(&fd);
  if (res == szTimeout || res == szRemoteError)
    return szSetError(res, "bootstrap: rank %d of %d: rendezvous at %s failed after %d ms: %s",
                      b->rank, b->nranks, szSocketAddressString(id.root).c_str(), b->timeoutMs,
                      std::string(szGetLastError(nullptr)).c_str());
  return res;
}

// Reads what has arrived on `c`; complete messages go to the inbox. Returns false when the
// connection is finished with (closed by the peer, or broken), true to keep it.
bool readConn(szBootstrap* b, InConn& c) {
  for (;;) {
    void* dst;
    size_t need;
    if (c.peer < 0) dst = &c.hello, need = sizeof(c.hello);
    else if (!c.inPayload) dst = &c.header, need = sizeof(c.header);
    else dst = c.payload.data(), need = c.payload.size();
    if (c.got < need && szSocketRecvSome(c.fd, dst, need, &c.got) != szSuccess) {
      if (c.peer >= 0 && b->inError[c.peer].empty())
        b->inError[c.peer] = "rank " + std::to_string(c.peer) +
                             " closed its bootstrap connection: " + szGetLastError(nullptr);
      return false;
    }
    if (c.got < need) return true;
    c.got = 0;
    if (c.peer < 0) {
      int from = c.hello.rank;
      if (c.hello.magic != kPeerMagic || !sameSecret(c.hello.secret, b->secret) || from < 0 ||
          from >= b->nranks || from == b->rank) {
        INFO(SZ_INIT | SZ_NET, "bootstrap: rank %d dropped a connection with a bad greeting or secret", b->rank);
        return false;
      }
      for (const InConn& other : b->inConns)
        if (other.peer == from) {
          WARN("bootstrap: rank %d: a second connection claims to come from rank %d; dropped", b->rank, from);
          return false;
        }
      c.peer = from;
    } else if (!c.inPayload) {
      if (c.header.magic != kMsgMagic || c.header.bytes > kMaxMessageBytes) {
        b->inError[c.peer] = "rank " + std::to_string(c.peer) + " sent a bad message header (" +
                             std::to_string(c.header.bytes) + " bytes, limit " +
                             std::to_string(kMaxMessageBytes) + ")";
        return false;
      }
      c.payload.assign(c.header.bytes, 0);
      c.inPayload = true;
    } else {
      b->inbox[c.peer].push_back({c.header.tag, std::move(c.payload)});
      c.payload.clear();
      c.inPayload = false;
    }
  }
}

// Waits until something happens on the listen socket, an incoming connection, or `waitFd`
// (for `waitEvents`), or until the deadline, and takes in what arrived. Senders call it too,
// so that two ranks sending to each other never wait on each other's full buffers.
szResult_t progress(szBootstrap* b, szDeadline deadline, int waitFd, short waitEvents) {
  std::vector<pollfd> fds;
  fds.push_back({b->listenFd, POLLIN, 0});
  for (const InConn& c : b->inConns) fds.push_back({c.fd, POLLIN, 0});
  if (waitFd >= 0) fds.push_back({waitFd, waitEvents, 0});
  int n = poll(fds.data(), fds.size(), szPollTimeoutMs(deadline));
  if (n < 0 && errno != EINTR) return szSetError(szSystemError, "bootstrap: poll: %s", strerror(errno));
  if (n <= 0) return szSuccess;
  size_t i = 1;
  for (auto it = b->inConns.begin(); it != b->inConns.end(); i++) {
    if (fds[i].revents != 0 && !readConn(b, *it)) {
      close(it->fd);
      it = b->inConns.erase(it);
    } else {
      ++it;
    }
  }
  if (fds[0].revents != 0) {
    for (;;) {
      int fd = accept4(b->listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        b->inConns.push_back({});
        b->inConns.back().fd = fd;
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return szSetError(szSystemError, "bootstrap: accept: %s", strerror(errno));
    }
  }
  return szSuccess;
}

// Sends all of `data` on `fd`, taking in incoming messages while the socket is full.
szResult_t sendAll(szBootstrap* b, int fd, const void* data, size_t bytes, szDeadline deadline) {
  size_t offset = 0;
  for (;;) {
    SZCHECK(szSocketSendSome(fd, data, bytes, &offset));
    if (offset == bytes) return szSuccess;
    if (szClock::now() >= deadline) return szSetError(szTimeout, "bootstrap: send timed out");
    SZCHECK(progress(b, deadline, fd, POLLOUT));
  }
}

szResult_t checkPeer(const szBootstrap* b, int peer, const void* data, size_t bytes, const char* fn) {
  if (b == nullptr || peer < 0 || peer >= b->nranks || peer == b->rank || (data == nullptr && bytes > 0))
    return szSetError(szInvalidArgument, "%s: bad argument (peer %d of %d ranks, this rank %d)", fn,
                      peer, b ? b->nranks : 0, b ? b->rank : -1);
  return szSuccess;
}

szResult_t sendMessage(szBootstrap* b, int peer, int tag, const void* data, size_t bytes) {
  SZCHECK(checkPeer(b, peer, data, bytes, "szBootstrapSend"));
  if (bytes > kMaxMessageBytes)
    return szSetError(szInvalidArgument, "szBootstrapSend: %zu bytes is above the bootstrap limit of %llu",
                      bytes, (unsigned long long)kMaxMessageBytes);
  if (!b->outError[peer].empty())
    return szSetError(szRemoteError, "bootstrap: rank %d: the connection to rank %d broke earlier: %s",
                      b->rank, peer, b->outError[peer].c_str());
  szDeadline deadline = szDeadlineAfterMs(b->timeoutMs);
  szResult_t res = szSuccess;
  int& fd = b->outFds[peer];
  MsgHeader header;
  memset(&header, 0, sizeof(header));
  header.magic = kMsgMagic;
  header.tag = tag;
  header.bytes = bytes;
  if (fd < 0) {
    PeerHello hello;
    memset(&hello, 0, sizeof(hello));
    hello.magic = kPeerMagic;
    hello.rank = b->rank;
    memcpy(hello.secret, b->secret, kSecretBytes);
    SZCHECKGOTO(szSocketConnect(b->peers[peer], deadline, &fd), res, fail);
    SZCHECKGOTO(sendAll(b, fd, &hello, sizeof(hello), deadline), res, fail);
  }
  SZCHECKGOTO(sendAll(b, fd, &header, sizeof(header), deadline), res, fail);
  SZCHECKGOTO(sendAll(b, fd, data, bytes, deadline), res, fail);
  return szSuccess;
fail:
  // Part of a message may have gone out: the connection cannot carry another one.
  b->outError[peer] = szGetLastError(nullptr);
  szSocketClose(&fd);
  return szSetError(res, "bootstrap: rank %d: send of tag %d (%zu bytes) to rank %d failed: %s",
                    b->rank, tag, bytes, peer, b->outError[peer].c_str());
}

szResult_t recvMessage(szBootstrap* b, int peer, int tag, void* data, size_t bytes) {
  SZCHECK(checkPeer(b, peer, data, bytes, "szBootstrapRecv"));
  szDeadline deadline = szDeadlineAfterMs(b->timeoutMs);
  for (;;) {
    std::deque<Message>& box = b->inbox[peer];
    auto it = std::find_if(box.begin(), box.end(), [tag](const Message& m) { return m.tag == tag; });
    if (it != box.end()) {
      Message m = std::move(*it);
      box.erase(it);
      if (m.data.size() != bytes)
        return szSetError(szInvalidUsage, "bootstrap: rank %d expected %zu bytes with tag %d from "
                          "rank %d, got %zu", b->rank, bytes, tag, peer, m.data.size());
      if (bytes > 0) memcpy(data, m.data.data(), bytes);
      return szSuccess;
    }
    if (!b->inError[peer].empty())
      return szSetError(szRemoteError, "bootstrap: rank %d waiting for tag %d: %s", b->rank, tag,
                        b->inError[peer].c_str());
    if (szClock::now() >= deadline)
      return szSetError(szTimeout, "bootstrap: rank %d: no message with tag %d from rank %d "
                        "within %d ms", b->rank, tag, peer, b->timeoutMs);
    SZCHECK(progress(b, deadline, -1, 0));
  }
}

// Ring all-gather: in step s each rank passes on the slice it received in step s-1. A ring
// keeps each rank's connections to two, and nranks is small.
szResult_t ringAllGather(szBootstrap* b, void* data, size_t bytes, int tag) {
  int n = b->nranks, next = (b->rank + 1) % n, prev = (b->rank + n - 1) % n;
  char* base = (char*)data;
  for (int s = 0; s < n - 1; s++) {
    int sendSlice = (b->rank - s + n) % n, recvSlice = (b->rank - s - 1 + n) % n;
    SZCHECK(sendMessage(b, next, tag, base + sendSlice * bytes, bytes));
    SZCHECK(recvMessage(b, prev, tag, base + recvSlice * bytes, bytes));
  }
  return szSuccess;
}

}  // namespace

szResult_t szBootstrapGetUniqueId(szUniqueId* id) {
  if (id == nullptr) return szSetError(szInvalidArgument, "szGetUniqueId: NULL id");
  IdLayout layout;
  memset(&layout, 0, sizeof(layout));
  layout.magic = kIdMagic;
  layout.version = kIdVersion;
  const char* commId = getenv("SZ_COMM_ID");
  if (commId != nullptr && *commId != '\0') {
    SZCHECK(szSocketParseAddress(commId, &layout.root));
    layout.flags = kIdFlagCommId;
    deriveSecret(commId, layout.secret);
    INFO(SZ_INIT, "unique id from SZ_COMM_ID=%s", commId);
    encodeId(layout, id);
    return szSuccess;
  }
  if (getrandom(layout.secret, kSecretBytes, 0) != kSecretBytes)
    return szSetError(szSystemError, "szGetUniqueId: getrandom: %s", strerror(errno));
  int fd = -1;
  SZCHECK(szSocketLocalAddress(&layout.root));
  SZCHECK(szSocketListen(&layout.root, &fd));
  // Detached like NCCL's: whoever called szGetUniqueId may never be a rank. It serves one
  // rendezvous and exits, at the latest after SZ_TIMEOUT_MS.
  std::thread(rootServe, fd, secretOf(layout), szDeadlineAfterMs(szParamTimeoutMs())).detach();
  INFO(SZ_INIT, "unique id: root listening on %s", szSocketAddressString(layout.root).c_str());
  encodeId(layout, id);
  return szSuccess;
}

szResult_t szBootstrapInit(const szUniqueId& id, int rank, int nranks, int timeoutMs,
                           szBootstrap** bootstrap) {
  if (bootstrap == nullptr || nranks < 1 || rank < 0 || rank >= nranks || timeoutMs <= 0)
    return szSetError(szInvalidArgument, "bootstrap: bad argument (rank %d of %d, timeout %d ms)",
                      rank, nranks, timeoutMs);
  IdLayout layout;
  SZCHECK(decodeId(id, &layout));
  szDeadline deadline = szDeadlineAfterMs(timeoutMs);
  szBootstrap* b = new szBootstrap;
  b->rank = rank;
  b->nranks = nranks;
  b->timeoutMs = timeoutMs;
  memcpy(b->secret, layout.secret, kSecretBytes);
  b->outFds.assign(nranks, -1);
  b->outError.resize(nranks);
  b->inbox.resize(nranks);
  b->inError.resize(nranks);
  szSocketAddress myListen;
  std::thread root;
  szResult_t res;
  SZCHECKGOTO(szSocketLocalAddress(&myListen), res, fail);
  SZCHECKGOTO(szSocketListen(&myListen, &b->listenFd), res, fail);
  if ((layout.flags & kIdFlagCommId) && rank == 0) {
    // Processes started separately: rank 0 serves the rendezvous at SZ_COMM_ID. Listening here
    // (not in the thread) reports a taken port to the caller. The root shares this call's
    // deadline, so joining it below never waits longer than the call itself may.
    szSocketAddress rootAddr = layout.root;
    int rootFd = -1;
    SZCHECKGOTO(szSocketListen(&rootAddr, &rootFd), res, fail);
    root = std::thread(rootServe, rootFd, secretOf(layout), deadline);
  }
  res = meetRoot(b, layout, myListen, deadline);
  if (root.joinable()) root.join();
  if (res != szSuccess) goto fail;
  INFO(SZ_INIT, "bootstrap: rank %d of %d ready, listening on %s", rank, nranks,
       szSocketAddressString(myListen).c_str());
  *bootstrap = b;
  return szSuccess;
fail:
  szBootstrapClose(b);
  return res;
}

szResult_t szBootstrapSend(szBootstrap* b, int peer, int tag, const void* data, size_t bytes) {
  return sendMessage(b, peer, tag, data, bytes);
}

szResult_t szBootstrapRecv(szBootstrap* b, int peer, int tag, void* data, size_t bytes) {
  return recvMessage(b, peer, tag, data, bytes);
}

szResult_t szBootstrapAllGather(szBootstrap* b, void* data, size_t bytes) {
  if (b == nullptr || (data == nullptr && bytes > 0))
    return szSetError(szInvalidArgument, "szBootstrapAllGather: NULL argument");
  return ringAllGather(b, data, bytes, kTagAllGather);
}

szResult_t szBootstrapBarrier(szBootstrap* b) {
  if (b == nullptr) return szSetError(szInvalidArgument, "szBootstrapBarrier: NULL bootstrap");
  // A rank finishes a ring all-gather only after a message from every other rank has reached
  // it, and each one sent only after entering.
  std::vector<char> dummy(b->nranks);
  return ringAllGather(b, dummy.data(), 1, kTagBarrier);
}

const uint8_t* szBootstrapSecret(const szBootstrap* b) { return b->secret; }
int szBootstrapRank(const szBootstrap* b) { return b->rank; }
int szBootstrapNranks(const szBootstrap* b) { return b->nranks; }
int szBootstrapTimeoutMs(const szBootstrap* b) { return b->timeoutMs; }

szResult_t szBootstrapClose(szBootstrap* b) {
  if (b == nullptr) return szSuccess;
  for (int& fd : b->outFds) szSocketClose(&fd);
  for (InConn& c : b->inConns) close(c.fd);
  szSocketClose(&b->listenFd);
  delete b;
  return szSuccess;
}
