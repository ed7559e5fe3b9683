// Format version 2 on the host codec (docs/FORMAT.md §Code width): FP16 and FP8 E4M3 as
// compressed types, 3-bit exponent codes for every type, calibration's choice of width, and the
// header rules that keep version 1 frames (and 0.1.0's readers) as they were.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "encode_frame.h"
#include "kv_like.h"
#include "kv_samples.h"
#include "reference_frame.h"
#include "splitzip.h"

namespace {

// Encodes, compares with the reference encoder byte for byte, decodes and compares bits.
// Returns the frame.
std::vector<uint8_t> roundTrip(const void* data, size_t count, szDataType_t type, const szCodebook_t& cb) {
  auto frame = sztest::encodeFrame(data, count, type, &cb);
  EXPECT_TRUE(frame == sztest::referenceEncode(data, count, type, cb, false))
      << "frame differs from the reference encoder, count " << count;
  const size_t bytes = count * szTypeSize(type);
  std::vector<uint8_t> out(bytes + 1, 0xA5);
  EXPECT_EQ(szDecode(frame.data(), frame.size(), out.data(), bytes, nullptr, nullptr), szSuccess)
      << szGetLastError(nullptr);
  EXPECT_EQ(out[bytes], 0xA5) << "decoder wrote past its output";
  EXPECT_EQ(memcmp(out.data(), data, bytes), 0) << "not bit-exact, count " << count;
  return frame;
}

uint16_t version(const std::vector<uint8_t>& f) { return uint16_t(f[4] | f[5] << 8); }

TEST(CodecV2, EveryE4m3ByteRoundTripsUnderThreeBitCodes) {
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e4m3, &cb), szSuccess);
  int bits = 0;
  ASSERT_EQ(szCodebookCodeBits(&cb, &bits), szSuccess);
  EXPECT_EQ(bits, 3);
  EXPECT_EQ(cb.used, 8);
  // Every byte (NaN 0x7F/0xFF, +-0, subnormals, +-448) amid codebook exponents, so it compresses.
  const std::vector<uint8_t> v = sztest::everyPatternAmidCodebook<uint8_t>(3, cb, 8, 32);
  for (size_t n : {size_t(1), size_t(7), size_t(9), size_t(1023), size_t(1025), v.size()}) roundTrip(v.data(), n, szFloat8e4m3, cb);
  auto frame = roundTrip(v.data(), v.size(), szFloat8e4m3, cb);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(version(frame), 2);
  EXPECT_EQ(frame[10], 3) << "code_bits";
  // 128 of the 256 byte values have an exponent outside the 8 entries.
  EXPECT_EQ(info.escapeCount, 128u);
  ASSERT_EQ(szCodebookCodeBits(&info.codebook, &bits), szSuccess);
  EXPECT_EQ(bits, 3) << "szFrameGetInfo gives the frame's codebook with its width";
}

