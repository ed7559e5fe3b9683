// The bootstrap, with ranks as threads of this process (once as two processes): all-gathers of
// 2, 3 and 5 ranks, tagged messages received out of order, size mismatches, a peer that left,
// strangers at the rendezvous, the SZ_COMM_ID rendezvous, disagreeing and missing ranks, and
// two communicators at once.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/auth.h"
#include "base/bootstrap.h"
#include "base/socket.h"
#include "intruder.h"

namespace {

using intruder::CommIdEnv;
using intruder::freePort;
using intruder::runRanks;

constexpr int kTimeoutMs = 10000;

szBootstrap* init(const szUniqueId& id, int rank, int nranks, int timeoutMs = kTimeoutMs) {
  szBootstrap* b = nullptr;
  EXPECT_EQ(szBootstrapInit(id, rank, nranks, timeoutMs, &b), szSuccess)
      << "rank " << rank << ": " << szGetLastError(nullptr);
  return b;
}

szUniqueId newId() {
  szUniqueId id;
  EXPECT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  return id;
}

uint8_t pattern(int rank, size_t i, int salt = 0) { return (uint8_t)(rank * 131 + i * 7 + salt * 29 + 1); }

// Fills a `bytes`-per-rank all-gather buffer with this rank's slice, gathers, checks every slice.
void allGatherAndCheck(szBootstrap* b, size_t bytes, int salt) {
  int rank = szBootstrapRank(b), n = szBootstrapNranks(b);
  std::vector<uint8_t> data(n * bytes, 0);
  for (size_t i = 0; i < bytes; i++) data[rank * bytes + i] = pattern(rank, i, salt);
  ASSERT_EQ(szBootstrapAllGather(b, data.data(), bytes), szSuccess) << szGetLastError(nullptr);
  for (int r = 0; r < n; r++)
    for (size_t i = 0; i < bytes; i++)
      ASSERT_EQ(data[r * bytes + i], pattern(r, i, salt)) << "rank " << rank << " slice " << r << " byte " << i;
}


class BootstrapAllGather : public testing::TestWithParam<int> {};

TEST_P(BootstrapAllGather, EveryRankGetsEverySlice) {
  int n = GetParam();
  szUniqueId id = newId();
  runRanks(n, [&](int rank) {
    szBootstrap* b = init(id, rank, n);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(szBootstrapRank(b), rank);
    EXPECT_EQ(szBootstrapNranks(b), n);
    EXPECT_EQ(szBootstrapTimeoutMs(b), kTimeoutMs);
    allGatherAndCheck(b, 1, 0);
    allGatherAndCheck(b, 1000, 1);
    allGatherAndCheck(b, 1 << 20, 2);  // larger than socket buffers: senders must keep receiving
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(szBootstrapClose(b), szSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, BootstrapAllGather, testing::Values(1, 2, 3, 5));

// As NCCL_SOCKET_IFNAME: a name that matches no interface is an error, not a silent fallback.
TEST(Bootstrap, UnknownSocketInterfaceIsAnError) {
  const char* old = getenv("SZ_SOCKET_IFNAME");
  std::string saved = old ? old : "";
  setenv("SZ_SOCKET_IFNAME", "nosuchif0", 1);
  szUniqueId id;
  EXPECT_EQ(szBootstrapGetUniqueId(&id), szInvalidArgument);
  EXPECT_NE(std::string(szGetLastError(nullptr)).find("nosuchif0"), std::string::npos);
  if (old) setenv("SZ_SOCKET_IFNAME", saved.c_str(), 1);
  else unsetenv("SZ_SOCKET_IFNAME");
}

// Every rank gets the same session key; it is not in the id, and two rendezvous of one id
// (SZ_COMM_ID) give two different keys.
TEST(Bootstrap, SessionKeyIsSharedFreshAndNotInTheId) {
  szUniqueId a = newId(), c = newId();
  EXPECT_NE(memcmp(&a, &c, sizeof(a)), 0);
  auto keysOf = [](const szUniqueId& id) {
    std::vector<std::vector<uint8_t>> keys(2);
    runRanks(2, [&](int rank) {
      szBootstrap* b = init(id, rank, 2);
      ASSERT_NE(b, nullptr);
      keys[rank].assign(szBootstrapSessionKey(b), szBootstrapSessionKey(b) + kSzKeyBytes);
      szBootstrapClose(b);
    });
    return keys;
  };
  auto keys = keysOf(a);
  EXPECT_EQ(keys[0], keys[1]);
  EXPECT_EQ(std::search(a.internal, a.internal + sizeof(a.internal), keys[0].begin(), keys[0].begin() + 8),
            a.internal + sizeof(a.internal));
  CommIdEnv env;
  szUniqueId fromEnv = newId();
  auto first = keysOf(fromEnv), second = keysOf(fromEnv);
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(second[0], second[1]);
  EXPECT_NE(first[0], second[0]);
}

TEST(Bootstrap, TaggedMessagesOutOfOrder) {
  szUniqueId id = newId();
  const std::vector<size_t> sizes = {0, 3, 4 << 20};  // by tag 10, 11, 12
  runRanks(3, [&](int rank) {
    szBootstrap* b = init(id, rank, 3);
    ASSERT_NE(b, nullptr);
    if (rank > 0) {
      for (int t = 0; t < 3; t++) {
        std::vector<uint8_t> msg(sizes[t]);
        for (size_t i = 0; i < msg.size(); i++) msg[i] = pattern(rank, i, t);
        EXPECT_EQ(szBootstrapSend(b, 0, 10 + t, msg.data(), msg.size()), szSuccess) << szGetLastError(nullptr);
      }
      // Two messages with one tag arrive in order.
      EXPECT_EQ(szBootstrapSend(b, 0, 20, "first", 5), szSuccess);
      EXPECT_EQ(szBootstrapSend(b, 0, 20, "second", 6), szSuccess);
    } else {
      char text[8] = {};
      EXPECT_EQ(szBootstrapRecv(b, 2, 20, text, 5), szSuccess) << szGetLastError(nullptr);
      EXPECT_STREQ(text, "first");
      for (int peer : {2, 1}) {
        for (int t : {2, 0, 1}) {
          std::vector<uint8_t> msg(sizes[t]);
          ASSERT_EQ(szBootstrapRecv(b, peer, 10 + t, msg.data(), msg.size()), szSuccess)
              << szGetLastError(nullptr);
          for (size_t i = 0; i < msg.size(); i++) ASSERT_EQ(msg[i], pattern(peer, i, t));
        }
      }
      EXPECT_EQ(szBootstrapRecv(b, 2, 20, text, 6), szSuccess) << szGetLastError(nullptr);
      EXPECT_STREQ(text, "second");
      EXPECT_EQ(szBootstrapRecv(b, 1, 20, text, 5), szSuccess);
      EXPECT_EQ(szBootstrapRecv(b, 1, 20, text, 6), szSuccess);
    }
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess) << szGetLastError(nullptr);
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, LargeMessagesBothWaysAtOnce) {
  szUniqueId id = newId();
  const size_t bytes = 16 << 20;  // far more than the socket buffers hold
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2);
    ASSERT_NE(b, nullptr);
    std::vector<uint8_t> out(bytes), in(bytes);
    for (size_t i = 0; i < bytes; i++) out[i] = pattern(rank, i);
    EXPECT_EQ(szBootstrapSend(b, 1 - rank, 1, out.data(), bytes), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(szBootstrapRecv(b, 1 - rank, 1, in.data(), bytes), szSuccess) << szGetLastError(nullptr);
    for (size_t i = 0; i < bytes; i++) ASSERT_EQ(in[i], pattern(1 - rank, i));
    szBootstrapBarrier(b);
    szBootstrapClose(b);
  });
}

// Lazy connections' exchange (szBootstrapExchange): each rank names its peers in its own order,
// an order in which a send-then-receive per peer would wait in a circle (0 waits on 1, 1 on 2,
// 2 on 0); every rank gets each peer's own bytes; a rank that exchanges with nobody waits for none.
TEST(Bootstrap, PairwiseExchangeInAnyOrder) {
  szUniqueId id = newId();
  runRanks(4, [&](int rank) {
    szBootstrap* b = init(id, rank, 4);
    ASSERT_NE(b, nullptr);
    std::vector<int> peers;
    if (rank < 3) peers = {(rank + 1) % 3, (rank + 2) % 3};
    std::vector<uint64_t> mine(peers.size()), theirs(peers.size(), 0);
    for (size_t i = 0; i < peers.size(); ++i) mine[i] = uint64_t(rank) * 100 + uint64_t(peers[i]);
    EXPECT_EQ(szBootstrapExchange(b, peers.data(), int(peers.size()), 7, mine.data(), theirs.data(), sizeof(uint64_t)),
              szSuccess) << szGetLastError(nullptr);
    for (size_t i = 0; i < peers.size(); ++i) EXPECT_EQ(theirs[i], uint64_t(peers[i]) * 100 + uint64_t(rank));
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess) << szGetLastError(nullptr);
    szBootstrapClose(b);
  });
}

// Threads share a bootstrap (the ib wire's two link kinds connect lazily, each on whichever
// thread first uses it): three ranks, four threads each, every thread exchanging with both other
// ranks on a tag of its own, 30 rounds, one thread's messages larger than the socket buffers.
// Every byte arrives where its tag says, and no thread waits for good on another's poll.
TEST(Bootstrap, ThreadsExchangeAtOnceOnTagsOfTheirOwn) {
  szUniqueId id = newId();
  constexpr int kRanks = 3, kThreads = 4, kRounds = 30;
  runRanks(kRanks, [&](int rank) {
    szBootstrap* b = init(id, rank, kRanks);
    ASSERT_NE(b, nullptr);
    const int peers[2] = {(rank + 1) % kRanks, (rank + 2) % kRanks};
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0}, failed{0};
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const size_t bytes = t == 0 ? (size_t(1) << 20) + 3 : 8 + size_t(t);
        for (int round = 0; round < kRounds && failed == 0; ++round) {
          std::vector<uint8_t> mine(2 * bytes), theirs(2 * bytes, 0);
          for (int i = 0; i < 2; ++i)
            for (size_t k = 0; k < bytes; k += 97) mine[size_t(i) * bytes + k] = pattern(rank * 8 + peers[i], k, t * 64 + round);
          if (szBootstrapExchange(b, peers, 2, 100 + t, mine.data(), theirs.data(), bytes) != szSuccess) {
            ADD_FAILURE() << "rank " << rank << " thread " << t << ": " << szGetLastError(nullptr);
            ++failed;
            return;
          }
          for (int i = 0; i < 2; ++i)
            for (size_t k = 0; k < bytes; k += 97)
              if (theirs[size_t(i) * bytes + k] != pattern(peers[i] * 8 + rank, k, t * 64 + round)) ++wrong;
        }
      });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0) << "rank " << rank;
    EXPECT_EQ(failed.load(), 0) << "rank " << rank;
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess) << szGetLastError(nullptr);
    szBootstrapClose(b);
  });
}

double threadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// Three threads of one rank wait for messages that come only after a second: they wait without
// spinning (a tenth of the time in CPU at most, together), and a fourth thread's first send
// (its connection's handshake waits for the peer's challenge) goes through at once meanwhile.
TEST(Bootstrap, ThreadsWaitingForMessagesDoNotSpinOrHoldUpASend) {
  szUniqueId id = newId();
  szBootstrap* bs[2] = {nullptr, nullptr};
  runRanks(2, [&](int rank) { bs[rank] = init(id, rank, 2); });
  ASSERT_NE(bs[0], nullptr);
  ASSERT_NE(bs[1], nullptr);
  std::vector<std::thread> waiters;
  std::vector<double> cpu(3, 0.0);
  for (int t = 0; t < 3; ++t)
    waiters.emplace_back([&, t] {
      const double start = threadCpuSeconds();
      int v = -1;
      EXPECT_EQ(szBootstrapRecv(bs[0], 1, 10 + t, &v, sizeof(v)), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(v, t);
      cpu[size_t(t)] = threadCpuSeconds() - start;
    });
  std::thread peer([&] {  // rank 1 answers the handshake of rank 0's first send
    int v = 0;
    EXPECT_EQ(szBootstrapRecv(bs[1], 0, 20, &v, sizeof(v)), szSuccess) << szGetLastError(nullptr);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a waiter polls
  const auto t0 = std::chrono::steady_clock::now();
  const int hello = 1;
  EXPECT_EQ(szBootstrapSend(bs[0], 1, 20, &hello, sizeof(hello)), szSuccess) << szGetLastError(nullptr);
  const double sendSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(sendSeconds, 1.0) << "a first send waited behind a thread waiting for a message";
  peer.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  for (int t = 0; t < 3; ++t) EXPECT_EQ(szBootstrapSend(bs[1], 0, 10 + t, &t, sizeof(t)), szSuccess);
  for (std::thread& w : waiters) w.join();
  EXPECT_LT(cpu[0] + cpu[1] + cpu[2], 0.12) << "waiting threads spun: " << cpu[0] << " + " << cpu[1] << " + " << cpu[2]
                                             << " s of CPU over about 1.2 s";
  szBootstrapClose(bs[0]);
  szBootstrapClose(bs[1]);
}

// A peer that never takes part: the exchange fails with szTimeout within the bootstrap's timeout.
TEST(Bootstrap, ExchangeWithAnAbsentPeerTimesOut) {
  szUniqueId id = newId();
  std::atomic<bool> done{false};  // rank 1 stays connected, silent, until rank 0 has its verdict
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2, 1500);
    ASSERT_NE(b, nullptr);
    if (rank == 0) {
      const int peer = 1;
      uint32_t mine = 5, theirs = 0;
      const auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(szBootstrapExchange(b, &peer, 1, 8, &mine, &theirs, sizeof(mine)), szTimeout);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
      EXPECT_EQ(theirs, 0u);
      done = true;
    } else {
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, SizeMismatchIsInvalidUsage) {
  szUniqueId id = newId();
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2);
    ASSERT_NE(b, nullptr);
    uint64_t v = 42;
    if (rank == 1) {
      EXPECT_EQ(szBootstrapSend(b, 0, 1, &v, sizeof(v)), szSuccess);
      EXPECT_EQ(szBootstrapSend(b, 0, 2, &v, sizeof(v)), szSuccess);
    } else {
      uint32_t small = 0;
      EXPECT_EQ(szBootstrapRecv(b, 1, 1, &small, sizeof(small)), szInvalidUsage);
      EXPECT_NE(std::string(szGetLastError(nullptr)).find("expected 4 bytes"), std::string::npos)
          << szGetLastError(nullptr);
      v = 0;
      EXPECT_EQ(szBootstrapRecv(b, 1, 2, &v, sizeof(v)), szSuccess);  // the next one is fine
      EXPECT_EQ(v, 42u);
      EXPECT_EQ(szBootstrapSend(b, 0, 1, &v, sizeof(v)), szInvalidArgument);  // to itself
      EXPECT_EQ(szBootstrapRecv(b, 2, 1, &v, sizeof(v)), szInvalidArgument);  // no rank 2
    }
    szBootstrapBarrier(b);
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, PeerThatLeftIsRemoteError) {
  szUniqueId id = newId();
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2);
    ASSERT_NE(b, nullptr);
    int v = 7;
    if (rank == 1) {
      EXPECT_EQ(szBootstrapSend(b, 0, 1, &v, sizeof(v)), szSuccess);
    } else {
      EXPECT_EQ(szBootstrapRecv(b, 1, 1, &v, sizeof(v)), szSuccess);  // sent before it left
      auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(szBootstrapRecv(b, 1, 2, &v, sizeof(v)), szRemoteError) << szGetLastError(nullptr);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    }
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, CommIdRendezvous) {
  CommIdEnv env;
  szUniqueId id = newId();
  runRanks(3, [&](int rank) {
    szBootstrap* b = init(id, rank, 3);
    ASSERT_NE(b, nullptr);
    allGatherAndCheck(b, 64, 3);
    szBootstrapClose(b);
  });
  // The port is free again (the root thread was joined in rank 0's init): run a second round.
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2);
    ASSERT_NE(b, nullptr);
    allGatherAndCheck(b, 64, 4);
    szBootstrapClose(b);
  });
}

