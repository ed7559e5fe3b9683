// The secure-defaults issue, item 2, as an attack: a relay between a rank and the root of its
// unique id forwards every byte both ways and changes one byte the root sends: in the address
// table that follows the root's reply (a listen port: a redirect), in the reply's wrapped session
// key, or in its status. Every change is refused with szRemoteError naming the failed proof; the
// same relay changing nothing lets the rank in (so the relay itself works).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>

#include "base/bootstrap.h"
#include "intruder.h"
#include "splitzip.h"

using namespace intruder;

namespace {

constexpr int kTimeoutMs = 5000;
// The root's stream to a rank (base/rendezvous.cc): the challenge (auth.h), then the 76-byte
// reply (magic, status, nranks, wrapped key, mac), then the address table.
constexpr size_t kChallengeBytes = sizeof(szAuthChallenge);
constexpr size_t kReplyBytes = 76;

// Forwards one connection accepted on `listenFd` to `root` and back until either side closes;
// the byte at offset `flipAt` of the root's stream (-1: none) is inverted on its way.
void relay(int listenFd, szSocketAddress root, long flipAt) {
  pollfd lp = {listenFd, POLLIN, 0};
  if (poll(&lp, 1, kTimeoutMs) <= 0) return;
  int rankFd = accept(listenFd, nullptr, nullptr), rootFd = -1;
  if (rankFd < 0) return;
  if (szSocketConnect(root, szDeadlineAfterMs(kTimeoutMs), &rootFd) != szSuccess) {
    close(rankFd);
    return;
  }
  long fromRoot = 0;
  for (;;) {
    pollfd p[2] = {{rankFd, POLLIN, 0}, {rootFd, POLLIN, 0}};
    if (poll(p, 2, kTimeoutMs) <= 0) break;
    uint8_t buf[4096];
    bool closed = false;
    for (int i = 0; i < 2 && !closed; i++) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        closed = true;
        break;
      }
      if (i == 1) {
        if (flipAt >= fromRoot && flipAt < fromRoot + n) buf[flipAt - fromRoot] ^= 0xFF;
        fromRoot += n;
      }
      if (send(p[1 - i].fd, buf, size_t(n), MSG_NOSIGNAL) != n) closed = true;
    }
    if (closed) break;
  }
  close(rankFd);
  close(rootFd);
}

// Runs rank 0 of 1 through a relay that flips byte `flipAt` of the root's stream; returns the
// rank's result and, through `error`, its message.
szResult_t joinThroughRelay(long flipAt, std::string* error) {
  unsetenv("SZ_COMM_ID");
  szUniqueId id;
  EXPECT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  const szSocketAddress root = rootOf(id);
  szSocketAddress relayAddr = loopback(0);
  int listenFd = -1;
  EXPECT_EQ(szSocketListen(&relayAddr, &listenFd), szSuccess) << szGetLastError(nullptr);
  szUniqueId relayed = id;  // the same key; the root's address is now the relay's
  memcpy(relayed.internal + kIdRootAt, &relayAddr, sizeof(relayAddr));
  std::thread middle(relay, listenFd, root, flipAt);
  szBootstrap* b = nullptr;
  szResult_t res = szBootstrapInit(relayed, 0, 1, kTimeoutMs, &b);
  *error = res == szSuccess ? "" : szGetLastError(nullptr);
  if (b != nullptr) szBootstrapClose(b);
  middle.join();
  close(listenFd);
  return res;
}

TEST(RelayAttack, AnUnchangedRelayLetsTheRankIn) {
  std::string error;
  EXPECT_EQ(joinThroughRelay(-1, &error), szSuccess) << error;
}

TEST(RelayAttack, AnyByteChangedInTheRootsReplyOrTableIsRefused) {
  struct Case {
    const char* what;
    long offset;
  } cases[] = {
      {"the table's listen port (a redirect)", long(kChallengeBytes + kReplyBytes + 2)},
      {"the table's listen address", long(kChallengeBytes + kReplyBytes + 5)},
      {"the reply's wrapped session key", long(kChallengeBytes + 12 + 3)},
      {"the reply's nranks", long(kChallengeBytes + 8)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string error;
    EXPECT_EQ(joinThroughRelay(c.offset, &error), szRemoteError) << error;
    EXPECT_NE(error.find("not this communicator's root"), std::string::npos) << error;
  }
}

}  // namespace
