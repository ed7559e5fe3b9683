// The set of connections still in their handshake (see pending.h).
#include "base/pending.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/checks.h"

namespace {

// Accepted per service() call, so that greetings already in flight are read between bursts.
constexpr int kAcceptBurst = 16;
// How long accepting pauses when the descriptor table is full and nothing can be dropped.
constexpr int kExhaustedPauseMs = 10;

}  // namespace

szPendingSet::~szPendingSet() {
  for (Conn& c : conns_) close(c.fd);
}

void szPendingSet::dropOldest(const char* why) {
  INFO(SZ_NET, "dropped an unauthenticated connection: %s", why);
  close(conns_.front().fd);
  conns_.pop_front();
}

int szPendingSet::preparePoll(std::vector<pollfd>* fds, szDeadline deadline) {
  auto now = szClock::now();
  szDeadline wake = deadline;
  listenPolled_ = now >= pausedUntil_;
  if (listenPolled_) fds->push_back({listenFd_, POLLIN, 0});
  else wake = std::min(wake, pausedUntil_);
  for (const Conn& c : conns_) fds->push_back({c.fd, POLLIN, 0});
  polled_ = conns_.size();
  if (!conns_.empty()) wake = std::min(wake, conns_.front().since + std::chrono::milliseconds(kSzHandshakeMs));
  return szPollTimeoutMs(wake);
}

szResult_t szPendingSet::service(const pollfd* fds, const szOnHello& onHello, bool* done) {
  *done = false;
  bool listenReady = listenPolled_ && fds[0].revents != 0;
  const pollfd* connFds = fds + (listenPolled_ ? 1 : 0);
  // Greetings first: connFds lines up with conns_ only before anything is added or removed.
  std::vector<bool> gone(polled_, false);
  for (size_t i = 0; i < polled_ && !*done; i++) {
    Conn& c = conns_[i];
    if (connFds[i].revents == 0) continue;
    if (szSocketRecvSome(c.fd, c.hello.data(), helloBytes_, &c.got) != szSuccess) {
      INFO(SZ_NET, "dropped a connection that closed before its greeting");
      close(c.fd);
      gone[i] = true;
      continue;
    }
    if (c.got < helloBytes_) continue;
    szHelloVerdict verdict = onHello(c.fd, c.challenge, c.hello.data());
    if (verdict == szHelloVerdict::kDrop) close(c.fd);
    gone[i] = true;
    *done = verdict == szHelloVerdict::kDone;
  }
  size_t k = 0;
  for (size_t i = 0; i < conns_.size(); i++)
    if (i >= polled_ || !gone[i]) {
      if (k != i) conns_[k] = std::move(conns_[i]);
      k++;
    }
  conns_.resize(k);
  if (*done) return szSuccess;
  auto now = szClock::now();
  while (!conns_.empty() && now - conns_.front().since >= std::chrono::milliseconds(kSzHandshakeMs))
    dropOldest("no greeting within the handshake deadline");
  return listenReady ? acceptSome(now) : szSuccess;
}

szResult_t szPendingSet::acceptSome(szClock::time_point now) {
  auto minAge = std::chrono::milliseconds(kSzPendingMinAgeMs);
  for (int n = 0; n < kAcceptBurst; n++) {
    if (conns_.size() >= kSzPendingMax) {
      if (now - conns_.front().since < minAge) {  // everyone is young: wait rather than evict
        pausedUntil_ = conns_.front().since + minAge;
        return szSuccess;
      }
      dropOldest("too many connections in their handshake");
    }
    int fd = -1, exhausted = 0;
    SZCHECK(szSocketAccept(listenFd_, &fd, &exhausted));
    if (exhausted != 0) {
      if (!conns_.empty() && now - conns_.front().since >= minAge) {
        dropOldest(strerror(exhausted));
        continue;
      }
      INFO(SZ_NET, "accept: %s; pausing for %d ms", strerror(exhausted), kExhaustedPauseMs);
      pausedUntil_ = now + std::chrono::milliseconds(kExhaustedPauseMs);
      return szSuccess;
    }
    if (fd < 0) return szSuccess;
    Conn c;
    c.fd = fd;
    c.hello.assign(helloBytes_, 0);
    c.since = now;
    size_t sent = 0;
    // A challenge is a few bytes on a fresh socket: it leaves at once or the connection is
    // already dead.
    if (szAuthMakeChallenge(&c.challenge) != szSuccess ||
        szSocketSendSome(fd, &c.challenge, sizeof(c.challenge), &sent) != szSuccess || sent != sizeof(c.challenge)) {
      INFO(SZ_NET, "dropped a connection before its challenge: %s", szGetLastError(nullptr));
      close(fd);
      continue;
    }
    conns_.push_back(std::move(c));
  }
  return szSuccess;
}

szResult_t szAcceptHellos(int listenFd, size_t helloBytes, szDeadline deadline, const szOnHello& onHello) {
  szPendingSet pending(listenFd, helloBytes);
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    int timeout = pending.preparePoll(&fds, deadline);
    int n = poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) return szSetError(szSystemError, "poll (accept): %s", strerror(errno));
    if (n < 0) continue;
    bool done = false;
    SZCHECK(pending.service(fds.data(), onHello, &done));
    if (done) return szSuccess;
    if (szClock::now() >= deadline) return szSetError(szTimeout, "accept: timed out waiting for connections");
  }
}
