// The GPU calibration (kernels/calibrate.h) against the CPU's, bit for bit: on the shipped real
// KV samples (tests/data) as they are, with zero padding, scaled by powers of two (exponents
// shifted off the default codebook) and as FP32, from misaligned pointers, and on no elements.
// The histogram must equal szHistogramAccumulate's and the codebook szCodebookFromHistogram's.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "kernels/calibrate.h"
#include "tests/kv_samples.h"

namespace {

void expectSameCalibration(const std::vector<uint8_t>& host, szDataType_t type, size_t misalign,
                           const std::string& what) {
  SCOPED_TRACE(what + ", misaligned by " + std::to_string(misalign));
  const size_t count = host.size() / szTypeSize(type);
  sztest::DeviceBuffer data(host.size(), misalign), counts(sz::kCalibrateCountsBytes), book(sizeof(szCodebook_t));
  ASSERT_NE(data.base, nullptr);
  CUDA_ASSERT(cudaMemcpy(data.ptr(), host.data(), host.size(), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_EQ(sz::calibrateAsync(count ? data.ptr() : nullptr, count, type,
                               reinterpret_cast<unsigned long long*>(counts.ptr()),
                               reinterpret_cast<szCodebook_t*>(book.ptr()), stream),
            szSuccess)
      << szGetLastError(nullptr);
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  CUDA_ASSERT(cudaStreamDestroy(stream));
  szHistogram_t hist;
  ASSERT_EQ(szHistogramInit(&hist, type), szSuccess);
  ASSERT_EQ(szHistogramAccumulate(&hist, host.data(), count), szSuccess);
  szCodebook_t expected{};
  ASSERT_EQ(szCodebookFromHistogram(&hist, &expected), szSuccess);
  std::vector<uint8_t> gotCounts = counts.download(sz::kCalibrateCountsBytes);
  EXPECT_EQ(memcmp(gotCounts.data(), hist.counts, sz::kCalibrateCountsBytes), 0) << "histogram";
  std::vector<uint8_t> gotBook = book.download(sizeof(szCodebook_t));
  szCodebook_t got;
  memcpy(&got, gotBook.data(), sizeof(got));
  EXPECT_EQ(got.type, expected.type);
  EXPECT_EQ(got.used, expected.used);
  EXPECT_EQ(memcmp(got.exponents, expected.exponents, SZ_CODEBOOK_SIZE), 0) << "exponents";
  EXPECT_TRUE(book.guardIntact(sizeof(szCodebook_t)));
  EXPECT_TRUE(counts.guardIntact(sz::kCalibrateCountsBytes));
}

TEST(GpuCalibrate, MatchesTheCpuOnTheShippedSamples) {
  SKIP_WITHOUT_GPU();
  const std::vector<uint8_t> bf16 = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  const std::vector<uint8_t> smollm2 = sztest::readKvSample("smollm2_kv_eval_bf16.safetensors");
  const std::vector<uint8_t> e5m2 = sztest::readKvSample("tinystories_kv_eval_e5m2.safetensors");
  ASSERT_FALSE(bf16.empty() || smollm2.empty() || e5m2.empty());
  std::vector<uint8_t> padded = bf16;
  padded.resize(bf16.size() * 2, 0);  // half zeros
  for (size_t misalign : {size_t(0), size_t(1)}) {
    expectSameCalibration(bf16, szBfloat16, misalign, "tinystories bf16");
    expectSameCalibration(smollm2, szBfloat16, misalign, "smollm2 bf16");
    expectSameCalibration(e5m2, szFloat8e5m2, misalign, "tinystories e5m2");
    expectSameCalibration(sztest::widenBf16ToFp32(bf16), szFloat32, misalign, "tinystories as fp32");
    expectSameCalibration(padded, szBfloat16, misalign, "tinystories bf16, 50 % zeros");
    for (int shift : {-40, 9, 60}) expectSameCalibration(sztest::scaledBf16(bf16, shift), szBfloat16, misalign,
                                                         "tinystories bf16 x 2^" + std::to_string(shift));
  }
  expectSameCalibration({}, szBfloat16, 0, "no elements");
  expectSameCalibration(std::vector<uint8_t>(bf16.begin(), bf16.begin() + 2), szBfloat16, 0, "one element");
}

TEST(GpuCalibrate, RefusesBadArguments) {
  SKIP_WITHOUT_GPU();
  sztest::DeviceBuffer counts(sz::kCalibrateCountsBytes), book(sizeof(szCodebook_t));
  auto* c = reinterpret_cast<unsigned long long*>(counts.ptr());
  auto* b = reinterpret_cast<szCodebook_t*>(book.ptr());
  EXPECT_EQ(sz::calibrateAsync(nullptr, 10, szBfloat16, c, b, nullptr), szInvalidArgument);
  EXPECT_EQ(sz::calibrateAsync(counts.ptr(), 10, szFloat16, c, b, nullptr), szInvalidArgument);
  EXPECT_EQ(sz::calibrateAsync(counts.ptr(), 10, szBfloat16, nullptr, b, nullptr), szInvalidArgument);
  EXPECT_EQ(sz::calibrateAsync(counts.ptr(), 10, szBfloat16, c, nullptr, nullptr), szInvalidArgument);
}

}  // namespace
