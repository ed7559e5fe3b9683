// Issue 11, items 2 and 3, as attacks on the rendezvous: an intruder holding the id key (the
// derivable one of SZ_COMM_ID without SZ_COMM_SECRET) greets the root with hostile rank counts
// (1e8, 2^31-1, 0, negative, rank out of range): every such greeting is dropped unanswered,
// the process's peak RSS grows by less than 64 MiB, and the real ranks still meet; a greeting
// that disagrees with the ranks' nranks fails the rendezvous with szInvalidUsage. Then 1100
// idle connections at the rendezvous port of a rank-0 process limited to 1024 descriptors
// (a forked child, so this binary keeps its own limit): both ranks still initialize and
// transfer, within a bound of time.
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>

#include "intruder.h"
#include "splitzip.h"
#include "base/bootstrap.h"

using namespace intruder;

namespace {

constexpr int kTimeoutMs = 10000;

// The rank's greeting to the root (base/rendezvous.cc), rebuilt by the intruder: it has read the
// source and holds the id key.
struct RootHello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t nranks;
  szSocketAddress listen;
  uint8_t nonce[kSzNonceBytes];
  uint8_t mac[kSzMacBytes];
};

// Greets the root at `root` as rank `rank` of `nranks` with a valid proof under `key`, in
// rendezvous version `version` (3: this build's); returns the connection (-1 if the root never
// challenged).
int greet(const szSocketAddress& root, const std::vector<uint8_t>& key, int32_t rank, int32_t nranks,
          uint32_t version = 3) {
  szDeadline deadline = szDeadlineAfterMs(3000);
  int fd = -1;
  if (szSocketConnect(root, deadline, &fd) != szSuccess) return -1;
  szAuthChallenge c;
  if (szAuthRecvChallenge(fd, deadline, szAuthPollWait, &c) != szSuccess) {
    close(fd);
    return -1;
  }
  RootHello h;
  memset(&h, 0, sizeof(h));
  h.magic = 0x535A5254;
  h.version = version;
  h.rank = rank;
  h.nranks = nranks;
  h.listen = loopback(1);
  static const char kLabel[] = "splitzip rendezvous hello";
  szAuthMac(key.data(), key.size(), {{kLabel, sizeof(kLabel)}, {c.nonce, kSzNonceBytes}, {&h, offsetof(RootHello, mac)}},
            h.mac);
  EXPECT_EQ(szSocketSendAll(fd, &h, sizeof(h), deadline), szSuccess);
  return fd;
}

// What the root sends back within `ms`: the bytes until it closes (0 bytes: dropped unanswered).
size_t answerBytes(int fd, int ms) {
  szDeadline deadline = szDeadlineAfterMs(ms);
  uint8_t buf[4096];
  size_t total = 0;
  for (;;) {
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, szPollTimeoutMs(deadline)) <= 0) return total;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return total;
    total += size_t(n);
  }
}

