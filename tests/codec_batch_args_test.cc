// The batched device codec's enqueue-time checks (szEncodeBatchAsync / szDecodeBatchAsync),
// which need no GPU: every argument the host can see is checked before anything touches a
// device, in builds with and without CUDA; a build without CUDA then fails clearly. The arrays
// passed here are host memory that is never read: each call fails before its launch, or is an
// empty batch, which launches nothing.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "splitzip.h"

namespace {

struct Arrays {
  const void* ins[1] = {nullptr};
  void* outs[1] = {nullptr};
  size_t sizes[1] = {0};
  size_t caps[1] = {0};
  size_t bytes[1] = {0};
  szResult_t statuses[1] = {szSuccess};
  uint32_t ids[1] = {0};
};

// A batch of `n` items over `a`'s arrays, one codebook (or the default) for all.
szResult_t encode(Arrays& a, szDataType_t type = szBfloat16, const szCodebook_t* cb = nullptr, int flags = 0,
                  size_t n = 1) {
  return szEncodeBatchAsync(a.ins, a.sizes, n, type, cb, cb == nullptr ? 0 : 1, nullptr, flags, a.outs, a.caps,
                            a.bytes, a.statuses, nullptr);
}

// An empty batch with a codebook table: every host check runs, nothing is launched.
szResult_t encodeTable(szDataType_t type, const szCodebook_t* cbs, size_t n, const uint32_t* ids = nullptr) {
  return szEncodeBatchAsync(nullptr, nullptr, 0, type, cbs, n, ids, 0, nullptr, nullptr, nullptr, nullptr, nullptr);
}

// What a call that passes every check returns: an empty batch enqueues nothing where there is
// CUDA, and fails clearly where there is none.
#if SZ_HAVE_CUDA
constexpr szResult_t kAccepted = szSuccess;
#else
constexpr szResult_t kAccepted = szUnhandledCudaError;
#endif

// `n` valid codebooks of `type`: the default, every other one with its first two entries swapped.
std::vector<szCodebook_t> table(szDataType_t type, size_t n) {
  szCodebook_t cb;
  EXPECT_EQ(szCodebookDefault(type, &cb), szSuccess);
  std::vector<szCodebook_t> v(n, cb);
  for (size_t k = 1; k < n; k += 2) std::swap(v[k].exponents[0], v[k].exponents[1]);
  return v;
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
  EXPECT_TRUE(lastErrorSays("codebooks[0] is for fp32")) << szGetLastError(nullptr);
  ASSERT_EQ(szCodebookDefault(szBfloat16, &broken), szSuccess);
  broken.used = 0;
  EXPECT_EQ(encode(a, szBfloat16, &broken), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks[0]: codebook 'used' is 0")) << szGetLastError(nullptr);
  broken.used = 16;
  broken.exponents[3] = broken.exponents[4];
  EXPECT_EQ(encode(a, szBfloat16, &broken), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("appears twice")) << szGetLastError(nullptr);
}

TEST(CodecBatchArgs, EncodeChecksTheCodebookTable) {
  const uint32_t ids[1] = {0};
  auto bf16 = table(szBfloat16, SZ_BATCH_MAX_CODEBOOKS + 1);
  EXPECT_EQ(encodeTable(szBfloat16, bf16.data(), SZ_BATCH_MAX_CODEBOOKS, ids), kAccepted) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, bf16.data(), SZ_BATCH_MAX_CODEBOOKS + 1, ids), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("65 codebooks, at most 64 (SZ_BATCH_MAX_CODEBOOKS)")) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, bf16.data(), size_t(1) << 40), szInvalidArgument);
  // The table's pointer and count go together; ids need a table.
  EXPECT_EQ(encodeTable(szBfloat16, nullptr, 2), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks is NULL with numCodebooks 2")) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, bf16.data(), 0), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks is given with numCodebooks 0")) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, nullptr, 0, ids), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("d_codebookIds given without codebooks")) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, nullptr, 0), kAccepted);  // the default of the type
  // Every entry is checked, and the message names the bad one.
  auto mixed = table(szBfloat16, 5);
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &mixed[2]), szSuccess);
  EXPECT_EQ(encodeTable(szBfloat16, mixed.data(), 5, ids), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks[2] is for fp8e5m2, data is bf16")) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szBfloat16, mixed.data(), 2, ids), kAccepted) << "entries past numCodebooks are not read";
  mixed = table(szBfloat16, 5);
  mixed[4].exponents[7] = mixed[4].exponents[8];
  EXPECT_EQ(encodeTable(szBfloat16, mixed.data(), 5), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks[4]: codebook exponent")) << szGetLastError(nullptr);
  auto fp8 = table(szFloat8e5m2, 5);
  fp8[3].exponents[0] = 40;  // FP8 E5M2 exponents are 5-bit
  EXPECT_EQ(encodeTable(szFloat8e5m2, fp8.data(), 5), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks[3]: codebook exponent 40 out of range")) << szGetLastError(nullptr);
  // FP32 shares BF16's exponents but not its codebooks' type.
  auto fp32 = table(szFloat32, 3);
  EXPECT_EQ(encodeTable(szFloat32, fp32.data(), 3, ids), kAccepted);
  EXPECT_EQ(encodeTable(szBfloat16, fp32.data(), 3, ids), szInvalidArgument);
  EXPECT_TRUE(lastErrorSays("codebooks[0] is for fp32, data is bf16")) << szGetLastError(nullptr);
}

// Types stored raw read no codebook, but the table's shape is still the caller's to get right.
TEST(CodecBatchArgs, RawTypesReadNoCodebook) {
  const uint32_t ids[1] = {0};
  auto fp32 = table(szFloat32, 3);
  fp32[1].used = 0;
  EXPECT_EQ(encodeTable(szInt32, fp32.data(), 3, ids), kAccepted) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szFloat8e4m3, nullptr, 0), kAccepted) << szGetLastError(nullptr);
  EXPECT_EQ(encodeTable(szInt32, nullptr, 3), szInvalidArgument);
  EXPECT_EQ(encodeTable(szInt32, fp32.data(), SZ_BATCH_MAX_CODEBOOKS + 1), szInvalidArgument);
  EXPECT_EQ(encodeTable(szInt32, nullptr, 0, ids), szInvalidArgument);
}

