// The tcp wire: host memory over TCP, socketsPerPeer connections between each pair of ranks,
// each used in both directions.
//
// A message is [uint64 length][payload]. The length and the first piece of the payload go on
// connection 0; a payload of at least 2 * kMinPieceBytes is cut into contiguous pieces, one
// per connection (pieceOf), so that several connections move one large message at once.
// Every connection carries its share of every message in order, so both sides know what comes
// next on each socket without more headers: a receiver learns the length on connection 0
// before it reads the other pieces of that message.
//
// Nothing blocks after connect: test() polls (zero timeout) the sockets that have work and
// moves what it can for every outstanding request of the communicator, not only the one
// tested, so a rank can have sends and receives to many peers outstanding without deadlock.
// A mutex per communicator lets a progress thread and user threads call isend/irecv/test at
// once. Any failure on a peer (reset, timeout, oversized message) breaks the whole peer: its
// sockets are closed, its requests fail, and later posts to it fail at once.
#include "transport/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/auth.h"
#include "base/bootstrap.h"
#include "base/checks.h"
#include "base/param.h"
#include "base/pending.h"
#include "base/socket.h"

namespace {

constexpr char kPurpose[] = "tcp";  // names this wire in every handshake MAC
constexpr int kMaxSockets = 64;
// A piece smaller than this is not worth a connection of its own: it would cost more system
// calls than the parallel copy saves.
constexpr uint64_t kMinPieceBytes = 64 << 10;

// What each rank publishes through the bootstrap.
struct Endpoint {
  szSocketAddress addr;
  int32_t nsocks;
};

struct Comm;

// A posted isend or irecv. The wire's own type: callers see it as an opaque szWireRequest*.
struct Request {
  Comm* comm;
  int peer;
  bool isSend;
  szWirePiece pieces[kSzWireMaxPieces];  // the message's bytes (send) or where they go (receive), in order
  int npieces;
  size_t capacity;      // receive: the largest message it takes (the pieces' total)
  uint64_t size;        // send: the message size; receive: once sizeKnown
  bool sizeKnown;
  uint64_t length;      // the length field as it goes over connection 0
  size_t lengthMoved = 0;
  std::vector<size_t> moved;     // per connection: bytes of its piece moved
  std::vector<uint8_t> partDone;  // per connection: its share of this message is through
  int partsLeft;
  szResult_t result = szInProgress;
  std::string error;
};

// The requests of one direction to one peer, served in order.
struct Stream {
  std::deque<Request*> queue;
  szClock::time_point lastProgress;
};

struct Peer {
  std::vector<int> fds;  // socketsPerPeer connections
  Stream send, recv;
  szResult_t broken = szSuccess;
  std::string why;
};

struct Comm {
  int rank = 0, nranks = 0, nsocks = 0, timeoutMs = 0;
  bool idleRequests = false;
  std::mutex mu;
  std::vector<Peer> peers;
  std::unordered_set<Request*> live;  // posted and not yet released by test()
  // progress()'s scratch, kept to spare an allocation per test().
  std::vector<int> active;
  std::vector<pollfd> pollFds;
};

Request* asRequest(szWireRequest* r) { return reinterpret_cast<Request*>(r); }
szWireRequest* asWireRequest(Request* r) { return reinterpret_cast<szWireRequest*>(r); }

// Connection i's share [*begin, *end) of a payload of `size` bytes. Both sides compute it from
// the size alone.
void pieceOf(uint64_t size, int nsocks, int i, uint64_t* begin, uint64_t* end) {
  uint64_t parts = std::clamp<uint64_t>(size / kMinPieceBytes, 1, nsocks);
  uint64_t q = size / parts, r = size % parts;
  auto at = [&](uint64_t k) { return k >= parts ? size : k * q + std::min(k, r); };
  *begin = at(i);
  *end = at(i + 1);
}

void closeSockets(Peer& peer, bool orderly) {
  for (int& fd : peer.fds) {
    // shutdown first so the peer sees the end of the stream after the data already queued.
    if (fd >= 0 && orderly) shutdown(fd, SHUT_WR);
    szSocketClose(&fd);
  }
}

// Fails every request of the peer and closes its sockets: after a partial message the byte
// streams no longer line up, so nothing more can travel to or from this peer.
void breakPeer(Comm* c, int p, szResult_t res, const std::string& why) {
  Peer& peer = c->peers[p];
  if (peer.broken != szSuccess) return;
  peer.broken = res;
  peer.why = why;
  WARN("tcp: rank %d: connection to rank %d failed: %s", c->rank, p, why.c_str());
  closeSockets(peer, false);
  for (Stream* s : {&peer.send, &peer.recv}) {
    for (Request* r : s->queue) {
      r->result = res;
      r->error = why;
    }
    s->queue.clear();
  }
}

// Moves bytes [begin + *moved, end) of `r`'s message between `fd` and the request's pieces, one
// system call at a time (a range that spans two pieces goes as one sendmsg / recvmsg), until
// the range is through or the socket would block.
szResult_t moveRange(int fd, const Request* r, uint64_t begin, uint64_t end, size_t* moved) {
  while (begin + *moved < end) {
    const uint64_t at = begin + *moved;
    iovec iov[kSzWireMaxPieces];
    int n = 0;
    size_t want = 0;
    uint64_t base = 0;
    for (int k = 0; k < r->npieces; ++k) {
      const uint64_t lo = std::max(base, at), hi = std::min(base + r->pieces[k].bytes, end);
      if (lo < hi) {
        iov[n++] = {static_cast<uint8_t*>(r->pieces[k].data) + (lo - base), size_t(hi - lo)};
        want += size_t(hi - lo);
      }
      base += r->pieces[k].bytes;
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = size_t(n);
    const ssize_t got = r->isSend ? sendmsg(fd, &m, MSG_NOSIGNAL) : recvmsg(fd, &m, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return szSuccess;
      return szSocketIoError(r->isSend ? "send" : "recv", errno);
    }
    if (got == 0 && !r->isSend) return szSetError(szRemoteError, "socket recv: connection closed by peer");
    *moved += size_t(got);
    if (size_t(got) < want) return szSuccess;  // the socket's buffer is full, or nothing more arrived
  }
  return szSuccess;
}

// Moves connection i's share of `r` if the socket is `ready`; *complete once the share is
// through. Parts that need no I/O (an empty piece) complete without it.
szResult_t advance(Comm* c, Request* r, int fd, int i, bool ready, bool* complete, bool* moved) {
  *complete = false;
  size_t before = r->lengthMoved + r->moved[i];
  if (i == 0 && r->lengthMoved < sizeof(r->length)) {
    if (!ready) return szSuccess;
    SZCHECK(r->isSend ? szSocketSendSome(fd, &r->length, sizeof(r->length), &r->lengthMoved)
                      : szSocketRecvSome(fd, &r->length, sizeof(r->length), &r->lengthMoved));
    *moved = *moved || r->lengthMoved + r->moved[i] != before;
    if (r->lengthMoved < sizeof(r->length)) return szSuccess;
    if (!r->isSend) {
      r->size = r->length;
      r->sizeKnown = true;
      if (r->size > r->capacity)
        return szSetError(szInvalidUsage, "tcp: rank %d: message of %llu bytes from rank %d is larger "
                          "than the receive buffer (%zu bytes)", c->rank,
                          (unsigned long long)r->size, r->peer, r->capacity);
    }
  }
  if (!r->sizeKnown) return szSuccess;  // the length comes first, on connection 0
  uint64_t begin, end;
  pieceOf(r->size, c->nsocks, i, &begin, &end);
  if (r->moved[i] < end - begin) {
    if (!ready) return szSuccess;
    SZCHECK(moveRange(fd, r, begin, end, &r->moved[i]));
    *moved = *moved || r->lengthMoved + r->moved[i] != before;
  }
  *complete = r->moved[i] == end - begin;
  return szSuccess;
}

// Serves connection i of a stream: its share of each request in turn, as far as it goes.
// Returns false if the peer broke.
bool serveSocket(Comm* c, int p, Stream& s, int i, bool ready) {
  int fd = c->peers[p].fds[i];
  bool moved = false;
  for (Request* r : s.queue) {
    if (r->partDone[i]) continue;
    bool complete = false;
    szResult_t res = advance(c, r, fd, i, ready, &complete, &moved);
    if (res != szSuccess) {
      breakPeer(c, p, res, szGetLastError(nullptr));
      return false;
    }
    if (!complete) break;
    r->partDone[i] = 1;
    r->partsLeft--;
  }
  if (moved) s.lastProgress = szClock::now();
  while (!s.queue.empty() && s.queue.front()->partsLeft == 0) {
    s.queue.front()->result = szSuccess;
    s.queue.pop_front();
  }
  return true;
}

// One pass over the whole communicator; the caller holds c->mu.
szResult_t progress(Comm* c) {
  std::vector<int>& active = c->active;
  std::vector<pollfd>& fds = c->pollFds;
  active.clear();
  fds.clear();
  for (int p = 0; p < c->nranks; p++) {
    Peer& peer = c->peers[p];
    if (peer.broken != szSuccess || (peer.send.queue.empty() && peer.recv.queue.empty())) continue;
    active.push_back(p);
    short events = (peer.send.queue.empty() ? 0 : POLLOUT) | (peer.recv.queue.empty() ? 0 : POLLIN);
    for (int fd : peer.fds) fds.push_back({fd, events, 0});
  }
  if (active.empty()) return szSuccess;
  if (poll(fds.data(), fds.size(), 0) < 0 && errno != EINTR)
    return szSetError(szSystemError, "tcp: poll: %s", strerror(errno));
  auto now = szClock::now();
  auto limit = std::chrono::milliseconds(c->timeoutMs);
  for (size_t k = 0; k < active.size(); k++) {
    int p = active[k];
    Peer& peer = c->peers[p];
    bool ok = true;
    // Connection 0 first: a receiver needs the length from it before the other pieces.
    for (int i = 0; i < c->nsocks && ok; i++) {
      short rev = fds[k * c->nsocks + i].revents;
      bool failed = rev & (POLLERR | POLLHUP);
      ok = serveSocket(c, p, peer.send, i, failed || (rev & POLLOUT)) &&
           serveSocket(c, p, peer.recv, i, failed || (rev & POLLIN));
    }
    if (!ok) continue;
    for (Stream* s : {&peer.send, &peer.recv}) {
      if (!c->idleRequests && !s->queue.empty() && now - s->lastProgress > limit) {
        breakPeer(c, p, szTimeout,
                  "no progress " + std::string(s == &peer.send ? "sending to" : "receiving from") +
                      " rank " + std::to_string(p) + " for " + std::to_string(c->timeoutMs) + " ms");
        break;
      }
    }
  }
  return szSuccess;
}

szResult_t post(void* wireComm, int peer, bool isSend, const szWirePiece* pieces, int npieces,
                szWireRequest** request) {
  Comm* c = (Comm*)wireComm;
  const char* fn = isSend ? "tcp isend" : "tcp irecv";
  bool bad = c == nullptr || request == nullptr || peer < 0 || peer >= c->nranks || peer == c->rank ||
             pieces == nullptr || npieces < 1 || npieces > kSzWireMaxPieces;
  size_t bytes = 0;
  for (int k = 0; !bad && k < npieces; ++k) {
    bad = pieces[k].data == nullptr && pieces[k].bytes > 0;
    bytes += pieces[k].bytes;
  }
  if (bad) return szSetError(szInvalidArgument, "%s: bad argument (peer %d)", fn, peer);
  std::lock_guard<std::mutex> lock(c->mu);
  Peer& p = c->peers[peer];
  if (p.broken != szSuccess)
    return szSetError(p.broken, "%s: rank %d: connection to rank %d failed earlier: %s", fn, c->rank,
                      peer, p.why.c_str());
  Request* r = new Request;
  r->comm = c;
  r->peer = peer;
  r->isSend = isSend;
  std::copy(pieces, pieces + npieces, r->pieces);
  r->npieces = npieces;
  r->capacity = bytes;
  r->size = isSend ? bytes : 0;
  r->sizeKnown = isSend;
  r->length = r->size;
  r->moved.assign(c->nsocks, 0);
  r->partDone.assign(c->nsocks, 0);
  r->partsLeft = c->nsocks;
  Stream& s = isSend ? p.send : p.recv;
  if (s.queue.empty()) s.lastProgress = szClock::now();  // the timeout counts from here
  s.queue.push_back(r);
  c->live.insert(r);
  *request = asWireRequest(r);
  return szSuccess;
}

// Frees everything; returns how many requests had not finished.
size_t destroy(Comm* c, bool orderly) {
  size_t unfinished = 0;
  for (Request* r : c->live) {
    unfinished += r->result == szInProgress;
    delete r;
  }
  for (Peer& peer : c->peers) closeSockets(peer, orderly);
  delete c;
  return unfinished;
}

szResult_t tcpConnect(szBootstrap* b, const szWireConfig& config, void** wireComm) {
  if (b == nullptr || wireComm == nullptr)
    return szSetError(szInvalidArgument, "tcp connect: NULL argument");
  int nsocks = config.socketsPerPeer > 0 ? config.socketsPerPeer : (int)szParamNSocks();
  if (nsocks < 1 || nsocks > kMaxSockets)
    return szSetError(szInvalidArgument, "tcp connect: %d sockets per peer (SZ_NSOCKS): must be 1..%d",
                      nsocks, kMaxSockets);
  Comm* c = new Comm;
  c->rank = szBootstrapRank(b);
  c->nranks = szBootstrapNranks(b);
  c->nsocks = nsocks;
  c->timeoutMs = config.timeoutMs > 0 ? config.timeoutMs : szBootstrapTimeoutMs(b);
  c->idleRequests = config.idleRequests != 0;
  c->peers.resize(c->nranks);
  for (Peer& peer : c->peers) peer.fds.assign(nsocks, -1);
  const uint8_t* key = szBootstrapSessionKey(b);
  szDeadline deadline = szDeadlineAfterMs(c->timeoutMs);
  int listenFd = -1;
  int waiting = c->rank * nsocks;
  std::vector<Endpoint> eps(c->nranks);
  szResult_t res;
  memset(eps.data(), 0, eps.size() * sizeof(eps[0]));
  eps[c->rank].nsocks = nsocks;
  SZCHECKGOTO(szSocketLocalAddress(&eps[c->rank].addr), res, fail);
  SZCHECKGOTO(szSocketListen(&eps[c->rank].addr, &listenFd), res, fail);
  SZCHECKGOTO(szBootstrapAllGather(b, eps.data(), sizeof(eps[0])), res, fail);
  for (int p = 0; p < c->nranks; p++) {
    if (eps[p].nsocks != nsocks) {
      res = szSetError(szInvalidUsage, "tcp connect: rank %d uses %d sockets per peer, rank %d uses %d "
                       "(SZ_NSOCKS must agree)", c->rank, nsocks, p, eps[p].nsocks);
      goto fail;
    }
  }
  // The lower rank of each pair connects. A connection completes in the acceptor's backlog
  // before it calls accept, so connecting to every higher rank, then accepting every lower
  // one, cannot deadlock.
  for (int p = c->rank + 1; p < c->nranks; p++) {
    for (int i = 0; i < nsocks; i++) {
      int& fd = c->peers[p].fds[i];
      SZCHECKGOTO(szSocketConnect(eps[p].addr, deadline, &fd), res, fail);
      SZCHECKGOTO(szAuthConnect(fd, key, kPurpose, c->rank, p, i, deadline), res, fail);
    }
  }
  if (waiting > 0) {
    SZCHECKGOTO(szAcceptHellos(listenFd, sizeof(szAuthHello), deadline,
                               [&](int fd, const szAuthChallenge& challenge, const void* h) {
      szAuthHello hello;
      memcpy(&hello, h, sizeof(hello));
      if (!szAuthCheckHello(key, kPurpose, c->rank, challenge, hello) || hello.rank < 0 || hello.rank >= c->rank ||
          hello.index < 0 || hello.index >= nsocks) {
        INFO(SZ_NET, "tcp: rank %d dropped a connection with a bad greeting or proof", c->rank);
        return szHelloVerdict::kDrop;
      }
      // The first authenticated connection keeps its place: a second one is refused, never
      // swapped in.
      int& slot = c->peers[hello.rank].fds[hello.index];
      if (slot >= 0)
        WARN("tcp: rank %d: a second connection claims to be connection %d from rank %d; refused", c->rank,
             hello.index, hello.rank);
      if (szAuthSendVerdict(fd, key, kPurpose, challenge, hello, slot >= 0 ? szInvalidUsage : szSuccess) !=
              szSuccess || slot >= 0)
        return szHelloVerdict::kDrop;
      slot = fd;
      return --waiting == 0 ? szHelloVerdict::kDone : szHelloVerdict::kKeep;
    }), res, fail);
  }
  szSocketClose(&listenFd);
  if (config.linkGBps > 0)
    for (Peer& peer : c->peers)
      for (int fd : peer.fds)
        if (fd >= 0) SZCHECKGOTO(szSocketPace(fd, config.linkGBps * 1e9 / nsocks), res, fail);
  INFO(SZ_INIT | SZ_NET, "tcp: rank %d connected to %d peers, %d sockets each, link %g GB/s (0: not paced)", c->rank,
       c->nranks - 1, nsocks, config.linkGBps);
  *wireComm = c;
  return szSuccess;
fail:
  szSocketClose(&listenFd);
  destroy(c, false);
  return szSetError(res, "tcp connect: rank %d: %s", szBootstrapRank(b),
                    std::string(szGetLastError(nullptr)).c_str());
}

szResult_t tcpIsend(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  return post(wireComm, peer, true, pieces, npieces, request);
}

szResult_t tcpIrecv(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  return post(wireComm, peer, false, pieces, npieces, request);
}

szResult_t tcpFailPeer(void* wireComm, int peer, szResult_t code, const char* why) {
  Comm* c = (Comm*)wireComm;
  if (c == nullptr || peer < 0 || peer >= c->nranks || peer == c->rank)
    return szSetError(szInvalidArgument, "tcp fail peer: bad argument (peer %d)", peer);
  std::lock_guard<std::mutex> lock(c->mu);  // every request's memory is touched under it
  breakPeer(c, peer, code, why != nullptr ? why : "failed by its user");
  return szSuccess;
}

szResult_t tcpTest(szWireRequest* request, int* done, size_t* bytes) {
  if (request == nullptr || done == nullptr)
    return szSetError(szInvalidArgument, "tcp test: NULL argument");
  Request* r = asRequest(request);
  Comm* c = r->comm;
  std::lock_guard<std::mutex> lock(c->mu);
  if (r->result == szInProgress) SZCHECK(progress(c));
  *done = r->result != szInProgress;
  if (!*done) return szSuccess;
  szResult_t res = r->result;
  std::string error = std::move(r->error);
  if (bytes != nullptr) *bytes = r->size;
  c->live.erase(r);
  delete r;
  if (res != szSuccess) return szSetError(res, "%s", error.c_str());
  return szSuccess;
}

szResult_t tcpClose(void* wireComm) {
  if (wireComm == nullptr) return szSuccess;
  size_t unfinished = destroy((Comm*)wireComm, true);
  if (unfinished > 0)
    return szSetError(szInvalidUsage, "tcp close: %zu requests had not finished (use abort after an error)",
                      unfinished);
  return szSuccess;
}

szResult_t tcpAbort(void* wireComm) {
  if (wireComm != nullptr) destroy((Comm*)wireComm, false);
  return szSuccess;
}

}  // namespace

// Device buffers: 256 KiB slices (each a message), blocks on half the multiprocessors (src/comm.cc).
// name, needsGpu, deviceMemory, nodeLocal, sendsWaitForReceives, defaultSliceBytes, defaultMaxBlocks, defaultSlotsPerBlock, connect, connectPeers, channel, hostChannel, progress, isend, irecv, test, failPeer, close, abort
extern const szWire szWireTcp = {"tcp", 0, 0, 0, 0, 256 << 10, 0, 2, tcpConnect, nullptr, nullptr, nullptr, nullptr, tcpIsend, tcpIrecv, tcpTest, tcpFailPeer, tcpClose, tcpAbort};
