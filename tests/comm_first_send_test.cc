// A communicator's first send of KV whose exponents sit away from the built-in codebook (the
// shipped samples scaled by a power of two, as another model's KV would be), with default
// settings over tcp (host buffers, two ranks as threads): issue 13's goal is every real KV set
// within 0.3 % of its oracle ratio (one frame with the data's own top-16), the first send too. A
// new (peer, type) calibrates its first slice (src/proto/codebook_drift.h); slices planned while
// that calibration is out, and a one-slice send whose data shifted since the last, are encoded
// again. The receiver's bytes are checked bit-exact; the ratios come from szCommGetStats.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "kv_samples.h"
#include "two_ranks.h"
#include "splitzip.h"

namespace {

struct Data {
  std::vector<uint8_t> bytes;
  szDataType_t type;
  size_t count() const { return bytes.size() / szTypeSize(type); }
};

// Rank 0 sends each of `sends` once, in order, on one new communicator (default settings but
// the wire, codec on and `sliceBytes` when non-zero); rank 1 checks every byte. Each send's
// raw bytes over its wire bytes.
std::vector<double> sendRatios(const std::vector<Data>& sends, size_t sliceBytes = 0) {
  std::vector<double> ratios;
  sztest::onTwoRanks(
      [&](szConfig_t& cfg) {
        if (sliceBytes) cfg.sliceBytes = sliceBytes;
      },
      [&](int rank, szComm_t comm) {
        szStats_t last{};
        for (size_t i = 0; i < sends.size(); ++i) {
          const Data& d = sends[i];
          if (rank == 0) {
            ASSERT_EQ(szSend(d.bytes.data(), d.count(), d.type, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
            szStats_t now;
            ASSERT_EQ(szCommGetStats(comm, &now), szSuccess);
            ratios.push_back(double(now.rawBytes - last.rawBytes) / double(now.wireBytes - last.wireBytes));
            last = now;
          } else {
            std::vector<uint8_t> got(d.bytes.size(), 0xA5);
            ASSERT_EQ(szRecv(got.data(), d.count(), d.type, 0, comm, nullptr), szSuccess) << szGetLastError(comm);
            ASSERT_TRUE(got == d.bytes) << "send " << i << ": received bytes differ";
          }
        }
      });
  return ratios;
}

// The data as one frame with its own top-16 (tools/codebook_goals.py's oracle).
double oracleRatio(const Data& d) {
  szHistogram_t hist;
  szCodebook_t cb;
  size_t cap = 0, bytes = 0;
  EXPECT_EQ(szHistogramInit(&hist, d.type), szSuccess);
  EXPECT_EQ(szHistogramAccumulate(&hist, d.bytes.data(), d.count()), szSuccess);
  EXPECT_EQ(szCodebookFromHistogram(&hist, &cb), szSuccess);
  EXPECT_EQ(szEncodeMaxSize(d.count(), d.type, &cap), szSuccess);
  std::vector<uint8_t> frame(cap);
  EXPECT_EQ(szEncode(d.bytes.data(), d.count(), d.type, &cb, 0, frame.data(), cap, &bytes), szSuccess);
  return double(d.bytes.size()) / double(bytes);
}

Data bf16(const char* sample, int shift) {
  return Data{sztest::scaledBf16(sztest::readKvSample(sample), shift), szBfloat16};
}

TEST(CommFirstSend, ShiftedKvFirstSendIsWithinThreeTenthsOfAPercentOfItsOracle) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const std::vector<Data> sets = {
      bf16("tinystories_kv_eval_bf16.safetensors", 0), bf16("tinystories_kv_eval_bf16.safetensors", 9),
      bf16("smollm2_kv_eval_bf16.safetensors", 5),
      Data{sztest::scaledE5m2(sztest::readKvSample("tinystories_kv_eval_e5m2.safetensors"), 4), szFloat8e5m2}};
  for (size_t i = 0; i < sets.size(); ++i) {
    ASSERT_FALSE(sets[i].bytes.empty());
    const double oracle = oracleRatio(sets[i]);
    const std::vector<double> r = sendRatios({sets[i]});  // a new communicator: its first send
    ASSERT_EQ(r.size(), 1u);
    printf("[ figures  ] set %zu: first send %.4f, oracle %.4f\n", i, r[0], oracle);
    EXPECT_GT(oracle, sets[i].type == szBfloat16 ? 1.32 : 1.13) << "set " << i << ": compressible KV";
    EXPECT_GE(r[0], oracle * 0.997) << "set " << i;
  }
}

// Slices 1-3 are planned while slice 0's calibration is out (pipeline depth 4).
TEST(CommFirstSend, ShiftedKvFirstSendOfSeveralSlicesIsWithinItsOracle) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const Data shifted = bf16("tinystories_kv_eval_bf16.safetensors", 9);
  ASSERT_FALSE(shifted.bytes.empty());
  const double oracle = oracleRatio(shifted);
  const std::vector<double> r = sendRatios({shifted}, 512 << 10);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GE(r[0], oracle * 0.997) << "first send " << r[0] << " of 5 slices, oracle " << oracle;
}

// One-slice sends: the KV, then the KV x 2^9, which the policy has seen nothing of when it plans
// it: the slice comes out raw and is calibrated on itself and encoded again.
TEST(CommFirstSend, KvThatShiftsBetweenOneSliceSendsStaysWithinItsOracle) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const Data kv = bf16("tinystories_kv_eval_bf16.safetensors", 0), shifted = bf16("tinystories_kv_eval_bf16.safetensors", 9);
  ASSERT_FALSE(kv.bytes.empty());
  const std::vector<double> r = sendRatios({kv, shifted, shifted});
  ASSERT_EQ(r.size(), 3u);
  for (size_t i = 0; i < r.size(); ++i)
    EXPECT_GE(r[i], oracleRatio(i ? shifted : kv) * 0.997) << "send " << i << ": " << r[i];
}

}  // namespace