TEST(CodecV2, EveryFp16BitPatternRoundTripsAtBothWidths) {
  szCodebook_t wide;
  ASSERT_EQ(szCodebookDefault(szFloat16, &wide), szSuccess);
  int bits = 0;
  ASSERT_EQ(szCodebookCodeBits(&wide, &bits), szSuccess);
  EXPECT_EQ(bits, 4);
  // NaN payloads, Inf, -0, subnormals: every pattern, amid codebook ones.
  const std::vector<uint16_t> v = sztest::everyPatternAmidCodebook<uint16_t>(10, wide, 16, 16);
  auto f4 = roundTrip(v.data(), v.size(), szFloat16, wide);
  EXPECT_EQ(version(f4), 2) << "FP16 frames are version 2 at either width";
  EXPECT_EQ(f4[10], 4);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(f4.data(), f4.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.escapeCount, 65536u - 16u * 2048u);  // 2048 patterns per exponent, 16 in the book
  // 3-bit codes: every pattern amid the 8 most frequent exponents, which calibration then picks.
  const std::vector<uint16_t> v8 = sztest::everyPatternAmidCodebook<uint16_t>(10, wide, 8, 32);
  const szCodebook_t narrow = sztest::calibratedCodebook(v8.data(), v8.size(), szFloat16, 3);
  for (size_t n : {size_t(1), size_t(7), size_t(9), size_t(1023), size_t(1025), size_t(33333)}) roundTrip(v8.data() + 5, n, szFloat16, narrow);
  auto f3 = roundTrip(v8.data(), v8.size(), szFloat16, narrow);
  EXPECT_EQ(f3[10], 3);
  ASSERT_EQ(szFrameGetInfo(f3.data(), f3.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.escapeCount, 65536u - 8u * 2048u);
}

TEST(CodecV2, ThreeBitCodesOnTheVersionOneTypes) {
  const auto bf16 = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  const auto e5m2 = sztest::readKvSample("tinystories_kv_eval_e5m2.safetensors");
  ASSERT_FALSE(bf16.empty());
  ASSERT_FALSE(e5m2.empty());
  const auto fp32 = sztest::widenBf16ToFp32(bf16);
  struct Case { const std::vector<uint8_t>* data; szDataType_t type; };
  for (const Case& c : {Case{&bf16, szBfloat16}, Case{&fp32, szFloat32}, Case{&e5m2, szFloat8e5m2}}) {
    const size_t count = c.data->size() / szTypeSize(c.type);
    const szCodebook_t cb = sztest::calibratedCodebook(c.data->data(), count, c.type, 3);
    for (size_t n : {size_t(1), size_t(9), size_t(1025), size_t(33333), count}) {
      auto f = roundTrip(c.data->data(), n, c.type, cb);
      if (n == count) {
        EXPECT_EQ(version(f), 2);
        EXPECT_EQ(f[10], 3);
      }
    }
  }
}

TEST(CodecV2, VersionOneFramesStayVersionOne) {
  const auto bf16 = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  ASSERT_FALSE(bf16.empty());
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  auto f = roundTrip(bf16.data(), bf16.size() / 2, szBfloat16, cb);
  EXPECT_EQ(version(f), 1) << "bf16 with 4-bit codes is what 0.1.0 reads";
  EXPECT_EQ(f[10], 0);
  EXPECT_EQ(f[11], 0);
  // Calibration keeps the version 1 types at 4 bits (the GPU codec's and the wire's width).
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  ASSERT_EQ(szHistogramAccumulate(&h, bf16.data(), bf16.size() / 2), szSuccess);
  szCodebook_t chosen;
  ASSERT_EQ(szCodebookFromHistogram(&h, &chosen), szSuccess);
  int bits = 0;
  ASSERT_EQ(szCodebookCodeBits(&chosen, &bits), szSuccess);
  EXPECT_EQ(bits, 4);
  auto g = sztest::encodeFrame(bf16.data(), bf16.size() / 2, szBfloat16, nullptr, SZ_ENCODE_CALIBRATE);
  EXPECT_EQ(version(g), 1);
  // Raw frames of the new types are version 1 too.
  std::vector<uint8_t> noise(4096);
  std::mt19937 rng(5);
  for (auto& b : noise) b = uint8_t(rng());
  szCodebook_t e4m3;
  ASSERT_EQ(szCodebookDefault(szFloat8e4m3, &e4m3), szSuccess);
  auto raw = roundTrip(noise.data(), noise.size(), szFloat8e4m3, e4m3);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(raw.data(), raw.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 1);
  EXPECT_EQ(version(raw), 1);
}

// The shipped FP16 and E4M3 samples: calibration chooses the width that predicts better, and the
// frame's ratio is within 0.5 % of that prediction (the oracle top-8 or top-16).
TEST(CodecV2, CalibrationPicksTheWidthOnRealKv) {
  struct Sample { const char* file; szDataType_t type; int expectBits; double floor; };
  for (const Sample& s : {Sample{"tinystories_kv_eval_fp16.safetensors", szFloat16, 3, 1.09},
                          Sample{"tinystories_kv_eval_e4m3.safetensors", szFloat8e4m3, 3, 1.07},
                          // SmolLM2 spreads wider (95 % in the top 8): 4 bits win for FP16.
                          Sample{"smollm2_kv_eval_fp16.safetensors", szFloat16, 4, 1.06},
                          Sample{"smollm2_kv_eval_e4m3.safetensors", szFloat8e4m3, 3, 1.03}}) {
    SCOPED_TRACE(s.file);
    const auto data = sztest::readKvSample(s.file);
    ASSERT_FALSE(data.empty());
    const size_t count = data.size() / szTypeSize(s.type);
    szHistogram_t h;
    ASSERT_EQ(szHistogramInit(&h, s.type), szSuccess);
    ASSERT_EQ(szHistogramAccumulate(&h, data.data(), count), szSuccess);
    double r3 = 0, r4 = 0;
    ASSERT_EQ(szCodebookPredictRatio(&h, 3, &r3), szSuccess);
    ASSERT_EQ(szCodebookPredictRatio(&h, 4, &r4), szSuccess);
    szCodebook_t cb;
    ASSERT_EQ(szCodebookFromHistogram(&h, &cb), szSuccess);
    int bits = 0;
    ASSERT_EQ(szCodebookCodeBits(&cb, &bits), szSuccess);
    EXPECT_EQ(bits, s.expectBits) << "predicted " << r3 << " (3-bit) and " << r4 << " (4-bit)";
    auto f = sztest::encodeFrame(data.data(), count, s.type, nullptr, SZ_ENCODE_CALIBRATE);
    const double ratio = double(data.size()) / double(f.size());
    EXPECT_GE(ratio, 0.995 * std::max(r3, r4)) << "3-bit " << r3 << ", 4-bit " << r4;
    EXPECT_GE(ratio, s.floor);
    std::vector<uint8_t> out(data.size());
    ASSERT_EQ(szDecode(f.data(), f.size(), out.data(), out.size(), nullptr, nullptr), szSuccess);
    EXPECT_TRUE(out == data);
  }
  // The defaults on the same samples: FP16 4-bit (zeros keep a code), E4M3 3-bit.
  const auto fp16 = sztest::readKvSample("tinystories_kv_eval_fp16.safetensors");
  auto f = sztest::encodeFrame(fp16.data(), fp16.size() / 2, szFloat16, nullptr);
  EXPECT_GE(double(fp16.size()) / double(f.size()), 1.06);
}

TEST(CodecV2, HostileVersionTwoHeadersAreRefused) {
  const auto fp16 = sztest::readKvSample("tinystories_kv_eval_fp16.safetensors");
  ASSERT_FALSE(fp16.empty());
  const size_t count = 20000;
  const szCodebook_t narrow = sztest::calibratedCodebook(fp16.data(), count, szFloat16, 3);
  const auto good = sztest::encodeFrame(fp16.data(), count, szFloat16, &narrow);
  ASSERT_EQ(good[10], 3);
  std::vector<uint8_t> out(count * 2);
  auto refused = [&](std::vector<uint8_t> f, const char* what) {
    EXPECT_EQ(szDecode(f.data(), f.size(), out.data(), out.size(), nullptr, nullptr), szCorruptFrame) << what;
    szFrameInfo_t info;
    EXPECT_EQ(szFrameGetInfo(f.data(), f.size(), &info), szCorruptFrame) << what;
  };
  auto with = [&](size_t at, uint8_t v) { auto f = good; f[at] = v; return f; };
  refused(with(10, 5), "code width 5");
  refused(with(10, 0), "code width 0 in a compressed version 2 frame");
  refused(with(10, 4), "4-bit width with a 3-bit frame's section sizes");
  refused(with(9, 9), "codebook_used 9 with 3-bit codes");
  refused(with(64 + 8, 1), "a 3-bit codebook with a ninth entry");
  refused(with(64 + 1, good[64]), "duplicate entries");
  refused(with(64, 40), "entry outside FP16's exponent range");
  refused(with(11, 1), "reserved byte 11");
  refused(with(4, 3), "version 3");
  // One encoding per frame: a version 1 frame relabelled version 2 (with its width) is refused.
  const auto bf16v1 = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  auto relabelled = sztest::encodeFrame(bf16v1.data(), count, szBfloat16, nullptr);
  ASSERT_EQ(version(relabelled), 1);
  relabelled[4] = 2;
  relabelled[10] = 4;
  refused(relabelled, "bf16 4-bit frame marked version 2");
  auto v1 = with(4, 1);
  refused(v1, "an FP16 compressed frame marked version 1");
  v1[10] = 0;
  refused(v1, "an FP16 compressed frame marked version 1, width cleared");
  // A version 1 BF16 frame with its reserved byte 10 set.
  const auto bf16 = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  auto b = sztest::encodeFrame(bf16.data(), count, szBfloat16, nullptr);
  ASSERT_EQ(version(b), 1);
  b[10] = 4;
  EXPECT_EQ(szDecode(b.data(), b.size(), out.data(), out.size(), nullptr, nullptr), szCorruptFrame);
  // The decoder's message names the field.
  (void)szDecode(with(10, 5).data(), good.size(), out.data(), out.size(), nullptr, nullptr);
  auto bad = with(10, 5);
  EXPECT_EQ(szDecode(bad.data(), bad.size(), out.data(), out.size(), nullptr, nullptr), szCorruptFrame);
  EXPECT_NE(std::string(szGetLastError(nullptr)).find("code width"), std::string::npos) << szGetLastError(nullptr);
}

TEST(CodecV2, CodebookWidthRules) {
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e4m3, &cb), szSuccess);
  szCodebook_t bad = cb;
  bad.used = 9;
  EXPECT_EQ(szCodebookValidate(&bad), szInvalidArgument) << "used 9 with 3-bit codes";
  bad = cb;
  bad.exponents[9] = 3;  // no longer marked: a 4-bit codebook with seven 0xFF entries
  EXPECT_EQ(szCodebookValidate(&bad), szInvalidArgument);
  bad = cb;
  bad.exponents[2] = bad.exponents[1];
  EXPECT_EQ(szCodebookValidate(&bad), szInvalidArgument);
  int bits = 0;
  EXPECT_EQ(szCodebookCodeBits(&bad, &bits), szInvalidArgument);
  EXPECT_EQ(szCodebookCodeBits(&cb, nullptr), szInvalidArgument);
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szFloat16), szSuccess);
  EXPECT_EQ(szCodebookFromHistogramBits(&h, 5, &cb), szInvalidArgument);
  double r = 0;
  EXPECT_EQ(szCodebookPredictRatio(&h, 2, &r), szInvalidArgument);
  ASSERT_EQ(szCodebookPredictRatio(&h, 3, &r), szSuccess);
  EXPECT_EQ(r, 1.0) << "an empty histogram predicts nothing saved";
  // A 3-bit codebook for FP32 from an all-zero histogram is still valid (padding entries).
  szHistogram_t z;
  ASSERT_EQ(szHistogramInit(&z, szFloat32), szSuccess);
  ASSERT_EQ(szCodebookFromHistogramBits(&z, 3, &cb), szSuccess);
  EXPECT_EQ(szCodebookValidate(&cb), szSuccess);
  EXPECT_EQ(cb.used, 1);
  ASSERT_EQ(szCodebookCodeBits(&cb, &bits), szSuccess);
  EXPECT_EQ(bits, 3);
}

}  // namespace