long maxRssKb() {
  rusage ru = {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

TEST(RendezvousAttack, HostileRankCountsAreDroppedAndCostNoMemory) {
  // A root that knows nranks (rank 0 of an SZ_COMM_ID communicator) and a detached one (from
  // szGetUniqueId) that learns it from the first authenticated greeting.
  for (bool commId : {true, false}) {
    SCOPED_TRACE(commId ? "SZ_COMM_ID root" : "detached root");
    CommIdEnv env;
    if (!commId) unsetenv("SZ_COMM_ID");
    szUniqueId id;
    ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
    std::vector<uint8_t> key = idKeyOf(id);
    const szSocketAddress root = rootOf(id);
    long before = maxRssKb();
    std::atomic<bool> attacked{false};
    const int32_t hostile[][2] = {{0, 100000000}, {1, INT_MAX}, {0, 65537}, {0, 0}, {0, -5}, {-1, 2}, {5, 2}};
    runRanks(2, [&](int rank) {
      if (rank == 1) {
        if (commId) std::this_thread::sleep_for(std::chrono::milliseconds(20));  // rank 0 starts the root
        for (const auto& h : hostile) {
          int fd = greet(root, key, h[0], h[1]);
          EXPECT_GE(fd, 0) << "rank " << h[0] << " of " << h[1] << ": the root did not challenge";
          if (fd < 0) continue;
          EXPECT_EQ(answerBytes(fd, 3000), 0u) << "rank " << h[0] << " of " << h[1] << " was answered";
          close(fd);
        }
        attacked = true;
      }
      auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (rank == 0 && !commId && !attacked && std::chrono::steady_clock::now() < giveUp)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, rank, 2, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      szBootstrapClose(b);
    });
    long grownKb = maxRssKb() - before;
    EXPECT_LT(grownKb, 64 * 1024) << "peak RSS grew by " << grownKb / 1024 << " MiB";
  }
}

// A rank of rendezvous version 2 (before the reply's MAC covered the address table) learns that
// the versions differ, with the root's version, and nothing else: no table, no key.
TEST(RendezvousAttack, AGreetingOfAnotherVersionIsAnsweredWithTheRootsVersionOnly) {
  CommIdEnv env;
  unsetenv("SZ_COMM_ID");
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  const szSocketAddress root = rootOf(id);
  int fd = greet(root, idKeyOf(id), 0, 1, 2);
  ASSERT_GE(fd, 0);
  struct {
    uint32_t magic;
    int32_t status, nranks;
    uint8_t rest[64];
  } reply;
  static_assert(sizeof(reply) == 76, "RootReply's size");
  ASSERT_EQ(szSocketRecvAll(fd, &reply, sizeof(reply), szDeadlineAfterMs(3000)), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(reply.magic, 0x535A5254u);
  EXPECT_EQ(reply.status, -0x5652);  // kStatusOtherVersion
  EXPECT_EQ(reply.nranks, 3);        // the root's version
  for (uint8_t b : reply.rest) ASSERT_EQ(b, 0);  // no key, no proof
  EXPECT_EQ(answerBytes(fd, 1000), 0u);  // no table
  close(fd);
  // The root serves on: the real rank still meets it.
  szBootstrap* b = nullptr;
  ASSERT_EQ(szBootstrapInit(id, 0, 1, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
  szBootstrapClose(b);
}

// Rank 0 of an SZ_COMM_ID communicator serves the rendezvous; its peer is of rendezvous version
// 2. Rank 0 waits out the timeout and then learns why, not only that the peer never arrived.
TEST(RendezvousAttack, RanksThatWaitedLearnThatAnotherVersionTriedToJoin) {
  CommIdEnv env;
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  const szSocketAddress root = rootOf(id);
  std::thread old([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // rank 0 starts the root
    int fd = greet(root, idKeyOf(id), 1, 2, 2);
    EXPECT_GE(fd, 0);
    if (fd >= 0) close(fd);
  });
  szBootstrap* b = nullptr;
  EXPECT_EQ(szBootstrapInit(id, 0, 2, 1500, &b), szInvalidUsage);
  std::string error = szGetLastError(nullptr);
  EXPECT_NE(error.find("a rank of rendezvous version 2 tried to join (this rank: version 3)"), std::string::npos)
      << error;
  old.join();
}

// An intruder that knows the root's address (SZ_COMM_ID) but not the id's key (the ranks share
// SZ_COMM_SECRET) greets the root as rank 1 before the real rank 1: with a key derived without
// the secret, a guessed one or an empty one. Every greeting is dropped unanswered (no table, no
// session key), and the real rank 1 then takes its place: the ranks meet and exchange.
TEST(RendezvousAttack, AnIntruderWithoutTheKeyCannotTakeARank) {
  CommIdEnv env("the ranks' secret");
  unsetenv("SZ_COMM_SECRET");  // the key SZ_COMM_ID alone gives (an id from SZ_COMM_ID starts no root)
  szUniqueId guess;
  ASSERT_EQ(szBootstrapGetUniqueId(&guess), szSuccess) << szGetLastError(nullptr);
  const std::vector<uint8_t> addressOnlyKey = idKeyOf(guess);
  setenv("SZ_COMM_SECRET", "the ranks' secret", 1);
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  ASSERT_NE(idKeyOf(id), addressOnlyKey);  // the secret changes the key
  const szSocketAddress root = rootOf(id);
  std::vector<uint8_t> guessed = idKeyOf(id);
  guessed[0] ^= 1;
  std::atomic<bool> attacked{false};
  std::string got;
  runRanks(2, [&](int rank) {
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 starts the root
      for (const std::vector<uint8_t>& key : {addressOnlyKey, guessed, std::vector<uint8_t>(kSzKeyBytes, 0)}) {
        int fd = greet(root, key, 1, 2);
        EXPECT_GE(fd, 0) << "the root did not challenge";
        if (fd < 0) continue;
        EXPECT_EQ(answerBytes(fd, 2000), 0u) << "a greeting without the key was answered";
        close(fd);
      }
      attacked = true;
    }
    while (rank == 1 && !attacked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    szBootstrap* b = nullptr;
    ASSERT_EQ(szBootstrapInit(id, rank, 2, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
    char text[5] = {};
    if (rank == 1) EXPECT_EQ(szBootstrapSend(b, 0, 1, "real", 4), szSuccess) << szGetLastError(nullptr);
    else EXPECT_EQ(szBootstrapRecv(b, 1, 1, text, 4), szSuccess) << szGetLastError(nullptr);
    if (rank == 0) got = text;
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
    szBootstrapClose(b);
  });
  EXPECT_EQ(got, "real");
}

TEST(RendezvousAttack, DisagreeingGreetingFailsTheRendezvous) {
  CommIdEnv env;
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  const szSocketAddress root = rootOf(id);
  szResult_t rank0 = szSuccess;
  size_t answered = 0;
  runRanks(2, [&](int rank) {
    if (rank == 0) {
      szBootstrap* b = nullptr;
      rank0 = szBootstrapInit(id, 0, 2, kTimeoutMs, &b);
      szBootstrapClose(b);
      return;
    }
    // After rank 0's own greeting (the root fails the ranks that have arrived; one arriving
    // after the verdict would wait for its timeout instead).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int fd = greet(root, idKeyOf(id), 1, 3);  // the communicator has 2 ranks
    ASSERT_GE(fd, 0);
    answered = answerBytes(fd, 5000);
    close(fd);
  });
  EXPECT_EQ(rank0, szInvalidUsage) << szGetLastError(nullptr);
  EXPECT_GT(answered, 0u) << "the disagreeing rank was not told";
}

// In the child: rank 0 (root) and rank 1 as threads under a 1024-descriptor limit; rank 1 starts
// once the parent's idle connections are in. Exit status 0: both initialized and transferred.
[[noreturn]] void childRanks(int go) {
  rlimit nofile = {1024, 1024};
  if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) _exit(10);
  std::atomic<int> failures{0};
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; rank++)
    ranks.emplace_back([&, rank] {
      if (rank == 1) {
        char c;
        if (read(go, &c, 1) != 1) failures++;
      }
      szUniqueId id;
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      cfg.timeoutMs = kTimeoutMs;
      szComm_t comm = nullptr;
      if (szGetUniqueId(&id) != szSuccess || szCommInitRankConfig(&comm, 2, id, rank, &cfg) != szSuccess) {
        fprintf(stderr, "rank %d: init: %s\n", rank, szGetLastError(nullptr));
        failures++;
        return;
      }
      std::vector<uint16_t> buf(1 << 16, uint16_t(rank == 0 ? 0x3F80 : 0));
      szResult_t res = rank == 0 ? szSend(buf.data(), buf.size(), szBfloat16, 1, comm, nullptr)
                                 : szRecv(buf.data(), buf.size(), szBfloat16, 0, comm, nullptr);
      if (res != szSuccess || buf[buf.size() - 1] != 0x3F80) failures++;
      szCommDestroy(comm);
    });
  for (std::thread& t : ranks) t.join();
  _exit(failures == 0 ? 0 : 1);
}

TEST(RendezvousAttack, IdleConnectionsDoNotStarveRanksAt1024Descriptors) {
  constexpr int kIdle = 1100;
  CommIdEnv env;
  rlimit mine = {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &mine), 0);
  if (mine.rlim_cur < kIdle + 64) {  // the intruder needs its own descriptors: raise the soft limit
    mine.rlim_cur = std::min<rlim_t>(mine.rlim_max, kIdle + 256);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &mine), 0);
  }
  ASSERT_GE(mine.rlim_cur, rlim_t(kIdle + 64));
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  fflush(stdout);
  fflush(stderr);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipeFds[1]);
    childRanks(pipeFds[0]);
  }
  close(pipeFds[0]);
  szSocketAddress root;
  ASSERT_EQ(szSocketParseAddress(env.address.c_str(), &root), szSuccess);
  std::vector<int> idle;
  szDeadline deadline = szDeadlineAfterMs(10000);
  for (int i = 0; i < kIdle; i++) {
    int fd = -1;
    if (szSocketConnect(root, deadline, &fd) != szSuccess) break;
    idle.push_back(fd);
  }
  EXPECT_EQ(idle.size(), size_t(kIdle)) << szGetLastError(nullptr);
  ASSERT_EQ(write(pipeFds[1], "g", 1), 1);
  close(pipeFds[1]);
  int status = -1;
  auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > giveUp) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int fd : idle) close(fd);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_LT(seconds, 15.0);
  std::cout << "[          ] " << idle.size() << " idle connections: both ranks done in " << seconds << " s\n";
}

}  // namespace
