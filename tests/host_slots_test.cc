// Host buffers on the slot protocol (src/proto/host_slots.h), two ranks as threads over tcp with
// a small host channel (64 KiB slices, 2 threads, 4 slots per direction), so operations wrap
// the ring many times: odd sizes and zero bytes bit-exact in both modes and buffer lists split
// differently on the two sides; a type mismatch is szInvalidUsage on both sides; a peer that dies
// while the sender holds every slot fails the sender with szRemoteError at once, not at the
// timeout; a sender that dies before its send fails the waiting receiver the same way.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "splitzip.h"
#include "two_ranks.h"

namespace {

constexpr size_t kSlice = 64 << 10;

void smallChannel(szConfig_t& cfg) {
  cfg.sliceBytes = kSlice;
  cfg.pipelineDepth = 2;
}

std::vector<uint16_t> bf16Data(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    // KV-like exponents around 2^-3..2^3, and now and then a rare one (an escape), NaN, -0, a denormal
    const uint16_t exp = uint16_t(124 + (x >> 28) % 7), mant = uint16_t((x >> 8) & 0x7F), sign = uint16_t((x >> 20) & 1);
    v[i] = uint16_t(sign << 15 | exp << 7 | mant);
    if (i % 977 == 5) v[i] = uint16_t(0x7FC1 + (x & 0x3F));  // NaN payloads
    if (i % 1231 == 7) v[i] = 0x8000;                         // -0
    if (i % 1499 == 11) v[i] = uint16_t(x & 0x7F);            // denormal
    if (i % 2003 == 13) v[i] = uint16_t(0x4000 | (x & 0x3FFF));  // a rare exponent
  }
  return v;
}