namespace {

// The shipped codebook files of the new types are the built-in defaults, and a 3-bit codebook
// survives a save and a load.
TEST(CodecV2, CodebookFilesCarryTheWidth) {
  for (szDataType_t type : {szFloat16, szFloat8e4m3}) {
    szCodebook_t def, file;
    ASSERT_EQ(szCodebookDefault(type, &def), szSuccess);
    const std::string path =
        sztest::kvSamplePath(type == szFloat16 ? "default_fp16.codebook" : "default_fp8e4m3.codebook");
    ASSERT_EQ(szCodebookLoad(path.c_str(), &file), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(file.type, def.type);
    EXPECT_EQ(file.used, def.used);
    EXPECT_EQ(memcmp(file.exponents, def.exponents, sizeof(def.exponents)), 0);
  }
  szCodebook_t e4m3, back;
  ASSERT_EQ(szCodebookDefault(szFloat8e4m3, &e4m3), szSuccess);
  const std::string tmp = ::testing::TempDir() + "sz_v2.codebook";
  ASSERT_EQ(szCodebookSave(&e4m3, tmp.c_str()), szSuccess);
  ASSERT_EQ(szCodebookLoad(tmp.c_str(), &back), szSuccess);
  EXPECT_EQ(memcmp(&e4m3, &back, sizeof(back)), 0);
  auto write = [&](const char* text) {
    FILE* f = fopen(tmp.c_str(), "w");
    fputs(text, f);
    fclose(f);
    return szCodebookLoad(tmp.c_str(), &back);
  };
  EXPECT_EQ(write("splitzip-codebook 1\ntype fp8e4m3\nused 8\ncode_bits 3\nexponents 1 2 3 4 5 6 7 8 9\n"),
            szInvalidArgument) << "nine exponents for 3-bit codes";
  EXPECT_EQ(write("splitzip-codebook 1\ntype fp16\nused 8\ncode_bits 5\nexponents 1 2 3 4 5 6 7 8\n"),
            szInvalidArgument);
  EXPECT_EQ(write("splitzip-codebook 1\ntype fp16\nused 8\nexponents 1 2 3 4 5 6 7 8\n"), szInvalidArgument)
      << "8 exponents without code_bits 3";
  EXPECT_EQ(write("splitzip-codebook 1\ntype fp16\nused 8\ncode_bits 3\nexponents 1 2 3 4 5 6 7 8\n"), szSuccess);
  int bits = 0;
  ASSERT_EQ(szCodebookCodeBits(&back, &bits), szSuccess);
  EXPECT_EQ(bits, 3);
  remove(tmp.c_str());
}

}  // namespace
