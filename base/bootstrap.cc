// Bootstrap: small point-to-point messages between ranks over TCP, and the collectives built
// on them (see bootstrap.h); the rendezvous that starts it is rendezvous.cc. Sockets: one
// connection per (sender, receiver) pair that has exchanged a message, opened by the sender on
// first use, authenticated with the session key (auth.h) and carrying only that direction.
//
// Threads share a bootstrap (lazy connections of two link kinds may exchange at once): one mutex
// guards its state, one message at a time goes out on each connection, and one thread at a
// time polls every inbound socket and the listener, with the mutex released; a thread waiting
// for a message waits for that poller's round to end (a condition variable), and one waiting on
// its own outgoing socket polls that socket itself meanwhile, so no waiter spins.
//
// Every structure below travels in native byte order (hosts of one cluster) and is zeroed
// before it is filled, so padding never leaks memory contents.
#include "base/bootstrap.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/auth.h"
#include "base/checks.h"
#include "base/pending.h"
#include "base/rendezvous.h"
#include "base/socket.h"

namespace {

constexpr uint32_t kMsgMagic = 0x535A4D53;  // "SZMS"
constexpr char kPurpose[] = "bootstrap";
// A message bigger than this kills its connection: the receiver allocates the announced size.
constexpr uint64_t kMaxMessageBytes = 64ull << 20;
// Tags below zero belong to the bootstrap's own collectives.
constexpr int kTagAllGather = -1;
constexpr int kTagBarrier = -2;

// Sender -> receiver, after the handshake: any number of [MsgHeader][payload].
struct MsgHeader {
  uint32_t magic;
  int32_t tag;
  uint64_t bytes;
};

// An authenticated connection a peer opened to this rank's listen socket, read as a stream of
// [MsgHeader][payload] [MsgHeader][payload] ...
struct InConn {
  int fd;
  int peer;
  MsgHeader header;
  std::vector<uint8_t> payload;
  size_t got = 0;  // bytes of the current piece (header or payload)
  bool inPayload = false;
};

struct Message {
  int tag;
  std::vector<uint8_t> data;
};

}  // namespace

struct szBootstrap {
  int rank = 0, nranks = 0, timeoutMs = 0;
  uint8_t sessionKey[kSzKeyBytes];
  int listenFd = -1;
  std::unique_ptr<szPendingSet> pending;  // incoming connections still in their handshake
  std::vector<szSocketAddress> peers;  // listen addresses, by rank
  std::vector<int> outFds;             // to each peer, opened on first send; -1 before
  std::vector<std::string> outError;   // why an outgoing connection broke ("" if it did not)
  std::list<InConn> inConns;
  std::vector<std::deque<Message>> inbox;  // arrived but not yet received, by sender
  std::vector<std::string> inError;        // why a sender's connection ended
  // Threads: `mu` guards the fields above, and only the poller (polling) reads or changes
  // pending and inConns (polling their fds with `mu` released); the others wait on `cv`, which
  // the poller notifies at the end of each round (rounds).
  std::mutex mu;
  std::condition_variable cv;
  bool polling = false;
  uint64_t rounds = 0;  // poll rounds finished
  std::unique_ptr<std::timed_mutex[]> sendMu;  // by peer: one message at a time on outFds[peer]
};

