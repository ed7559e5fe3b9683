// FP16 and FP8 E4M3 on host buffers (format version 2, issue 33): the host path codes them with
// the CPU codec (3- or 4-bit exponent codes); device buffers take the slot kernels' path for them
// (tests/gpu/comm_narrow_gpu_test.cc). Two ranks as threads on the tcp wire: every bit pattern of the
// type at odd counts (NaN payloads, -0, subnormals, Inf, +-448) arrives bit-exact, raw or inside
// compressed frames; the shipped real KV compresses to what its codebook predicts (the
// communicator's calibrated codebook, the type's default, or a fixed 3-bit one); a receive of
// another type or count still gets the mismatch verdict; KV shifted off the default codebook is
// followed by recalibration (tests/comm_codebook_test.cc does it for BF16); SZ_CODEC=auto compresses
// them where its model says frames win (a slow emulated link); and the per-path predicate
// (Op::compressible) keeps device buffers' types as they were.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "codec/dtype.h"
#include "kv_samples.h"
#include "oracle_ratio.h"
#include "src/proto/op.h"
#include "two_rank_transfer.h"
#include "two_ranks.h"
#include "splitzip.h"

namespace {

using sz::szTypeName;

constexpr int kSends = 3;
constexpr size_t kSliceBytes = 256 << 10;

struct TypeCase {
  szDataType_t type;
  const char* sample;  // tests/data
  int shift;           // exponents added to move the KV off the type's default codebook
};
const TypeCase kTypes[] = {{szFloat16, "tinystories_kv_eval_fp16.safetensors", 9},
                           {szFloat8e4m3, "tinystories_kv_eval_e4m3.safetensors", -6}};

std::vector<uint8_t> shifted(const TypeCase& c, const std::vector<uint8_t>& kv) {
  return c.type == szFloat16 ? sztest::scaledFp16(kv, c.shift) : sztest::scaledE4m3(kv, c.shift);
}

using sztest::Transfer;

// Rank 0 sends each buffer of `data` as `type` `sends` times to rank 1 (sztest::sendEach), in
// slices of kSliceBytes with the given codebook mode and codec mode.
Transfer transfer(szDataType_t type, const std::vector<std::vector<uint8_t>>& data, int sends = kSends,
                  int codebookMode = SZ_CODEBOOK_AUTO, const szCodebook_t* codebook = nullptr,
                  int codec = SZ_CODEC_ON) {
  return sztest::sendEach(type, data, sends, [&](szConfig_t& cfg) {
    cfg.sliceBytes = kSliceBytes;
    cfg.codebookMode = codebookMode;
    cfg.codebook = codebook;
    cfg.codec = codec;
  });
}

// Every bit pattern of `type` (FP16: 65536, E4M3: 256) in order, repeated to `count` elements.
std::vector<uint8_t> allPatterns(szDataType_t type, size_t count) {
  const size_t elem = szTypeSize(type), patterns = size_t(1) << (8 * elem);
  std::vector<uint8_t> v(count * elem);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t w = uint32_t(i % patterns);
    memcpy(&v[i * elem], &w, elem);
  }
  return v;
}

// The KV with every 61st element replaced by the next bit pattern of the type, cycling through
// all of them: compressed frames whose escapes hold every special value.
std::vector<uint8_t> kvWithAllPatterns(szDataType_t type, std::vector<uint8_t> kv) {
  const size_t elem = szTypeSize(type), patterns = size_t(1) << (8 * elem);
  for (size_t i = 0, k = 0; (i + 1) * elem <= kv.size(); i += 61, ++k) {
    const uint32_t w = uint32_t(k % patterns);
    memcpy(&kv[i * elem], &w, elem);
  }
  return kv;
}

// The ratio of `data` encoded as one frame with `cb` (what `splitzip stats` predicts for it).
double frameRatio(szDataType_t type, const std::vector<uint8_t>& data, const szCodebook_t& cb) {
  const size_t count = data.size() / szTypeSize(type);
  size_t cap = 0, bytes = 0;
  EXPECT_EQ(szEncodeMaxSize(count, type, &cap), szSuccess);
  std::vector<uint8_t> frame(cap);
  EXPECT_EQ(szEncode(data.data(), count, type, &cb, 0, frame.data(), cap, &bytes), szSuccess);
  return double(data.size()) / double(bytes);
}

