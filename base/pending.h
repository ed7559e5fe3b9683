// Connections that have not yet proven themselves: the acceptor's side of every handshake
// (rendezvous, bootstrap messages, the tcp wire). Each accepted connection is sent a challenge
// (auth.h) at once and must deliver its fixed-size greeting within kSzHandshakeMs; at most
// kSzPendingMax wait at once. When the set is full, the oldest is dropped to make room once it
// has waited kSzPendingMinAgeMs (a real rank answers in far less), so idle strangers cannot
// hold the listener or the process's file descriptors: 1100 idle connections cost a real
// rank about a second, not its init. A full descriptor table (EMFILE) drops the oldest too,
// or pauses accepting briefly, and is never an error.
#pragma once

#include <poll.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "base/auth.h"
#include "base/socket.h"

constexpr int kSzHandshakeMs = 2000;
constexpr size_t kSzPendingMax = 128;
constexpr int kSzPendingMinAgeMs = 100;

// What the owner does with a connection whose greeting it has read.
enum class szHelloVerdict {
  kDrop,  // not one of ours (bad proof, nonsense fields): close it and keep waiting
  kKeep,  // the owner now has the fd; keep waiting for more connections
  kDone,  // the owner has the fd (if it kept it) and needs no more connections
};
using szOnHello = std::function<szHelloVerdict(int fd, const szAuthChallenge& challenge, const void* hello)>;

class szPendingSet {
 public:
  szPendingSet(int listenFd, size_t helloBytes) : listenFd_(listenFd), helloBytes_(helloBytes) {}
  ~szPendingSet();
  szPendingSet(const szPendingSet&) = delete;
  szPendingSet& operator=(const szPendingSet&) = delete;

  // Appends what to poll (the listener, unless accepting is paused, and each pending
  // connection) and returns the poll timeout: until `deadline`, the next handshake deadline or
  // the end of a pause, whichever comes first.
  int preparePoll(std::vector<pollfd>* fds, szDeadline deadline);
  // After poll(), with `fds` at the entries preparePoll appended: reads greetings, hands each
  // complete one to onHello, drops the late, then accepts new connections. *done once onHello
  // said kDone. Errors: szSystemError (accept failed for a reason other than a full table).
  szResult_t service(const pollfd* fds, const szOnHello& onHello, bool* done);

 private:
  struct Conn {
    int fd;
    szAuthChallenge challenge;
    std::vector<uint8_t> hello;
    size_t got = 0;
    szClock::time_point since;
  };
  szResult_t acceptSome(szClock::time_point now);
  void dropOldest(const char* why);

  int listenFd_;
  size_t helloBytes_;
  std::deque<Conn> conns_;
  size_t polled_ = 0;  // pending connections preparePoll listed
  bool listenPolled_ = false;
  szClock::time_point pausedUntil_{};
};

// Accepts connections on `listenFd` until onHello says kDone (szSuccess) or the deadline
// (szTimeout); many at a time, so that a silent or slow stranger delays no one. Accepted
// sockets are tuned as in szSocketConnect.
szResult_t szAcceptHellos(int listenFd, size_t helloBytes, szDeadline deadline, const szOnHello& onHello);
