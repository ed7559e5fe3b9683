// Round trips of the host codec: bit-exact output, frames byte-identical to the reference
// encoder of docs/FORMAT.md, raw fallback, every BF16 and FP8 bit pattern, many sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "encode_frame.h"
#include "kv_like.h"
#include "reference_frame.h"
#include "splitzip.h"

namespace {

std::vector<uint8_t> decode(const std::vector<uint8_t>& frame, size_t rawBytes) {
  std::vector<uint8_t> out(rawBytes + 1, 0xA5);
  size_t count = 0;
  szDataType_t type;
  EXPECT_EQ(szDecode(frame.data(), frame.size(), out.data(), rawBytes, &count, &type), szSuccess)
      << szGetLastError(nullptr);
  EXPECT_EQ(out[rawBytes], 0xA5) << "decoder wrote past its output";
  out.resize(rawBytes);
  return out;
}

using sztest::kvLikeBf16;

void expectRoundTrip(const void* data, size_t count, szDataType_t type, const szCodebook_t* cb) {
  szCodebook_t def;
  if (cb == nullptr && szTypeIsCompressible(type)) {
    ASSERT_EQ(szCodebookDefault(type, &def), szSuccess);
    cb = &def;
  }
  szCodebook_t none{};
  auto frame = sztest::encodeFrame(data, count, type, cb);
  auto ref = sztest::referenceEncode(data, count, type, cb ? *cb : none, false);
  ASSERT_EQ(frame.size(), ref.size()) << "count " << count;
  ASSERT_TRUE(frame == ref) << "frame differs from the reference encoder, count " << count;
  auto out = decode(frame, count * szTypeSize(type));
  ASSERT_EQ(memcmp(out.data(), data, count * szTypeSize(type)), 0) << "count " << count;
}

TEST(CodecRoundTrip, EveryBf16BitPattern) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  auto frame = sztest::encodeFrame(all.data(), all.size(), szBfloat16, nullptr);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 1) << "240 of 256 exponents escape: must be stored raw";
  EXPECT_EQ(frame.size(), SZ_FRAME_HEADER_BYTES + 2 * 65536u);
  EXPECT_EQ(decode(frame, 2 * 65536), std::vector<uint8_t>((uint8_t*)all.data(), (uint8_t*)all.data() + 131072));
  // The same patterns, each exponent class repeated so that codebook ones dominate: compressed.
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  std::vector<uint16_t> mixed = sztest::everyBf16PatternAmidCodebook(cb);
  expectRoundTrip(mixed.data(), mixed.size(), szBfloat16, &cb);
  auto f2 = sztest::encodeFrame(mixed.data(), mixed.size(), szBfloat16, &cb);
  ASSERT_EQ(szFrameGetInfo(f2.data(), f2.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.escapeCount, 65536u - 16 * 256u);
}

TEST(CodecRoundTrip, EveryFp8E5m2BitPattern) {
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &cb), szSuccess);
  std::vector<uint8_t> v;
  for (int rep = 0; rep < 40; ++rep)
    for (int i = 0; i < 256; ++i) v.push_back(uint8_t(i));
  for (int rep = 0; rep < 4000; ++rep)  // mostly codebook exponents so the frame compresses
    for (int i = 0; i < 64; ++i) v.push_back(uint8_t((i & 0x83) | (cb.exponents[(i >> 2) % 16] << 2)));
  expectRoundTrip(v.data(), v.size(), szFloat8e5m2, &cb);
  szFrameInfo_t info;
  // Odd sizes (tails of the eight-at-a-time kernel) with an escape every 97 elements.
  std::vector<uint8_t> sparse(40000);
  for (size_t i = 0; i < sparse.size(); ++i)
    sparse[i] = uint8_t((i & 0x83) | ((i % 97 == 5 ? 30 : cb.exponents[i % 16]) << 2));
  for (size_t n : {1, 7, 9, 1023, 1025, 33333}) expectRoundTrip(sparse.data() + 3, n, szFloat8e5m2, &cb);
  auto sparseFrame = sztest::encodeFrame(sparse.data(), sparse.size(), szFloat8e5m2, &cb);
  ASSERT_EQ(szFrameGetInfo(sparseFrame.data(), sparseFrame.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.escapeCount, (sparse.size() + 91) / 97);
  auto frame = sztest::encodeFrame(v.data(), v.size(), szFloat8e5m2, &cb);
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.escapeCount, 40u * 128u);
}

TEST(CodecRoundTrip, SizesAroundChunkAndGroupBoundaries) {
  auto data = kvLikeBf16(1000003 + 64, 7);
  for (size_t n : {0, 1, 3, 7, 31, 32, 33, 1023, 1024, 1025, 32767, 32768, 32769, 65536 + 5, 1000003})
    expectRoundTrip(data.data(), n, szBfloat16, nullptr);
  // Unaligned input pointer (odd byte offset) goes through the same path.
  expectRoundTrip(reinterpret_cast<const uint8_t*>(data.data()) + 1, 4099, szBfloat16, nullptr);
}

