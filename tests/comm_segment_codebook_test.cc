// Per-segment codebooks (SZ_CODEBOOK=auto, host buffers over tcp, two ranks as threads): a
// szSendv whose buffers hold very different exponent ranges (the shipped real KV sample and the
// same KV x 2^9, as K and V of two models would differ) keeps a codebook per segment group
// (src/proto/segment_groups.h), so both compress to within 0.3 % of their own oracle top-16s,
// where one codebook for the whole list cannot (its own top-16, and the same bytes as one
// szSend, whose figures are printed). The receiver's bytes stay bit-exact (its list is
// split differently: groups are the sender's), and the groups do not flap (few switches in all).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kv_samples.h"
#include "oracle_ratio.h"
#include "two_ranks.h"
#include "splitzip.h"

namespace {

constexpr int kSends = 4;
constexpr size_t kSliceBytes = 256 << 10;

struct Transfer {
  std::vector<double> ratios;             // per send
  std::vector<uint64_t> recalibrations;   // after each send
};

// Rank 0 sends the buffers of `list` as one szSendv kSends times; rank 1 receives them into one
// buffer per `recvSplit` part of the concatenation and checks every byte.
Transfer transfer(const std::vector<std::vector<uint8_t>>& list, int recvSplit) {
  std::vector<uint8_t> all;
  for (const auto& b : list) all.insert(all.end(), b.begin(), b.end());
  const size_t total = all.size() / 2;
  Transfer run;
  sztest::onTwoRanks(
      [&](szConfig_t& cfg) {
        cfg.sliceBytes = kSliceBytes;
        cfg.codebookMode = SZ_CODEBOOK_AUTO;
      },
      [&](int rank, szComm_t comm) {
        szStats_t last{};
        for (int i = 0; i < kSends; ++i) {
          if (rank == 0) {
            std::vector<const void*> bufs;
            std::vector<size_t> counts;
            for (const auto& b : list) {
              bufs.push_back(b.data());
              counts.push_back(b.size() / 2);
            }
            ASSERT_EQ(szSendv(bufs.data(), counts.data(), int(bufs.size()), szBfloat16, 1, comm, nullptr), szSuccess)
                << szGetLastError(comm);
            szStats_t now;
            ASSERT_EQ(szCommGetStats(comm, &now), szSuccess);
            run.ratios.push_back(double(now.rawBytes - last.rawBytes) / double(now.wireBytes - last.wireBytes));
            run.recalibrations.push_back(now.recalibrations);
            last = now;
          } else {
            std::vector<uint8_t> got(all.size(), 0xA5);
            std::vector<void*> bufs;
            std::vector<size_t> counts;
            for (int p = 0; p < recvSplit; ++p) {  // parts of unequal size, cut off the slice grid
              const size_t begin = total * p / recvSplit + (p ? 333 : 0), end = total * (p + 1) / recvSplit + 333;
              bufs.push_back(got.data() + 2 * begin);
              counts.push_back((p + 1 == recvSplit ? total : end) - begin);
            }
            ASSERT_EQ(szRecvv(bufs.data(), counts.data(), recvSplit, szBfloat16, 0, comm, nullptr), szSuccess)
                << szGetLastError(comm);
            ASSERT_TRUE(got == all) << "send " << i << ": received bytes differ";
          }
        }
      });
  return run;
}

// The KV sample cut to whole slices, so no slice holds two buffers' data.
std::vector<uint8_t> kvSample() {
  std::vector<uint8_t> kv = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  kv.resize(kv.size() / kSliceBytes * kSliceBytes);
  return kv;
}

void expectFollowsEachSegment(const std::vector<std::vector<uint8_t>>& list, const char* layout) {
  const double oracle = sztest::oracleRatio(list);
  std::vector<uint8_t> all;
  for (const auto& b : list) all.insert(all.end(), b.begin(), b.end());
  const double oneCodebook = sztest::oracleRatio({all});  // the best a single codebook for the list does
  const Transfer perSegment = transfer(list, 3);
  const Transfer oneBuffer = transfer({all}, 1);
  ASSERT_EQ(perSegment.ratios.size(), size_t(kSends));
  ASSERT_EQ(oneBuffer.ratios.size(), size_t(kSends));
  printf("[ figures  ] %s: oracle %.4f, one codebook's %.4f; per-segment sends %.4f %.4f %.4f %.4f (%llu "
         "recalibrations); one buffer %.4f %.4f %.4f %.4f (%llu)\n", layout, oracle, oneCodebook, perSegment.ratios[0], perSegment.ratios[1],
         perSegment.ratios[2], perSegment.ratios[3], (unsigned long long)perSegment.recalibrations.back(),
         oneBuffer.ratios[0], oneBuffer.ratios[1], oneBuffer.ratios[2], oneBuffer.ratios[3],
         (unsigned long long)oneBuffer.recalibrations.back());
  // Every group calibrates its first slice: from the first send on every group has its own.
  for (int i = 0; i < kSends; ++i) {
    EXPECT_GE(perSegment.ratios[i], oracle * 0.997) << layout << " send " << i << ": within 0.3 % of the oracle";
    EXPECT_GT(perSegment.ratios[i], oneCodebook + 0.01) << layout << " send " << i << ": one codebook does as well";
  }
  EXPECT_GE(perSegment.recalibrations.back(), 1u);
  // No flapping: at most the step and one refinement per shifted group over all the sends (a
  // group's refinement may land a send later when the codec threads finish in another order,
  // so when it comes is not asserted).
  EXPECT_LE(perSegment.recalibrations.back(), uint64_t(list.size())) << "more than the step and one refinement per shifted group";
}

TEST(CommSegmentCodebook, KThenVHalvesEachGetTheirOwnCodebook) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const std::vector<uint8_t> kv = kvSample();
  ASSERT_FALSE(kv.empty());
  expectFollowsEachSegment({kv, sztest::scaledBf16(kv, 9)}, "[kv, kv x 2^9]");
}

TEST(CommSegmentCodebook, InterleavedKvListKeepsTheTwoApart) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const std::vector<uint8_t> kv = kvSample();
  ASSERT_FALSE(kv.empty());
  const std::vector<uint8_t> shifted = sztest::scaledBf16(kv, 9);
  expectFollowsEachSegment({kv, shifted, kv, shifted}, "[kv, kv x 2^9, kv, kv x 2^9]");
}

}  // namespace