namespace {

// Reads what has arrived on `c`; complete messages go to the inbox. Returns false when the
// connection is finished with (closed by the peer, or broken), true to keep it.
bool readConn(szBootstrap* b, InConn& c) {
  for (;;) {
    void* dst = c.inPayload ? (void*)c.payload.data() : (void*)&c.header;
    size_t need = c.inPayload ? c.payload.size() : sizeof(c.header);
    if (c.got < need && szSocketRecvSome(c.fd, dst, need, &c.got) != szSuccess) {
      if (b->inError[c.peer].empty())
        b->inError[c.peer] = "rank " + std::to_string(c.peer) +
                             " closed its bootstrap connection: " + szGetLastError(nullptr);
      return false;
    }
    if (c.got < need) return true;
    c.got = 0;
    if (!c.inPayload) {
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

// A connection that finished its handshake: one of this communicator's ranks, with the key,
// and the only connection from that rank (a second one is refused and logged).
szHelloVerdict onHello(szBootstrap* b, int fd, const szAuthChallenge& challenge, const void* p) {
  szAuthHello hello;
  memcpy(&hello, p, sizeof(hello));
  int from = hello.rank;
  if (!szAuthCheckHello(b->sessionKey, kPurpose, b->rank, challenge, hello) || from < 0 || from >= b->nranks ||
      from == b->rank || hello.index != 0) {
    INFO(SZ_INIT | SZ_NET, "bootstrap: rank %d dropped a connection with a bad greeting or proof", b->rank);
    return szHelloVerdict::kDrop;
  }
  bool taken = std::any_of(b->inConns.begin(), b->inConns.end(), [from](const InConn& c) { return c.peer == from; });
  if (taken) WARN("bootstrap: rank %d: a second connection claims to come from rank %d; refused", b->rank, from);
  if (szAuthSendVerdict(fd, b->sessionKey, kPurpose, challenge, hello, taken ? szInvalidUsage : szSuccess) !=
          szSuccess || taken)
    return szHelloVerdict::kDrop;
  b->inConns.push_back({});
  b->inConns.back().fd = fd;
  b->inConns.back().peer = from;
  return szHelloVerdict::kKeep;
}

// Waits until something happens on the listen socket, an incoming connection, or `waitFd`
// (for `waitEvents`), or until the deadline, and takes in what arrived. Senders call it too,
// so that two ranks sending to each other never wait on each other's full buffers. With `lock`
// (b->mu) held; it is released while this thread polls. Where another thread polls, this one
// waits for the end of its round (or polls its own `waitFd` briefly), and its caller looks again.
szResult_t progress(szBootstrap* b, std::unique_lock<std::mutex>& lock, szDeadline deadline, int waitFd,
                    short waitEvents) {
  if (b->polling) {
    if (waitFd >= 0) {  // this thread's own fd (sendMu): poll it beside the poller, briefly
      pollfd one{waitFd, waitEvents, 0};
      const int ms = std::min(szPollTimeoutMs(deadline), 10);
      lock.unlock();
      int n = poll(&one, 1, ms);
      const int err = errno;
      lock.lock();
      if (n < 0 && err != EINTR) return szSetError(szSystemError, "bootstrap: poll: %s", strerror(err));
      return szSuccess;
    }
    const uint64_t round = b->rounds;  // the poller polls every inbound socket: wait for its round
    b->cv.wait_until(lock, deadline, [&] { return b->rounds != round; });
    return szSuccess;
  }
  b->polling = true;
  struct Done {  // however this ends: the next waiter may poll
    szBootstrap* b;
    ~Done() {
      b->polling = false;
      b->rounds++;
      b->cv.notify_all();
    }
  } done{b};
  std::vector<pollfd> fds;
  int timeout = b->pending->preparePoll(&fds, deadline);
  size_t first = fds.size();
  for (const InConn& c : b->inConns) fds.push_back({c.fd, POLLIN, 0});
  if (waitFd >= 0) fds.push_back({waitFd, waitEvents, 0});
  lock.unlock();
  int n = poll(fds.data(), fds.size(), timeout);
  const int err = errno;
  lock.lock();
  if (n < 0 && err != EINTR) return szSetError(szSystemError, "bootstrap: poll: %s", strerror(err));
  if (n < 0) return szSuccess;
  size_t i = first;
  for (auto it = b->inConns.begin(); it != b->inConns.end(); i++) {
    if (fds[i].revents != 0 && !readConn(b, *it)) {
      close(it->fd);
      it = b->inConns.erase(it);
    } else {
      ++it;
    }
  }
  bool served = false;
  return b->pending->service(fds.data(), [b](int fd, const szAuthChallenge& c, const void* h) { return onHello(b, fd, c, h); },
                             &served);
}

// Sends all of `data` on `fd`, taking in incoming messages while the socket is full.
szResult_t sendAll(szBootstrap* b, std::unique_lock<std::mutex>& lock, int fd, const void* data, size_t bytes,
                   szDeadline deadline) {
  size_t offset = 0;
  for (;;) {
    SZCHECK(szSocketSendSome(fd, data, bytes, &offset));
    if (offset == bytes) return szSuccess;
    if (szClock::now() >= deadline) return szSetError(szTimeout, "bootstrap: send timed out");
    SZCHECK(progress(b, lock, deadline, fd, POLLOUT));
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
  const szDeadline deadline = szDeadlineAfterMs(b->timeoutMs);
  // outFds[peer] is this thread's until the message is out; another thread's message to the
  // peer goes first, within this one's deadline.
  std::unique_lock<std::timed_mutex> one(b->sendMu[peer], std::defer_lock);
  if (!one.try_lock_until(deadline))
    return szSetError(szTimeout, "bootstrap: rank %d: a send to rank %d waited %d ms behind another thread's", b->rank,
                      peer, b->timeoutMs);
  std::unique_lock<std::mutex> lock(b->mu);
  if (!b->outError[peer].empty())
    return szSetError(szRemoteError, "bootstrap: rank %d: the connection to rank %d broke earlier: %s",
                      b->rank, peer, b->outError[peer].c_str());
  szResult_t res = szSuccess;
  int& fd = b->outFds[peer];
  MsgHeader header;
  memset(&header, 0, sizeof(header));
  header.magic = kMsgMagic;
  header.tag = tag;
  header.bytes = bytes;
  if (fd < 0) {
    auto serveWhileWaiting = [b, &lock](int waitFd, short events, szDeadline d) {
      return progress(b, lock, d, waitFd, events);
    };
    lock.unlock();  // only this thread touches fd (sendMu)
    res = szSocketConnect(b->peers[peer], deadline, &fd);
    lock.lock();
    SZCHECKGOTO(res, res, fail);
    SZCHECKGOTO(szAuthConnect(fd, b->sessionKey, kPurpose, b->rank, peer, 0, deadline, serveWhileWaiting), res, fail);
  }
  SZCHECKGOTO(sendAll(b, lock, fd, &header, sizeof(header), deadline), res, fail);
  SZCHECKGOTO(sendAll(b, lock, fd, data, bytes, deadline), res, fail);
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
  std::unique_lock<std::mutex> lock(b->mu);
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
    SZCHECK(progress(b, lock, deadline, -1, 0));
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

szResult_t szBootstrapGetUniqueId(szUniqueId* id) { return szRendezvousNewId(id); }

szResult_t szBootstrapInit(const szUniqueId& id, int rank, int nranks, int timeoutMs,
                           szBootstrap** bootstrap) {
  if (bootstrap == nullptr || nranks < 1 || nranks > kSzMaxRanks || rank < 0 || rank >= nranks || timeoutMs <= 0)
    return szSetError(szInvalidArgument, "bootstrap: bad argument (rank %d of %d, 1 to %d ranks, timeout %d ms)",
                      rank, nranks, kSzMaxRanks, timeoutMs);
  szDeadline deadline = szDeadlineAfterMs(timeoutMs);
  szBootstrap* b = new szBootstrap;
  b->rank = rank;
  b->nranks = nranks;
  b->timeoutMs = timeoutMs;
  b->outFds.assign(nranks, -1);
  b->outError.resize(nranks);
  b->inbox.resize(nranks);
  b->inError.resize(nranks);
  b->sendMu.reset(new std::timed_mutex[size_t(nranks)]);
  szSocketAddress myListen;
  szResult_t res;
  SZCHECKGOTO(szSocketLocalAddress(&myListen), res, fail);
  SZCHECKGOTO(szSocketListen(&myListen, &b->listenFd), res, fail);
  b->pending = std::make_unique<szPendingSet>(b->listenFd, sizeof(szAuthHello));
  res = szRendezvousJoin(id, rank, nranks, myListen, deadline, &b->peers, b->sessionKey);
  if (res == szTimeout || res == szRemoteError)
    res = szSetError(res, "bootstrap: rank %d of %d: rendezvous failed after %d ms: %s", rank, nranks, timeoutMs,
                     std::string(szGetLastError(nullptr)).c_str());
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

szResult_t szBootstrapExchange(szBootstrap* b, const int* peers, int npeers, int tag, const void* mine, void* theirs,
                               size_t bytes) {
  for (int i = 0; i < npeers; ++i)
    SZCHECK(szBootstrapSend(b, peers[i], tag, static_cast<const uint8_t*>(mine) + size_t(i) * bytes, bytes));
  for (int i = 0; i < npeers; ++i)
    SZCHECK(szBootstrapRecv(b, peers[i], tag, static_cast<uint8_t*>(theirs) + size_t(i) * bytes, bytes));
  return szSuccess;
}

const uint8_t* szBootstrapSessionKey(const szBootstrap* b) { return b->sessionKey; }
int szBootstrapRank(const szBootstrap* b) { return b->rank; }
int szBootstrapNranks(const szBootstrap* b) { return b->nranks; }
int szBootstrapTimeoutMs(const szBootstrap* b) { return b->timeoutMs; }

szResult_t szBootstrapClose(szBootstrap* b) {
  if (b == nullptr) return szSuccess;
  for (int& fd : b->outFds) szSocketClose(&fd);
  for (InConn& c : b->inConns) close(c.fd);
  b->pending.reset();
  szSocketClose(&b->listenFd);
  delete b;
  return szSuccess;
}
