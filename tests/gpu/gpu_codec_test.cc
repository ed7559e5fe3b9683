// GPU codec tests (run on the H200 machine; skipped with a message elsewhere): GPU frames are
// byte-identical to the CPU encoder's, both decoders restore every bit, frames cross between
// CPU and GPU, misaligned pointers and poisoned buffers, corrupted frames report an error.
#include <cstdlib>
#include <random>

#include "../kv_like.h"
#include "gpu_test_util.h"

namespace {

using sztest::cpuEncode;
using sztest::DeviceBuffer;
using sztest::expectSame;
using sztest::gpuDecode;

std::vector<uint16_t> kvLike(size_t n, uint32_t seed) { return sztest::kvLikeBf16(n, seed, 0.8f); }

TEST(GpuCodec, KvLikeBf16Sizes) {
  SKIP_WITHOUT_GPU();
  auto v = kvLike(1000003, 1);
  for (size_t n : {0, 1, 3, 15, 16, 17, 1023, 1024, 1025, 8191, 8192, 32768, 32769, 100000, 1000003})
    expectSame(v.data(), n, szBfloat16, nullptr);
}

TEST(GpuCodec, HugeBf16Frame) {
  SKIP_WITHOUT_GPU();
  if (getenv("SZ_TEST_SMALL")) {
    GTEST_SKIP() << "SZ_TEST_SMALL set: 2^28+5 elements skipped";
  }
  size_t n = (size_t(1) << 28) + 5;
  auto v = kvLike(1 << 20, 2);
  std::vector<uint16_t> big(n);
  for (size_t i = 0; i < n; ++i) big[i] = v[(i * 7919) & ((1 << 20) - 1)];
  expectSame(big.data(), n, szBfloat16, nullptr);
}

TEST(GpuCodec, RealKvSample) {
  SKIP_WITHOUT_GPU();
  const char* path = getenv("SZ_TEST_KV_BF16");
  if (!path) {
    GTEST_SKIP() << "SZ_TEST_KV_BF16 (raw BF16 file of real KV) not set";
  }
  FILE* f = fopen(path, "rb");
  ASSERT_NE(f, nullptr) << path;
  std::vector<uint16_t> v;
  uint16_t buf[4096];
  size_t got;
  while ((got = fread(buf, 2, 4096, f)) > 0) v.insert(v.end(), buf, buf + got);
  fclose(f);
  ASSERT_GT(v.size(), 100000u);
  expectSame(v.data(), v.size(), szBfloat16, nullptr);
  expectSame(v.data(), v.size(), szBfloat16, nullptr, SZ_ENCODE_CALIBRATE);
}

TEST(GpuCodec, EveryBf16PatternAndEscapes) {
  SKIP_WITHOUT_GPU();
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  expectSame(all.data(), all.size(), szBfloat16, nullptr);  // raw fallback
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  std::vector<uint16_t> mixed = sztest::everyBf16PatternAmidCodebook(cb);
  expectSame(mixed.data(), mixed.size(), szBfloat16, &cb);
}

TEST(GpuCodec, EveryFp8E5m2Pattern) {
  SKIP_WITHOUT_GPU();
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &cb), szSuccess);
  std::vector<uint8_t> v;
  for (int rep = 0; rep < 40; ++rep)
    for (int i = 0; i < 256; ++i) v.push_back(uint8_t(i));
  for (int rep = 0; rep < 4000; ++rep)
    for (int i = 0; i < 64; ++i) v.push_back(uint8_t((i & 0x83) | (cb.exponents[(i >> 2) % 16] << 2)));
  expectSame(v.data(), v.size(), szFloat8e5m2, &cb);
  for (size_t n : {1, 7, 1025, 33333}) expectSame(v.data() + 10240, n, szFloat8e5m2, &cb);
}