// The insecure path says so at the default log level (no SZ_DEBUG), once, naming the two secure
// choices. In a child process started afresh (the warning is once per process, and another
// test may have printed it here already).
TEST(Bootstrap, CommIdWithoutASecretWarnsAtTheDefaultLevel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        unsetenv("SZ_DEBUG");
        unsetenv("SZ_COMM_SECRET");
        setenv("SZ_COMM_ID", "127.0.0.1:29517", 1);
        szUniqueId id;
        exit(szBootstrapGetUniqueId(&id) == szSuccess ? 0 : 1);
      },
      testing::ExitedWithCode(0), "without SZ_COMM_SECRET.*SZ_COMM_SECRET to one secret value.*szGetUniqueId");
}

TEST(Bootstrap, CommIdSecretDependsOnCommSecret) {
  CommIdEnv env;
  szUniqueId a = newId();
  setenv("SZ_COMM_SECRET", "swordfish", 1);
  szUniqueId b = newId();
  unsetenv("SZ_COMM_SECRET");
  EXPECT_NE(memcmp(&a, &b, sizeof(a)), 0);
}

TEST(Bootstrap, StrangersAtTheRootAreDropped) {
  CommIdEnv env;
  szUniqueId id = newId();
  szSocketAddress root;
  ASSERT_EQ(szSocketParseAddress(env.address.c_str(), &root), szSuccess);
  std::atomic<bool> rootUp{false}, strangersIn{false};
  std::vector<int> strangers;
  runRanks(3, [&](int rank) {
    if (rank == 0) rootUp = true;
    while (!rootUp) std::this_thread::yield();
    if (rank == 2) while (!strangersIn) std::this_thread::yield();
    if (rank == 1) {
      // Before the other ranks: garbage of the greeting's size and more, a silent connection,
      // and one that says little and leaves. None may hold the real ranks up.
      szDeadline deadline = szDeadlineAfterMs(kTimeoutMs);
      std::vector<uint8_t> garbage(4096);
      for (size_t i = 0; i < garbage.size(); i++) garbage[i] = (uint8_t)(i * 37 + 5);
      for (size_t bytes : {garbage.size(), (size_t)0, (size_t)3}) {
        int fd = -1;
        if (szSocketConnect(root, deadline, &fd) != szSuccess) {
          ADD_FAILURE() << szGetLastError(nullptr);
          break;
        }
        if (bytes > 0) {
          EXPECT_EQ(szSocketSendAll(fd, garbage.data(), bytes, deadline), szSuccess);
        }
        if (bytes == 3) close(fd);
        else strangers.push_back(fd);
      }
      strangersIn = true;
    }
    szBootstrap* b = init(id, rank, 3);
    ASSERT_NE(b, nullptr);
    allGatherAndCheck(b, 16, 5);
    szBootstrapClose(b);
  });
  for (int fd : strangers) close(fd);
}