TEST(CommHostV2Types, EveryBitPatternAtOddCountsIsBitExact) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  for (const TypeCase& c : kTypes) {
    const size_t patterns = size_t(1) << (8 * szTypeSize(c.type));
    std::vector<std::vector<uint8_t>> data;
    // One element, a partial chunk, and several slices ending in a partial one (all odd).
    for (size_t count : {size_t(1), size_t(1023), 5 * patterns + 4097, size_t(524621)})
      data.push_back(allPatterns(c.type, count));
    for (int mode : {SZ_CODEBOOK_AUTO, SZ_CODEBOOK_DEFAULT}) {
      const Transfer t = transfer(c.type, data, 1, mode);
      ASSERT_EQ(t.ratios.size(), data.size()) << szTypeName(c.type);
    }
    // Inside compressed frames: the same patterns as escapes or codes among real KV (an odd count).
    std::vector<uint8_t> kv = kvWithAllPatterns(c.type, sztest::readKvSample(c.sample));
    ASSERT_FALSE(kv.empty());
    kv.resize(kv.size() - szTypeSize(c.type) * 3);
    const Transfer t = transfer(c.type, {kv}, 2);
    printf("[ figures  ] %s KV with every bit pattern: ratios %.4f %.4f, %llu compressed slices, escape rate %.3f %%\n",
           szTypeName(c.type), t.ratios[0], t.ratios[1], (unsigned long long)t.stats.compressedSlices,
           100 * t.stats.escapeRate);
    EXPECT_GT(t.stats.compressedSlices, 0u) << szTypeName(c.type);
    EXPECT_GT(t.ratios[1], 1.0) << szTypeName(c.type);
  }
}

TEST(CommHostV2Types, RealKvCompressesToWhatItsCodebookPredicts) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  for (const TypeCase& c : kTypes) {
    const std::vector<uint8_t> kv = sztest::readKvSample(c.sample);
    ASSERT_FALSE(kv.empty());
    szCodebook_t def;
    ASSERT_EQ(szCodebookDefault(c.type, &def), szSuccess);
    const double oracle = sztest::oracleRatio({kv}, c.type), withDefault = frameRatio(c.type, kv, def);
    const Transfer calibrated = transfer(c.type, {kv}), byDefault = transfer(c.type, {kv}, kSends, SZ_CODEBOOK_DEFAULT);
    const Transfer fixed = transfer(c.type, {kv}, kSends, SZ_CODEBOOK_FIXED, &def);
    printf("[ figures  ] %s KV: oracle %.4f, default codebook %.4f (one frame each); sends: auto %.4f %.4f %.4f "
           "(%llu recalibrations), default %.4f, fixed %.4f\n", szTypeName(c.type), oracle, withDefault,
           calibrated.ratios[0], calibrated.ratios[1], calibrated.ratios[2],
           (unsigned long long)calibrated.stats.recalibrations, byDefault.ratios[2], fixed.ratios[2]);
    for (const Transfer* t : {&calibrated, &byDefault, &fixed}) {
      EXPECT_LT(t->stats.wireBytes, t->stats.rawBytes) << szTypeName(c.type);
      EXPECT_EQ(t->stats.compressedSlices, uint64_t(kSends) * ((kv.size() + kSliceBytes - 1) / kSliceBytes))
          << szTypeName(c.type) << ": every slice a compressed frame";
    }
    // Auto: the first send's later slices go out with the default while the first is calibrated
    // on, or with the first slice's own codebook once it is back (FP16's slices differ: 0.6 % to
    // 6.4 % escapes under one top-8; 1.0596 against the default's 1.0649 in 3 runs of 100 on two
    // cores). From the third send within 3 % of one frame of the whole sample (FP16: 1.1026 in 86
    // runs of 100, 1.0885-1.0906 in 13; E4M3: 1.0715 against 1.0724, and 1.0462-1.0561 in about 3
    // runs of 100, after a chance drift of its steady slices switched codebooks: the drift
    // calibrates on the slice after the one that drifted, and may keep a codebook of fewer
    // slices; issue 33).
    EXPECT_GT(calibrated.ratios[0], withDefault * 0.99) << szTypeName(c.type);
    EXPECT_GT(calibrated.ratios[2], oracle * 0.97) << szTypeName(c.type);
    EXPECT_NEAR(byDefault.ratios[2], withDefault, 0.005 * withDefault) << szTypeName(c.type);
    EXPECT_DOUBLE_EQ(fixed.ratios[2], byDefault.ratios[2]) << szTypeName(c.type);
  }
  // FP16's default has 4-bit codes (zero padding costs a code); this KV has no zeros, and the
  // calibration picks 3-bit codes for it as the CLI's does (splitzip stats: 1.1037 against 1.0652):
  // above 16/15, the most any 4-bit FP16 codebook gives.
  const std::vector<uint8_t> fp16 = sztest::readKvSample(kTypes[0].sample);
  const Transfer t = transfer(szFloat16, {fp16});
  EXPECT_GT(t.ratios[2], 16.0 / 15.0 + 0.005);
}