TEST(GpuCodec, Fp32RawTypesRandomBitsCalibration) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(4);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> f(300001);
  for (auto& x : f) x = d(rng);
  expectSame(f.data(), f.size(), szFloat32, nullptr);
  expectSame(f.data(), f.size(), szFloat32, nullptr, SZ_ENCODE_CALIBRATE);
  std::vector<uint8_t> bytes(1 << 20);
  for (auto& b : bytes) b = uint8_t(rng());
  for (szDataType_t t : {szBfloat16, szFloat16, szInt32, szFloat8e4m3, szFloat8e5m2, szFloat64})
    expectSame(bytes.data(), bytes.size() / szTypeSize(t), t, nullptr);
  auto kv = kvLike(500000, 3);
  expectSame(kv.data(), kv.size(), szBfloat16, nullptr, SZ_ENCODE_CALIBRATE);
}

TEST(GpuCodec, MisalignedPointers) {
  SKIP_WITHOUT_GPU();
  auto v = kvLike(70001, 5);
  for (size_t inMis : {0, 1, 2, 8})
    for (size_t outMis : {0, 1, 4})
      expectSame(v.data(), v.size(), szBfloat16, nullptr, 0, inMis, outMis);
  std::vector<uint8_t> e(50001);
  for (size_t i = 0; i < e.size(); ++i) e[i] = uint8_t(((i % 13) + 9) << 2 | (i & 0x83));
  expectSame(e.data(), e.size(), szFloat8e5m2, nullptr, 0, 3, 1);
}

TEST(GpuCodec, HistogramMatchesCpu) {
  SKIP_WITHOUT_GPU();
  auto v = kvLike(1 << 20, 6);
  DeviceBuffer d(v.size() * 2);
  cudaMemcpy(d.ptr(), v.data(), v.size() * 2, cudaMemcpyHostToDevice);
  unsigned long long* counts;
  CUDA_ASSERT(cudaMalloc(&counts, 256 * 8));
  CUDA_ASSERT(cudaMemset(counts, 0, 256 * 8));
  ASSERT_EQ(szHistogramAsync(d.ptr(), v.size(), szBfloat16, counts, nullptr), szSuccess);
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  ASSERT_EQ(szHistogramAccumulate(&h, v.data(), v.size()), szSuccess);
  unsigned long long g[256];
  CUDA_ASSERT(cudaMemcpy(g, counts, sizeof(g), cudaMemcpyDeviceToHost));
  for (int e = 0; e < 256; ++e) EXPECT_EQ(g[e], h.counts[e]) << "exponent " << e;
  cudaFree(counts);
}

// 300 one-bit flips of the frame of `v` (with escapes at 5 and at `nanAt`): the GPU decoder's
// verdict is the CPU decoder's, and what it decodes is the CPU's bytes; then truncated frames
// and a short output buffer.
void expectCorruptionsAgree(std::vector<uint16_t> v, size_t nanAt) {
  v[5] = 0x0001;  // a denormal: an escape
  v[nanAt] = 0x7F81;  // a NaN: an escape
  auto frame = cpuEncode(v.data(), v.size(), szBfloat16, nullptr);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  ASSERT_GE(info.escapeCount, 2u);
  std::mt19937 rng(8);
  size_t raw = v.size() * 2;
  int corrupt = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = frame;
    size_t pos = trial < 96 ? size_t(trial) : (trial % 2 ? frame.size() - 1 - rng() % 200 : rng() % frame.size());
    bad[pos] ^= uint8_t(1u << (rng() % 8));
    std::vector<uint8_t> cpuOut(raw), gpuOut;
    szResult_t cpu = szDecode(bad.data(), bad.size(), cpuOut.data(), raw, nullptr, nullptr);
    bool guard = false;
    int gpu = gpuDecode(bad, raw, &gpuOut, &guard);
    ASSERT_TRUE(guard) << "decoder wrote past its output, byte " << pos;
    EXPECT_EQ(gpu, int(cpu)) << "flip at byte " << pos;
    if (gpu != szSuccess) {
      ++corrupt;
    } else {
      EXPECT_EQ(memcmp(gpuOut.data(), cpuOut.data(), raw), 0);
    }
  }
  EXPECT_GT(corrupt, 50);
  std::vector<uint8_t> out;
  bool guard;
  EXPECT_EQ(gpuDecode(frame, raw, &out, &guard, 0, 0, frame.size() - 1), szCorruptFrame);
  EXPECT_EQ(gpuDecode(frame, raw, &out, &guard, 0, 0, 50), szCorruptFrame);
  EXPECT_EQ(gpuDecode(frame, raw - 2, &out, &guard), szInvalidArgument);
  EXPECT_TRUE(guard);
}