TEST(CodecBatchArgs, EncodeNamesEachNullArray) {
  Arrays a;
  auto call = [&a](const void* const* ins, const size_t* counts, void* const* outs, const size_t* caps, size_t* bytes,
                   szResult_t* statuses, szDataType_t type = szBfloat16) {
    return szEncodeBatchAsync(ins, counts, 3, type, nullptr, 0, nullptr, 0, outs, caps, bytes, statuses, nullptr);
  };
  struct Case {
    const char* name;
    szResult_t result;
  } cases[] = {
      {"d_ins", call(nullptr, a.sizes, a.outs, a.caps, a.bytes, a.statuses)},
      {"d_counts", call(a.ins, nullptr, a.outs, a.caps, a.bytes, a.statuses)},
      {"d_outs", call(a.ins, a.sizes, nullptr, a.caps, a.bytes, a.statuses)},
      {"d_outCapacities", call(a.ins, a.sizes, a.outs, nullptr, a.bytes, a.statuses)},
      {"d_outBytes", call(a.ins, a.sizes, a.outs, a.caps, nullptr, a.statuses)},
      {"d_statuses", call(a.ins, a.sizes, a.outs, a.caps, a.bytes, nullptr, szInt8)},
  };
  for (const Case& c : cases) EXPECT_EQ(c.result, szInvalidArgument) << c.name;
  // The message is the last call's: check one by itself.
  EXPECT_EQ(call(a.ins, a.sizes, a.outs, nullptr, a.bytes, a.statuses), szInvalidArgument);
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
  Arrays a;
  EXPECT_EQ(encode(a, szBfloat16, nullptr, 0, 0), szSuccess);
  EXPECT_EQ(szDecodeBatchAsync(nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), szSuccess);
}
#else
TEST(CodecBatchArgs, ValidCallsFailClearlyWithoutCuda) {
  Arrays a;
  EXPECT_EQ(encode(a), szUnhandledCudaError);
  EXPECT_TRUE(lastErrorSays("szEncodeBatchAsync: SplitZip was built without CUDA")) << szGetLastError(nullptr);
  EXPECT_EQ(encode(a, szInt32), szUnhandledCudaError);
  auto two = table(szBfloat16, 2);
  EXPECT_EQ(szEncodeBatchAsync(a.ins, a.sizes, 1, szBfloat16, two.data(), 2, a.ids, 0, a.outs, a.caps, a.bytes,
                               a.statuses, nullptr),
            szUnhandledCudaError);
  EXPECT_EQ(szDecodeBatchAsync(a.ins, a.sizes, 1, a.outs, a.caps, nullptr, a.statuses, nullptr), szUnhandledCudaError);
  EXPECT_TRUE(lastErrorSays("szDecodeBatchAsync: SplitZip was built without CUDA")) << szGetLastError(nullptr);
  EXPECT_EQ(encode(a, szBfloat16, nullptr, 0, 0), szUnhandledCudaError);
}
#endif

}  // namespace