TEST(CommHostV2Types, ShiftedKvIsFollowedByRecalibrationAsBf16Is) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  for (const TypeCase& c : kTypes) {
    const std::vector<uint8_t> kv = sztest::readKvSample(c.sample);
    ASSERT_FALSE(kv.empty());
    const std::vector<uint8_t> moved = shifted(c, kv);
    const double oracle = sztest::oracleRatio({moved}, c.type);
    const Transfer autoRun = transfer(c.type, {kv, moved}), fixedRun = transfer(c.type, {kv, moved}, kSends,
                                                                                  SZ_CODEBOOK_DEFAULT);
    ASSERT_EQ(autoRun.ratios.size(), size_t(2 * kSends));
    ASSERT_EQ(fixedRun.ratios.size(), size_t(2 * kSends));
    printf("[ figures  ] %s KV x 2^%d (oracle %.4f): auto sends", szTypeName(c.type), c.shift, oracle);
    for (double r : autoRun.ratios) printf(" %.4f", r);
    printf(" (%llu recalibrations, escape rate %.3f %%); default's shifted sends %.4f\n",
           (unsigned long long)autoRun.stats.recalibrations, 100 * autoRun.stats.escapeRate, fixedRun.ratios[kSends]);
    // The default misses the shifted exponents and goes raw; auto compresses from the first
    // shifted send on. E4M3 gets within 3 % of one frame of the whole shifted sample from the
    // second (its codebook comes from one slice, and its slices differ: 1.3 to 2.1 % escapes under
    // one top-8). FP16 does not yet: a drift this soon after its switch to 3-bit codes merges the
    // KV before and after into one 4-bit codebook for both (1.02 against 1.10; open, issue 33), so
    // only compression is asserted for it.
    EXPECT_LT(fixedRun.ratios[kSends], 1.01) << szTypeName(c.type);
    for (int i = kSends; i < 2 * kSends; ++i)
      EXPECT_GT(autoRun.ratios[i], c.type == szFloat8e4m3 && i > kSends ? oracle * 0.97 : 1.01)
          << szTypeName(c.type) << " send " << i;
    EXPECT_GE(autoRun.stats.recalibrations, 1u) << szTypeName(c.type);
    EXPECT_LE(autoRun.stats.recalibrations, 6u) << szTypeName(c.type);
    EXPECT_EQ(fixedRun.stats.recalibrations, 0u) << szTypeName(c.type);
  }
}

// Data that stays raw when encoded again (random bytes) stops re-encodes for a while
// (CodebookDrift::kRetryHold); shifted KV after it is raw under the codebook it meets, and only
// the drift's windows can catch it: a slice the codec stored raw travels as a raw slice, and
// counts as all escapes. Left uncounted, no window ever ended and the KV stayed raw for good.
TEST(CommHostV2Types, KvAfterIncompressibleDataIsFollowedAgain) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  for (const TypeCase& c : kTypes) {
    const std::vector<uint8_t> kv = sztest::readKvSample(c.sample);
    ASSERT_FALSE(kv.empty());
    std::vector<uint8_t> noise(kv.size());
    uint32_t x = 12345;
    for (uint8_t& b : noise) b = uint8_t((x = x * 1664525u + 1013904223u) >> 24);
    const Transfer t = transfer(c.type, {noise, shifted(c, kv)}, 4);
    printf("[ figures  ] %s: random then shifted KV, sends", szTypeName(c.type));
    for (double r : t.ratios) printf(" %.4f", r);
    printf("\n");
    EXPECT_LT(t.ratios[0], 1.0) << szTypeName(c.type) << ": random bytes travel raw";
    // Within four sends of the KV (the holds the random data's calibrations earned pace it: E4M3
    // came back at the fourth, 1.0207, in 5 runs of 40, else by the second; FP16 by the second).
    EXPECT_GT(t.ratios[7], 1.01) << szTypeName(c.type) << ": the shifted KV compresses again";
  }
}

