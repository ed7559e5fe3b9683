// Codebooks that follow the data in the communicator (SZ_CODEBOOK=auto, the default; host
// buffers over tcp, two ranks as threads): the shipped real KV sample, then the same KV scaled
// by 2^9 (its exponents shifted off the default codebook, as another model's KV would be). The
// receiver's bytes stay bit-exact throughout; with auto the sender recalibrates once and the
// shifted KV's first send already reaches the unshifted one's ratio (its slices that came out
// raw are encoded again), while a fixed default codebook stores it raw. szCommGetStats reports
// the recalibrations and the escape rate. Also the configuration: szConfig_t.codebookMode,
// SZ_CODEBOOK, and a szConfig_t of 0.1.0's size.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kv_samples.h"
#include "two_rank_transfer.h"
#include "splitzip.h"

namespace {

constexpr int kSends = 3;

using sztest::Transfer;

// Rank 0 sends each BF16 buffer of `data` kSends times to rank 1, which checks every byte.
Transfer transfer(int codebookMode, const std::vector<std::vector<uint8_t>>& data) {
  return sztest::sendEach(szBfloat16, data, kSends, [&](szConfig_t& cfg) {
    cfg.sliceBytes = 256 << 10;
    cfg.codebookMode = codebookMode;
  });
}

TEST(CommCodebook, AutoRecalibratesOnceWhenTheKvShiftsAndTheRatioRecovers) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const std::vector<uint8_t> kv = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  ASSERT_FALSE(kv.empty());
  const std::vector<uint8_t> shifted = sztest::scaledBf16(kv, 9);
  Transfer autoRun = transfer(SZ_CODEBOOK_AUTO, {kv, shifted});
  Transfer fixedRun = transfer(SZ_CODEBOOK_DEFAULT, {kv, shifted});
  ASSERT_EQ(autoRun.ratios.size(), size_t(2 * kSends));
  ASSERT_EQ(fixedRun.ratios.size(), size_t(2 * kSends));
  printf("[ figures  ] auto sends:");
  for (double r : autoRun.ratios) printf(" %.4f", r);
  printf(" (%llu recalibrations, escape rate %.4f %%); default's shifted sends %.4f\n",
         (unsigned long long)autoRun.stats.recalibrations, 100 * autoRun.stats.escapeRate, fixedRun.ratios[kSends]);
  // The default fits the sample: no recalibration while it is sent.
  EXPECT_GT(autoRun.ratios[0], 1.32);
  EXPECT_NEAR(autoRun.ratios[kSends - 1], fixedRun.ratios[kSends - 1], 0.0005);
  // Shifted: the fixed default escapes nearly everything, auto follows from the first send on.
  EXPECT_LT(fixedRun.ratios[kSends], 1.01);
  for (int i = kSends; i < 2 * kSends; ++i)
    EXPECT_GT(autoRun.ratios[i], autoRun.ratios[0] * 0.997) << "send " << i << ": within 0.3 % of the unshifted KV's";
  EXPECT_GE(autoRun.stats.recalibrations, 1u);
  EXPECT_LE(autoRun.stats.recalibrations, 2u) << "more than the step and one refinement";
  EXPECT_EQ(fixedRun.stats.recalibrations, 0u);
  EXPECT_GT(autoRun.stats.escapeRate, 0.0);
  EXPECT_LT(autoRun.stats.escapeRate, 0.01);
}

// The configuration's codebook choice, checked at init (one rank is enough for that).
szResult_t initOne(szConfig_t cfg, std::string* why) {
  szUniqueId id;
  EXPECT_EQ(szGetUniqueId(&id), szSuccess);
  szComm_t comm = nullptr;
  szResult_t res = szCommInitRankConfig(&comm, 1, id, 0, &cfg);
  *why = szGetLastError(nullptr);
  if (res == szSuccess) szCommDestroy(comm);
  return res;
}

TEST(CommCodebook, ConfigurationChoicesAndOldConfigSize) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  std::string why;
  szConfig_t cfg = SZ_CONFIG_INITIALIZER;
  cfg.wire = "tcp";
  cfg.codebookMode = 7;
  EXPECT_EQ(initOne(cfg, &why), szInvalidArgument);
  EXPECT_NE(why.find("codebookMode 7"), std::string::npos) << why;
  cfg.codebookMode = SZ_CODEBOOK_FIXED;
  EXPECT_EQ(initOne(cfg, &why), szInvalidArgument);
  EXPECT_NE(why.find("needs szConfig_t.codebook"), std::string::npos) << why;
  cfg.codebookMode = SZ_CODEBOOK_DEFAULT;
  cfg.codebook = &cb;
  EXPECT_EQ(initOne(cfg, &why), szInvalidArgument);
  for (int mode : {-1, SZ_CODEBOOK_AUTO, SZ_CODEBOOK_FIXED}) {
    cfg.codebookMode = mode;
    EXPECT_EQ(initOne(cfg, &why), szSuccess) << mode << ": " << why;
  }
  // A 3-bit codebook (format version 2) is the CPU codec's: the wire carries version 1 frames.
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  szCodebook_t narrow;
  ASSERT_EQ(szCodebookFromHistogramBits(&h, 3, &narrow), szSuccess);
  cfg.codebook = &narrow;
  cfg.codebookMode = SZ_CODEBOOK_FIXED;
  EXPECT_EQ(initOne(cfg, &why), szInvalidUsage);
  EXPECT_NE(why.find("3-bit codes"), std::string::npos) << why;
  cfg.codebook = &cb;
  cfg.codebook = nullptr;
  cfg.codebookMode = 7;
  cfg.size = offsetof(szConfig_t, codebookMode);  // a program built against 0.1.0's header
  EXPECT_EQ(initOne(cfg, &why), szSuccess) << "the mode field is not read: " << why;
  cfg.size = sizeof(szConfig_t);
  cfg.codebookMode = -1;
  for (const char* env : {"auto", "DEFAULT"}) {
    setenv("SZ_CODEBOOK", env, 1);
    EXPECT_EQ(initOne(cfg, &why), szSuccess) << env << ": " << why;
  }
  setenv("SZ_CODEBOOK", "/nonexistent.codebook", 1);
  EXPECT_NE(initOne(cfg, &why), szSuccess);
  EXPECT_NE(why.find("/nonexistent.codebook"), std::string::npos) << why;
  unsetenv("SZ_CODEBOOK");
}

}  // namespace