TEST(CodecRoundTrip, LargeInputUsesThreadsAndStaysIdentical) {
  auto data = kvLikeBf16(3u << 20, 11);  // 6 MiB: above the parallel threshold
  expectRoundTrip(data.data(), data.size(), szBfloat16, nullptr);
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16, &cb);
  double ratio = double(2 * data.size()) / double(frame.size());
  EXPECT_GT(ratio, 1.25) << "normal data should compress to ~4/3";
  EXPECT_LE(ratio, 4.0 / 3.0);
}

TEST(CodecRoundTrip, Fp32AndFp8AndRawTypes) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> f32(50001);
  for (auto& x : f32) x = dist(rng);
  expectRoundTrip(f32.data(), f32.size(), szFloat32, nullptr);
  auto frame = sztest::encodeFrame(f32.data(), f32.size(), szFloat32, nullptr);
  EXPECT_LT(frame.size(), f32.size() * 4 * 0.9);
  std::vector<uint8_t> bytes(77777);
  for (auto& b : bytes) b = uint8_t(rng());
  for (szDataType_t t : {szInt8, szUint8, szInt32, szUint32, szInt64, szUint64, szFloat16,
                         szFloat64, szFloat8e4m3}) {
    size_t n = bytes.size() / szTypeSize(t);
    expectRoundTrip(bytes.data(), n, t, nullptr);
    auto raw = sztest::encodeFrame(bytes.data(), n, t, nullptr);
    EXPECT_EQ(raw.size(), SZ_FRAME_HEADER_BYTES + n * szTypeSize(t));
  }
}

TEST(CodecRoundTrip, SpecialValuesBitExact) {
  std::vector<uint16_t> v;
  for (uint32_t payload = 1; payload < 128; ++payload) {  // every NaN payload, both signs
    v.push_back(uint16_t(0x7F80 | payload));
    v.push_back(uint16_t(0xFF80 | payload));
  }
  for (uint16_t s : {0x0000, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x807F, 0x0040}) v.push_back(s);
  auto kv = kvLikeBf16(4096, 5);  // keep it compressible so escapes are exercised
  v.insert(v.end(), kv.begin(), kv.end());
  expectRoundTrip(v.data(), v.size(), szBfloat16, nullptr);
}

TEST(CodecRoundTrip, RandomBitsFallBackToRawNeverExpand) {
  std::mt19937 rng(9);
  std::vector<uint16_t> v(100000);
  for (auto& x : v) x = uint16_t(rng());
  auto frame = sztest::encodeFrame(v.data(), v.size(), szBfloat16, nullptr);
  EXPECT_EQ(frame.size(), SZ_FRAME_HEADER_BYTES + 2 * v.size());
  // > 16 distinct exponents used evenly.
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t(((96 + i % 40) << 7) | (i & 0x7F));
  frame = sztest::encodeFrame(v.data(), v.size(), szBfloat16, nullptr, SZ_ENCODE_CALIBRATE);
  EXPECT_LE(frame.size(), SZ_FRAME_HEADER_BYTES + 2 * v.size());
  expectRoundTrip(v.data(), v.size(), szBfloat16, nullptr);
}

TEST(CodecRoundTrip, ConstantTensorAndSmallCodebook) {
  std::vector<uint16_t> v(70000, 0x3F80);  // 1.0
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  ASSERT_EQ(szHistogramAccumulate(&h, v.data(), v.size()), szSuccess);
  szCodebook_t cb;
  ASSERT_EQ(szCodebookFromHistogram(&h, &cb), szSuccess);
  EXPECT_EQ(cb.used, 1);
  EXPECT_EQ(cb.exponents[0], 127);
  EXPECT_EQ(szCodebookValidate(&cb), szSuccess);
  expectRoundTrip(v.data(), v.size(), szBfloat16, &cb);
  auto frame = sztest::encodeFrame(v.data(), v.size(), szBfloat16, nullptr, SZ_ENCODE_CALIBRATE);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  EXPECT_EQ(info.codebook.used, 1);
  EXPECT_EQ(info.escapeCount, 0u);
}

TEST(CodecRoundTrip, CrcFramesVerify) {
  auto data = kvLikeBf16(10000, 1);
  auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16, nullptr, SZ_ENCODE_CRC);
  auto out = decode(frame, 2 * data.size());
  EXPECT_EQ(memcmp(out.data(), data.data(), out.size()), 0);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  EXPECT_EQ(info.crc, 1);
}

}  // namespace
