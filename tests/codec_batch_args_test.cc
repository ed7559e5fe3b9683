// The batched device codec's enqueue-time checks (szEncodeBatchAsync / szDecodeBatchAsync),
// which need no GPU: every argument the host can see is checked before anything touches a
// device, in builds with and without CUDA; a build without CUDA then fails clearly. The arrays
// passed here are host memory that is never read: each call fails before its launch.
#include <gtest/gtest.h>

#include <string>

#include "splitzip.h"

namespace {

struct Arrays {
  const void* ins[1] = {nullptr};
  void* outs[1] = {nullptr};
  size_t sizes[1] = {0};
  size_t caps[1] = {0};
  size_t bytes[1] = {0};
  szResult_t statuses[1] = {szSuccess};
};

szResult_t encode(Arrays& a, szDataType_t type = szBfloat16, const szCodebook_t* cb = nullptr, int flags = 0) {
  return szEncodeBatchAsync(a.ins, a.sizes, 1, type, cb, flags, a.outs, a.caps, a.bytes, a.statuses, nullptr);
}

bool lastErrorSays(const char* what) { return std::string(szGetLastError(nullptr)).find(what) != std::string::npos; }

TEST(CodecBatchArgs, EncodeRejectsWhatTheHostCanSee) {
  Arrays a;
  EXPECT_EQ(encode(a, szNumTypes), szInvalidArgument);
  EXPECT_EQ(encode(a, szDataType_t(-1)), szInvalidArgument);
  EXPECT_EQ(encode(a, szBfloat16, nullptr, SZ_ENCODE_CRC), szInvalidUsage);
  EXPECT_EQ(encode(a, szBfloat16, nullptr, SZ_ENCODE_CALIBRATE), szInvalidUsage);
  EXPECT_TRUE(lastErrorSays("szHistogramAsync")) << szGetLastError(nullptr);
  EXPECT_EQ(encode(a, szBfloat16, nullptr, 0x100), szInvalidArgument);
  szCodebook_t fp32, broken;
  ASSERT_EQ(szCodebookDefault(szFloat32, &fp32), szSuccess);
  EXPECT_EQ(encode(a, szBfloat16, &fp32), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebook is for fp32")) << szGetLastError(nullptr);
  ASSERT_EQ(szCodebookDefault(szBfloat16, &broken), szSuccess);
  broken.used = 0;
  EXPECT_EQ(encode(a, szBfloat16, &broken), szInvalidArgument);
  broken.used = 16;
  broken.exponents[3] = broken.exponents[4];
  EXPECT_EQ(encode(a, szBfloat16, &broken), szInvalidArgument);
}

TEST(CodecBatchArgs, EncodeNamesEachNullArray) {
  Arrays a;
  struct Case {
    const char* name;
    szResult_t result;
  } cases[] = {
      {"d_ins", szEncodeBatchAsync(nullptr, a.sizes, 3, szBfloat16, nullptr, 0, a.outs, a.caps, a.bytes, a.statuses, nullptr)},
      {"d_counts", szEncodeBatchAsync(a.ins, nullptr, 3, szBfloat16, nullptr, 0, a.outs, a.caps, a.bytes, a.statuses, nullptr)},
      {"d_outs", szEncodeBatchAsync(a.ins, a.sizes, 3, szBfloat16, nullptr, 0, nullptr, a.caps, a.bytes, a.statuses, nullptr)},
      {"d_outCapacities", szEncodeBatchAsync(a.ins, a.sizes, 3, szBfloat16, nullptr, 0, a.outs, nullptr, a.bytes, a.statuses, nullptr)},
      {"d_outBytes", szEncodeBatchAsync(a.ins, a.sizes, 3, szBfloat16, nullptr, 0, a.outs, a.caps, nullptr, a.statuses, nullptr)},
      {"d_statuses", szEncodeBatchAsync(a.ins, a.sizes, 3, szInt8, nullptr, 0, a.outs, a.caps, a.bytes, nullptr, nullptr)},
  };
  for (const Case& c : cases) EXPECT_EQ(c.result, szInvalidArgument) << c.name;
  // The message is the last call's: check one by itself.
  EXPECT_EQ(szEncodeBatchAsync(a.ins, a.sizes, 3, szBfloat16, nullptr, 0, a.outs, nullptr, a.bytes, a.statuses, nullptr),
            szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("d_outCapacities is NULL")) << szGetLastError(nullptr);
}

TEST(CodecBatchArgs, DecodeNamesEachNullArray) {
  Arrays a;
  EXPECT_EQ(szDecodeBatchAsync(nullptr, a.sizes, 2, a.outs, a.caps, a.bytes, a.statuses, nullptr), szInvalidArgument);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, nullptr, 2, a.outs, a.caps, a.bytes, a.statuses, nullptr), szInvalidArgument);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, a.sizes, 2, nullptr, a.caps, a.bytes, a.statuses, nullptr), szInvalidArgument);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, a.sizes, 2, a.outs, nullptr, a.bytes, a.statuses, nullptr), szInvalidArgument);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, a.sizes, 2, a.outs, a.caps, a.bytes, nullptr, nullptr), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("d_statuses is NULL")) << szGetLastError(nullptr);
}

#if SZ_HAVE_CUDA
// An empty batch launches nothing, so it succeeds with or without a GPU.
TEST(CodecBatchArgs, EmptyBatchesEnqueueNothing) {
  EXPECT_EQ(szEncodeBatchAsync(nullptr, nullptr, 0, szBfloat16, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr),
            szSuccess);
  EXPECT_EQ(szDecodeBatchAsync(nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), szSuccess);
}
#else
TEST(CodecBatchArgs, ValidCallsFailClearlyWithoutCuda) {
  Arrays a;
  EXPECT_EQ(encode(a), szUnhandledCudaError);
  EXPECT_TRUE(lastErrorSays("szEncodeBatchAsync: SplitZip was built without CUDA")) << szGetLastError(nullptr);
  EXPECT_EQ(encode(a, szInt32), szUnhandledCudaError);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, a.sizes, 1, a.outs, a.caps, nullptr, a.statuses, nullptr), szUnhandledCudaError);
  EXPECT_TRUE(lastErrorSays("szDecodeBatchAsync: SplitZip was built without CUDA")) << szGetLastError(nullptr);
  EXPECT_EQ(szEncodeBatchAsync(nullptr, nullptr, 0, szBfloat16, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr),
            szUnhandledCudaError);
}
#endif

}  // namespace