// One send of `count` elements of `sendType` against a receive of `recvCount` of `recvType`,
// codec on; the communicators are aborted after (a mismatch fails them).
void mismatch(szDataType_t sendType, size_t count, szDataType_t recvType, size_t recvCount, szResult_t results[2],
              std::string errors[2]) {
  sztest::onTwoRanks([](szConfig_t& cfg) { cfg.timeoutMs = 10000; },
                     [&](int rank, szComm_t comm) {
                       std::vector<uint8_t> buf =
                           kvWithAllPatterns(sendType, std::vector<uint8_t>(4 * (count + 1000), 0x3C));
                       results[rank] = rank == 0 ? szSend(buf.data(), count, sendType, 1, comm, nullptr)
                                                 : szRecv(buf.data(), recvCount, recvType, 0, comm, nullptr);
                       errors[rank] = szGetLastError(comm);
                     },
                     true);
}

TEST(CommHostV2Types, AReceiveOfAnotherTypeOrCountIsAMismatch) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  const struct {
    szDataType_t send;
    size_t count;
    szDataType_t recv;
    size_t recvCount;
  } cases[] = {{szFloat16, 300001, szFloat16, 300002},  {szFloat16, 300001, szBfloat16, 300001},
               {szFloat8e4m3, 600001, szUint8, 600001}, {szFloat8e4m3, 600001, szFloat8e5m2, 600001},
               {szBfloat16, 1001, szFloat16, 1001},     {szFloat8e4m3, 1001, szFloat8e4m3, 1000}};
  for (const auto& c : cases) {
    szResult_t results[2] = {szInternalError, szInternalError};
    std::string errors[2];
    mismatch(c.send, c.count, c.recv, c.recvCount, results, errors);
    const std::string what = std::string(szTypeName(c.send)) + " x " + std::to_string(c.count) + " into " +
                             szTypeName(c.recv) + " x " + std::to_string(c.recvCount);
    EXPECT_EQ(results[0], szInvalidUsage) << what << ", sender: " << errors[0];
    EXPECT_EQ(results[1], szInvalidUsage) << what << ", receiver: " << errors[1];
  }
}

TEST(CommHostV2Types, AutoCompressesThemOverASlowLink) {
  // A 0.1 GB/s emulated link, slower than the CPU codec of either type on any core: auto's prior
  // (the type's own measured codec rate, the default codebook's ratio: 8/7 for E4M3's 3-bit
  // codes) has frames win from the first send, and the measured sends keep them.
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  setenv("SZ_TCP_LINK_GBPS", "0.1", 1);
  for (const TypeCase& c : kTypes) {
    const std::vector<uint8_t> kv = sztest::readKvSample(c.sample);
    ASSERT_FALSE(kv.empty());
    const Transfer t = transfer(c.type, {kv}, 4, SZ_CODEBOOK_AUTO, nullptr, SZ_CODEC_AUTO);
    printf("[ figures  ] %s KV, SZ_CODEC=auto over 0.1 GB/s: ratios %.4f %.4f %.4f %.4f, %llu compressed slices\n",
           szTypeName(c.type), t.ratios[0], t.ratios[1], t.ratios[2], t.ratios[3],
           (unsigned long long)t.stats.compressedSlices);
    EXPECT_GT(t.stats.compressedSlices, 0u) << szTypeName(c.type);
    EXPECT_LT(t.stats.wireBytes, t.stats.rawBytes) << szTypeName(c.type);
  }
  unsetenv("SZ_TCP_LINK_GBPS");
}

TEST(CommHostV2Types, BothPathsCompressEveryTypeWithAnExponent) {
  for (int t = 0; t < szNumTypes; ++t) {
    sz::Op host, device;
    host.type = device.type = szDataType_t(t);
    device.device = true;
    EXPECT_EQ(host.compressible(), szTypeIsCompressible(szDataType_t(t)) != 0) << sz::szTypeName(t);
    EXPECT_EQ(device.compressible(), szTypeIsCompressible(szDataType_t(t)) != 0) << sz::szTypeName(t);
  }
  for (szDataType_t t : {szFloat16, szFloat8e4m3}) {
    sz::Op op;
    op.type = t;
    op.device = true;
    EXPECT_TRUE(op.compressible()) << sz::szTypeName(t) << ": the slot kernels code it";
  }
  sz::Op ints;
  ints.type = szInt32;
  ints.device = true;
  EXPECT_FALSE(ints.compressible());
}

}  // namespace
