// szEncodeTempSize, which needs no GPU: the grid encoder's temporary memory is 2080 bytes
// (calibration histogram and codebook), a 4-byte escape total per range of chunks (at least
// min(chunks, chunks / 8 held within [8192, 16384]) ranges of at most 32 chunks, padded to 16
// bytes) and 48 bytes of escape
// records per 1024-element chunk (192 for FP16 and E4M3). Skipped in builds without CUDA, where the call fails.
#include <gtest/gtest.h>

#include "splitzip.h"

namespace {

size_t tempSize(size_t count, szDataType_t type) {
  size_t bytes = 0;
  EXPECT_EQ(szEncodeTempSize(count, type, &bytes), szSuccess) << szGetLastError(nullptr);
  return bytes;
}

TEST(CodecTempSize, FollowsChunksAndRanges) {
  size_t bytes = 0;
  if (szEncodeTempSize(0, szBfloat16, &bytes) == szUnhandledCudaError) GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(tempSize(0, szBfloat16), 2080u);
  EXPECT_EQ(tempSize(1, szBfloat16), 2096u + 48);           // one chunk, one range
  EXPECT_EQ(tempSize(1025, szBfloat16), 2096u + 2 * 48);    // a partial second chunk
  EXPECT_EQ(tempSize(1024 * 8192, szFloat32), 2080u + 4 * 8192 + 48 * 8192);  // a range a chunk
  EXPECT_EQ(tempSize(1024 * 16384, szFloat32), 2080u + 4 * 8192 + 48 * 16384);  // two chunks a range
  EXPECT_EQ(tempSize(1024 * 98304, szBfloat16), 2080u + 4 * 12288 + 48 * 98304);  // chunks / 8 ranges
  EXPECT_EQ(tempSize(1024 * 262144, szBfloat16), 2080u + 4 * 16384 + 48 * 262144);  // at most 16384 of those
  // 2^20 chunks: 32 chunks a range, 3 * 16 bytes per 1024 elements.
  EXPECT_EQ(tempSize(size_t(1) << 30, szBfloat16), 2080u + 4 * 32768 + 48 * (size_t(1) << 20));
  EXPECT_EQ(tempSize(size_t(1) << 20, szFloat8e5m2), 2080u + 4 * 1024 + 48 * 1024);
  EXPECT_EQ(tempSize(12345, szFloat16), 2144u + 192 * 13);  // FP16 is encoded on the GPU: 13 chunks, 13 ranges, 64 records
  EXPECT_EQ(tempSize(size_t(1) << 20, szFloat8e4m3), 2080u + 4 * 1024 + 192 * 1024);  // E4M3's slots: 64 records
  EXPECT_EQ(tempSize(12345, szInt32), 2080u);              // stored raw: no chunks
}

TEST(CodecTempSize, RejectsBadArguments) {
  size_t bytes = 0;
  if (szEncodeTempSize(0, szBfloat16, &bytes) == szUnhandledCudaError) GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(szEncodeTempSize(1, szBfloat16, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeTempSize(1, szNumTypes, &bytes), szInvalidArgument);
  EXPECT_EQ(szEncodeTempSize(~size_t(0), szFloat32, &bytes), szInvalidArgument);  // count * 4 overflows
}

}  // namespace