// A frame of several blocks (the grid after its status reset) and one under 8 KiB (one block,
// one launch, its verdict gathered in the block).
TEST(GpuCodec, CorruptFramesReportErrorsLikeTheCpuDecoder) {
  SKIP_WITHOUT_GPU();
  expectCorruptionsAgree(kvLike(40000, 7), 33000);
  size_t maxSmall = 0;
  ASSERT_EQ(szEncodeMaxSize(3000, szBfloat16, &maxSmall), szSuccess);
  ASSERT_LT(maxSmall, 8192u);
  expectCorruptionsAgree(kvLike(3000, 9), 2500);
}

TEST(GpuCodec, InvalidArgumentsAtEnqueue) {
  SKIP_WITHOUT_GPU();
  uint64_t* bytes;
  CUDA_ASSERT(cudaMalloc(&bytes, 8));
  DeviceBuffer in(2048), out(4096), tmp(1 << 16);
  EXPECT_EQ(szEncodeAsync(in.ptr(), 1024, szBfloat16, nullptr, SZ_ENCODE_CRC, out.ptr(), 4096, bytes, tmp.ptr(), 1 << 16, nullptr), szInvalidUsage);
  EXPECT_EQ(szEncodeAsync(in.ptr(), 1024, szBfloat16, nullptr, 0, out.ptr(), 100, bytes, tmp.ptr(), 1 << 16, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeAsync(in.ptr(), 1024, szBfloat16, nullptr, 0, out.ptr(), 4096, bytes, tmp.ptr(), 8, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeAsync(nullptr, 1024, szBfloat16, nullptr, 0, out.ptr(), 4096, bytes, tmp.ptr(), 1 << 16, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeAsync(in.ptr(), 1024, szNumTypes, nullptr, 0, out.ptr(), 4096, bytes, tmp.ptr(), 1 << 16, nullptr), szInvalidArgument);
  EXPECT_EQ(szDecodeAsync(nullptr, 100, out.ptr(), 100, nullptr, nullptr), szInvalidArgument);
  cudaFree(bytes);
}

}  // namespace

// BF16 with 3-bit codes is the CPU codec's: the CPU writes version 2, the GPU refuses the
// codebook and its decoder answers the valid frame with szInvalidUsage (never a wrong decode).
// FP16 and E4M3 frames: tests/gpu/gpu_codec_v2_test.cc.
TEST(GpuCodec, ThreeBitBf16FramesAreTheCpuCodecs) {
  SKIP_WITHOUT_GPU();
  std::vector<uint8_t> out;
  bool guard = false;
  auto kv = kvLike(50000, 9);
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  ASSERT_EQ(szHistogramAccumulate(&h, kv.data(), kv.size()), szSuccess);
  szCodebook_t narrow;
  ASSERT_EQ(szCodebookFromHistogramBits(&h, 3, &narrow), szSuccess);
  auto f3 = cpuEncode(kv.data(), kv.size(), szBfloat16, &narrow);
  ASSERT_EQ(f3[4], 2);
  EXPECT_EQ(sztest::gpuDecode(f3, kv.size() * 2, &out, &guard), szInvalidUsage);
  EXPECT_TRUE(guard);
  size_t max = 0;
  ASSERT_EQ(szEncodeMaxSize(kv.size(), szBfloat16, &max), szSuccess);
  DeviceBuffer in(kv.size() * 2), o(max * 2 + (1 << 20)), temp(1 << 22);
  uint64_t* outBytes = nullptr;
  ASSERT_EQ(cudaMalloc(&outBytes, sizeof(uint64_t)), cudaSuccess);
  EXPECT_EQ(szEncodeAsync(in.ptr(), kv.size(), szBfloat16, &narrow, 0, o.ptr(), max * 2 + (1 << 20), outBytes,
                          temp.ptr(), 1 << 22, nullptr),
            szInvalidUsage);
  cudaFree(outBytes);
}