TEST(HostSlots, OddSizesAndZeroBytesWrapTheRingBitExact) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const std::vector<size_t> counts = {0, 1, 7, 2048, kSlice / 2 - 1, kSlice / 2, kSlice / 2 + 1, 3 * kSlice / 2 + 5,
                                      0, 1000003};
  for (int codec : {SZ_CODEC_ON, SZ_CODEC_OFF}) {
    SCOPED_TRACE(codec == SZ_CODEC_ON ? "codec on" : "codec off");
    sztest::onTwoRanks(
        [&](szConfig_t& cfg) {
          smallChannel(cfg);
          cfg.codec = codec;
        },
        [&](int rank, szComm_t comm) {
          for (size_t k = 0; k < counts.size(); ++k) {
            const size_t n = counts[k];
            const std::vector<uint16_t> want = bf16Data(n, uint32_t(k));
            if (rank == 0) {
              ASSERT_EQ(szSend(want.data(), n, szBfloat16, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
            } else {
              std::vector<uint16_t> got(n + 1, 0xA5A5);
              ASSERT_EQ(szRecv(got.data(), n, szBfloat16, 0, comm, nullptr), szSuccess) << szGetLastError(comm);
              EXPECT_EQ(got.back(), 0xA5A5) << "count " << n << ": a byte past the buffer was written";
              got.pop_back();
              ASSERT_TRUE(got == want) << "count " << n << ": received bits differ";
            }
          }
          szStats_t s;
          ASSERT_EQ(szCommGetStats(comm, &s), szSuccess);
          if (rank == 0) {
            if (codec == SZ_CODEC_ON) EXPECT_GT(s.compressedSlices, 0u);
            else EXPECT_EQ(s.compressedSlices, 0u);
          }
        });
  }
}

TEST(HostSlots, BufferListsSplitDifferentlyOnTheTwoSides) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const size_t n = 5 * kSlice / 2 + 333;  // elements: 5 slices and a bit
  const std::vector<uint16_t> want = bf16Data(n, 42);
  sztest::onTwoRanks(smallChannel, [&](int rank, szComm_t comm) {
    if (rank == 0) {  // three parts that cut slices anywhere
      const void* bufs[3] = {want.data(), want.data() + 1001, want.data() + 70001};
      size_t parts[3] = {1001, 69000, n - 70001};
      ASSERT_EQ(szSendv(bufs, parts, 3, szBfloat16, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
    } else {  // seven parts, one of them empty
      std::vector<uint16_t> got(n, 0);
      std::vector<void*> bufs;
      std::vector<size_t> parts;
      size_t at = 0;
      for (size_t cut : {size_t(5), size_t(40000), size_t(0), size_t(1), size_t(65536), size_t(50000)}) {
        bufs.push_back(got.data() + at);
        parts.push_back(cut);
        at += cut;
      }
      bufs.push_back(got.data() + at);
      parts.push_back(n - at);
      ASSERT_EQ(szRecvv(bufs.data(), parts.data(), int(bufs.size()), szBfloat16, 0, comm, nullptr), szSuccess)
          << szGetLastError(comm);
      ASSERT_TRUE(got == want) << "received bits differ";
    }
  });
}

// With `var`=`value` (SZ_AUTH_DATA=1, SZ_ENCRYPT=1, SZ_RUNTIME_CONNECT=0: read at each init) `n`
// bf16 elements cross the host slots bit-exact, as frames and raw; `var`=`bad` fails init with
// szInvalidArgument.
void protectedRoundTrip(const char* var, const char* bad, size_t n, uint32_t seed, const char* value = "1") {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  setenv(var, value, 1);
  const std::vector<uint16_t> want = bf16Data(n, seed);
  for (int codec : {SZ_CODEC_ON, SZ_CODEC_OFF})
    sztest::onTwoRanks(
        [&](szConfig_t& cfg) {
          smallChannel(cfg);
          cfg.codec = codec;
        },
        [&](int rank, szComm_t comm) {
          if (rank == 0) {
            ASSERT_EQ(szSend(want.data(), n, szBfloat16, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
          } else {
            std::vector<uint16_t> got(n, 0);
            ASSERT_EQ(szRecv(got.data(), n, szBfloat16, 0, comm, nullptr), szSuccess) << szGetLastError(comm);
            ASSERT_TRUE(got == want) << "received bits differ";
          }
        });
  setenv(var, bad, 1);
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  szComm_t comm = nullptr;
  EXPECT_EQ(szCommInitRank(&comm, 1, id, 0), szInvalidArgument) << var << "=" << bad << " is not 0 or 1";
  unsetenv(var);
}

TEST(HostSlots, AuthenticatedSlicesRoundTripBitExact) { protectedRoundTrip("SZ_AUTH_DATA", "yes", 3 * kSlice / 2 + 77, 9); }

TEST(HostSlots, EncryptedSlicesRoundTripBitExact) { protectedRoundTrip("SZ_ENCRYPT", "on", 5 * kSlice / 2 + 13, 4); }

// SZ_RUNTIME_CONNECT=0: every pair's slots at init, the same round trips.
TEST(HostSlots, PairsConnectedAtInitRoundTripBitExact) { protectedRoundTrip("SZ_RUNTIME_CONNECT", "early", 2 * kSlice + 5, 6, "0"); }

TEST(HostSlots, TypeMismatchIsInvalidUsageOnBothSides) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  szResult_t res[2] = {szInternalError, szInternalError};
  sztest::onTwoRanks(smallChannel, [&](int rank, szComm_t comm) {
    std::vector<uint16_t> buf(4096, 0x3F80);
    res[rank] = rank == 0 ? szSend(buf.data(), 4096, szBfloat16, 1, comm, nullptr)
                          : szRecv(buf.data(), 4096, szFloat16, 0, comm, nullptr);
  });
  EXPECT_EQ(res[0], szInvalidUsage);
  EXPECT_EQ(res[1], szInvalidUsage);
}

// One rank runs `body` on a communicator with a 20 s timeout; the other aborts its own after
// `dieAfterMs`. Returns the body's result and how long it took.
template <class Body>
std::pair<szResult_t, double> peerDies(int survivor, int dieAfterMs, Body body) {
  szUniqueId id;
  EXPECT_EQ(szGetUniqueId(&id), szSuccess);
  szResult_t result = szInternalError;
  double seconds = 0;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      cfg.codec = SZ_CODEC_OFF;
      cfg.timeoutMs = 20000;
      smallChannel(cfg);
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      if (rank == survivor) {
        const auto t0 = std::chrono::steady_clock::now();
        result = body(comm);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(dieAfterMs));
      }
      szCommAbort(comm);
    });
  for (std::thread& t : ranks) t.join();
  return {result, seconds};
}

TEST(HostSlots, AReceiverThatDiesWhileTheSenderHoldsEverySlotFailsItAtOnce) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  std::vector<uint16_t> buf(64 * kSlice, 0x3F80);  // 32 slices: the 4 slots fill, the sender waits for credits
  auto [res, seconds] = peerDies(0, 300, [&](szComm_t comm) {
    return szSend(buf.data(), buf.size(), szBfloat16, 1, comm, nullptr);
  });
  EXPECT_EQ(res, szRemoteError);
  EXPECT_LT(seconds, 10.0) << "the sender waited for the timeout instead of seeing the peer go";
}

TEST(HostSlots, ASenderThatDiesBeforeItsSendFailsTheReceiverAtOnce) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  std::vector<uint16_t> buf(64 * kSlice, 0);
  auto [res, seconds] = peerDies(1, 300, [&](szComm_t comm) {
    return szRecv(buf.data(), buf.size(), szBfloat16, 0, comm, nullptr);  // its sender never sends
  });
  EXPECT_EQ(res, szRemoteError);
  EXPECT_LT(seconds, 10.0) << "the receiver waited for the timeout instead of seeing the peer go";
}

}  // namespace