// Two ranks of three arrive; with SZ_COMM_ID the root (in rank 0) gives up with them.
class BootstrapMissingRank : public testing::TestWithParam<bool> {};

TEST_P(BootstrapMissingRank, TimesOut) {
  std::unique_ptr<CommIdEnv> env(GetParam() ? new CommIdEnv : nullptr);
  szUniqueId id = newId();
  auto start = std::chrono::steady_clock::now();
  runRanks(2, [&](int rank) {
    szBootstrap* b = nullptr;
    EXPECT_EQ(szBootstrapInit(id, rank, 3, 1000, &b), szTimeout) << szGetLastError(nullptr);
    EXPECT_EQ(b, nullptr);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("rendezvous"), std::string::npos)
        << szGetLastError(nullptr);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

INSTANTIATE_TEST_SUITE_P(CommId, BootstrapMissingRank, testing::Bool());

TEST(Bootstrap, MissingPeerMessageTimesOut) {
  szUniqueId id = newId();
  runRanks(2, [&](int rank) {
    szBootstrap* b = init(id, rank, 2, 500);
    ASSERT_NE(b, nullptr);
    if (rank == 0) {
      int v;
      auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(szBootstrapRecv(b, 1, 3, &v, sizeof(v)), szTimeout);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
    }
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, RanksDisagreeOnNranks) {
  szUniqueId id = newId();
  auto start = std::chrono::steady_clock::now();
  runRanks(2, [&](int rank) {
    szBootstrap* b = nullptr;
    EXPECT_EQ(szBootstrapInit(id, rank, rank == 0 ? 2 : 3, kTimeoutMs, &b), szInvalidUsage)
        << szGetLastError(nullptr);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Bootstrap, TwoCommunicatorsAtOnce) {
  szUniqueId ids[2] = {newId(), newId()};
  runRanks(6, [&](int t) {
    int comm = t % 2, rank = t / 2;
    szBootstrap* b = init(ids[comm], rank, 3);
    ASSERT_NE(b, nullptr);
    allGatherAndCheck(b, 100, 10 + comm);
    int v = comm * 100 + rank;
    EXPECT_EQ(szBootstrapSend(b, (rank + 1) % 3, 5, &v, sizeof(v)), szSuccess);
    EXPECT_EQ(szBootstrapRecv(b, (rank + 2) % 3, 5, &v, sizeof(v)), szSuccess);
    EXPECT_EQ(v, comm * 100 + (rank + 2) % 3);
    szBootstrapBarrier(b);
    szBootstrapClose(b);
  });
}

TEST(Bootstrap, SeparateProcesses) {
  CommIdEnv env;
  szUniqueId id = newId();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  int rank = child == 0 ? 1 : 0;
  szBootstrap* b = nullptr;
  szResult_t res = szBootstrapInit(id, rank, 2, kTimeoutMs, &b);
  int v[2] = {0, 0};
  v[rank] = 1000 + rank;
  if (res == szSuccess) res = szBootstrapAllGather(b, v, sizeof(int));
  if (res == szSuccess && (v[0] != 1000 || v[1] != 1001)) res = szInternalError;
  szBootstrapClose(b);
  if (child == 0) _exit(res);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Socket, ParseAddress) {
  szSocketAddress a;
  ASSERT_EQ(szSocketParseAddress("127.0.0.1:1234", &a), szSuccess);
  EXPECT_EQ(szSocketAddressString(a), "127.0.0.1:1234");
  ASSERT_EQ(szSocketParseAddress("[::1]:80", &a), szSuccess);
  EXPECT_EQ(szSocketAddressString(a), "[::1]:80");
  ASSERT_EQ(szSocketParseAddress("localhost:99", &a), szSuccess);
  EXPECT_EQ(szSocketParseAddress("127.0.0.1", &a), szInvalidArgument);
  EXPECT_EQ(szSocketParseAddress("127.0.0.1:0", &a), szInvalidArgument);
  EXPECT_EQ(szSocketParseAddress("127.0.0.1:70000", &a), szInvalidArgument);
  EXPECT_EQ(szSocketParseAddress("::1:80", &a), szInvalidArgument);
  EXPECT_EQ(szSocketParseAddress("[::1:80", &a), szInvalidArgument);
  EXPECT_EQ(szSocketParseAddress(":80", &a), szInvalidArgument);
}

TEST(Socket, ConnectTimesOutWhenNobodyListens) {
  szSocketAddress a;
  ASSERT_EQ(szSocketParseAddress(("127.0.0.1:" + std::to_string(freePort())).c_str(), &a), szSuccess);
  int fd = -1;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(szSocketConnect(a, szDeadlineAfterMs(300), &fd), szTimeout);
  EXPECT_EQ(fd, -1);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(200));
  EXPECT_LT(took, std::chrono::milliseconds(1500));
}

}  // namespace
