// Issue 11, item 1, as an attack: an intruder that scans this host's loopback ports connects
// to every new listener of a communicator (rendezvous, bootstrap, tcp wire) and claims to be
// rank 0, with the id key it can derive from SZ_COMM_ID (SZ_COMM_SECRET unset) or with a wrong
// SZ_COMM_SECRET; it answers the challenge with the library's own client, and also sends the
// old (pre-challenge) greeting with the FNV secret, each followed by a forged slice with and
// without a correct CRC32C. Its connections sit in the listener's backlog before the real
// rank 0 connects (the sub-millisecond window of the issue, held open), so before the fix they
// would have taken rank 0's place. Every forged connection must be refused, and the real
// transfer must arrive bit-exact.
#include <atomic>
#include <chrono>
#include <mutex>

#include "codec/checksum.h"
#include "kernels/slot_format.h"
#include "intruder.h"
#include "splitzip.h"
#include "base/bootstrap.h"
#include "transport/wire.h"

using namespace intruder;

namespace {

constexpr int kTimeoutMs = 10000;
// The bytes of one forged slot as the tcp wire carries it: [u64 length][SlotHeader][payload], a
// raw slice of step 0 with or without its CRC32C (kernels/slot_format.h).
std::vector<uint8_t> forgedSlice(bool withCrc) {
  std::vector<uint8_t> payload(4096, 0xEE);
  sz::SlotHeader header{};
  header.ready = sz::readyValue(0);
  header.bytes = payload.size();
  header.opCount = payload.size() / 2;
  header.opSlices = 1;
  header.opType = szBfloat16;
  header.version = sz::kSlotProtocolVersion;
  header.flags = withCrc ? sz::kSlotCrc : 0;
  header.crc = withCrc ? sz::crc32c(payload.data(), payload.size()) : 0u;
  uint64_t length = sizeof(header) + payload.size();
  std::vector<uint8_t> bytes(sizeof(length) + sizeof(header));
  memcpy(bytes.data(), &length, sizeof(length));
  memcpy(bytes.data() + sizeof(length), &header, sizeof(header));
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

// The greeting of the tcp wire before issue 11: magic, rank, index and a 16-byte secret, sent
// at once (the FNV-1a secret of SZ_COMM_ID that anyone could compute).
std::vector<uint8_t> legacyHello(const std::string& commId) {
  std::string text = commId + '\0';
  uint8_t secret[16];
  for (int half = 0; half < 2; half++) {
    uint64_t h = 0xcbf29ce484222325ull ^ uint64_t(half + 1);
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    memcpy(secret + 8 * half, &h, 8);
  }
  struct {
    uint32_t magic;
    int32_t rank, index;
    uint8_t secret[16];
  } hello = {0x535A5443, 0, 0, {}};
  memcpy(hello.secret, secret, sizeof(secret));
  std::vector<uint8_t> bytes(sizeof(hello));
  memcpy(bytes.data(), &hello, sizeof(hello));
  return bytes;
}

// The intruder: every attack on every port, each on its own connection and thread.
class Intruder {
 public:
  // `patienceMs`: how long each forged handshake waits for an answer.
  Intruder(std::vector<uint8_t> key, std::string commId, int patienceMs = 3000)
      : key_(std::move(key)), commId_(std::move(commId)), patienceMs_(patienceMs) {}
  ~Intruder() { join(); }

  // Connects to `port` with each attack; returns once every connection is established (in the
  // listener's backlog, ahead of anything that connects later).
  void attack(int port) {
    szDeadline deadline = szDeadlineAfterMs(patienceMs_);
    for (bool withCrc : {false, true}) {
      int fd = -1;
      if (szSocketConnect(loopback(port), deadline, &fd) != szSuccess) continue;
      std::vector<uint8_t> bytes = legacyHello(commId_), slice = forgedSlice(withCrc);
      bytes.insert(bytes.end(), slice.begin(), slice.end());
      szSocketSendAll(fd, bytes.data(), bytes.size(), deadline);
      legacy_.push_back(fd);
      for (const char* purpose : {"tcp", "bootstrap"})
        for (int claim : {0, 1}) {
          int afd = -1;
          if (szSocketConnect(loopback(port), deadline, &afd) != szSuccess) continue;
          threads_.emplace_back([this, afd, purpose, claim, withCrc, deadline] {
            szResult_t res = szAuthConnect(afd, key_.data(), purpose, claim, 1 - claim, 0, deadline);
            if (res == szSuccess) {
              std::vector<uint8_t> slice = forgedSlice(withCrc);
              szSocketSendAll(afd, slice.data(), slice.size(), deadline);
            }
            std::lock_guard<std::mutex> lock(mu_);
            results_.push_back(res);
            close(afd);
          });
        }
    }
  }
  void join() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    for (int fd : legacy_) close(fd);
    legacy_.clear();
  }
  std::vector<szResult_t> results() {
    std::lock_guard<std::mutex> lock(mu_);
    return results_;
  }

 private:
  std::vector<uint8_t> key_;
  std::string commId_;
  int patienceMs_;
  std::vector<std::thread> threads_;
  std::vector<int> legacy_;
  std::mutex mu_;
  std::vector<szResult_t> results_;
};

// The key an intruder holds: the derivable id key (SZ_COMM_SECRET unset on the ranks too), or
// the id key of a wrong SZ_COMM_SECRET.
std::vector<uint8_t> intruderKey(bool wrongSecret) {
  if (wrongSecret) setenv("SZ_COMM_SECRET", "not the secret", 1);
  else unsetenv("SZ_COMM_SECRET");
  szUniqueId id;
  EXPECT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  return idKeyOf(id);
}

class WireIntruder : public testing::TestWithParam<bool> {};

TEST_P(WireIntruder, ForgedConnectionsAreRefusedAndTheTransferIsExact) {
  const bool wrongSecret = GetParam();
  CommIdEnv env;
  std::vector<uint8_t> key = intruderKey(wrongSecret);
  if (wrongSecret) setenv("SZ_COMM_SECRET", "the real secret", 1);
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(idKeyOf(id) == key, !wrongSecret);  // without SZ_COMM_SECRET the id key is derivable
  std::set<int> before = listeningPorts();
  Intruder intruder(key, env.address);
  std::atomic<bool> intrudersIn{false};
  std::thread scout([&] {
    // Rank 1's bootstrap and wire listeners and rank 0's bootstrap listener: three new ports.
    std::set<int> attacked;
    auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (attacked.size() < 3 && std::chrono::steady_clock::now() < giveUp) {
      for (int port : listeningPorts())
        if (!before.count(port) && !attacked.count(port) && port != atoi(env.address.c_str() + 10)) {
          attacked.insert(port);
          intruder.attack(port);
        }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(attacked.size(), 3u);
    intrudersIn = true;
  });
  const size_t bytes = (1 << 20) + 13;
  std::vector<uint8_t> sent(bytes), got(bytes, 0);
  for (size_t i = 0; i < bytes; i++) sent[i] = uint8_t(i * 131 + 7);
  szWireConfig cfg = {};
  cfg.timeoutMs = kTimeoutMs;
  cfg.socketsPerPeer = 2;
  runRanks(2, [&](int rank) {
    szBootstrap* b = nullptr;
    ASSERT_EQ(szBootstrapInit(id, rank, 2, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
    if (rank == 0) {  // the slow rank 0 of the issue: connects only after the intruder
      auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(8);
      while (!intrudersIn && std::chrono::steady_clock::now() < giveUp) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    void* comm = nullptr;
    ASSERT_EQ(szWireTcp.connect(b, cfg, &comm), szSuccess) << szGetLastError(nullptr);
    szWireRequest* req = nullptr;
    ASSERT_EQ(rank == 0 ? szWireIsend(&szWireTcp, comm, 1, sent.data(), bytes, &req)
                        : szWireIrecv(&szWireTcp, comm, 0, got.data(), bytes, &req),
              szSuccess);
    int done = 0;
    size_t size = 0;
    szResult_t res = szSuccess;
    auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done && res == szSuccess && std::chrono::steady_clock::now() < giveUp) res = szWireTcp.test(req, &done, &size);
    EXPECT_EQ(res, szSuccess) << "rank " << rank << ": " << szGetLastError(nullptr);
    EXPECT_TRUE(done);
    EXPECT_EQ(size, bytes);
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
    EXPECT_EQ(szWireTcp.close(comm), szSuccess);
    szBootstrapClose(b);
  });
  scout.join();
  intruder.join();
  EXPECT_TRUE(got == sent) << "the receiver's bytes are not the sender's";
  std::vector<szResult_t> results = intruder.results();
  EXPECT_EQ(results.size(), 3u * 2 * 2 * 2);  // ports x CRC x purposes x claimed ranks
  for (szResult_t r : results) EXPECT_EQ(r, szRemoteError) << "a forged handshake was not refused";
}

INSTANTIATE_TEST_SUITE_P(DerivableOrWrongSecret, WireIntruder, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) { return p.param ? "WrongSecret" : "Derivable"; });

// The same intruder against whole communicators (codec off, CRC off and on): it attacks each
// listener as soon as it shows up, during init and after it (the ranks wait for it to find at
// least their two bootstrap listeners); every operation still succeeds bit-exact.
TEST(CommIntruder, TransfersStayExactWhileAnIntruderAttacksEveryListener) {
  for (int crc : {0, 1}) {
    SCOPED_TRACE("crc " + std::to_string(crc));
    CommIdEnv env;
    std::vector<uint8_t> key = intruderKey(false);
    std::set<int> before = listeningPorts();
    std::atomic<bool> finished{false};
    std::atomic<size_t> found{0};
    Intruder intruder(key, env.address, 1000);
    std::set<int> attacked;
    std::thread scout([&] {
      auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!finished && std::chrono::steady_clock::now() < giveUp) {
        for (int port : listeningPorts())
          if (!before.count(port) && attacked.insert(port).second) intruder.attack(port);
        found = attacked.size();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    const size_t count = (3 << 20) + 5;
    std::vector<uint16_t> sent(count), got(count, 0);
    for (size_t i = 0; i < count; i++) sent[i] = uint16_t(0x3F80 + (i * 2654435761u >> 20) % 97);
    runRanks(2, [&](int rank) {
      szUniqueId id;
      ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      cfg.codec = SZ_CODEC_OFF;
      cfg.crc = crc;
      cfg.timeoutMs = kTimeoutMs;
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (found < 2 && std::chrono::steady_clock::now() < giveUp) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      szResult_t res = rank == 0 ? szSend(sent.data(), count, szBfloat16, 1, comm, nullptr)
                                 : szRecv(got.data(), count, szBfloat16, 0, comm, nullptr);
      EXPECT_EQ(res, szSuccess) << "rank " << rank << ": " << szGetLastError(nullptr);
      EXPECT_EQ(szCommDestroy(comm), szSuccess);
    });
    finished = true;
    scout.join();
    intruder.join();
    EXPECT_TRUE(got == sent) << "the receiver's bytes are not the sender's";
    EXPECT_GE(attacked.size(), 2u) << "the intruder found no listener (the bootstraps' live as long as the communicator)";
    for (szResult_t r : intruder.results()) EXPECT_NE(r, szSuccess) << "a forged handshake was accepted";
  }
}

}  // namespace
