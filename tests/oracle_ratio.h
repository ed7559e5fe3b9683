// The ratio a list of buffers reaches with a codebook of its own for each buffer: every buffer
// encoded as one frame with its own top-16 (szCodebookFromHistogram; for FP16 and E4M3 the
// top-8 where 3-bit codes give the better ratio). The per-segment codebook tests measure against
// it, on the host path and on the device path, and the host FP16 and E4M3 tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "splitzip.h"

namespace sztest {

// Buffers of `type`: raw bytes over the bytes of their frames.
inline double oracleRatio(const std::vector<std::vector<uint8_t>>& list, szDataType_t type = szBfloat16) {
  double raw = 0, encoded = 0;
  for (const auto& b : list) {
    const size_t count = b.size() / szTypeSize(type);
    szHistogram_t hist;
    szCodebook_t cb;
    size_t cap = 0, bytes = 0;
    EXPECT_EQ(szHistogramInit(&hist, type), szSuccess);
    EXPECT_EQ(szHistogramAccumulate(&hist, b.data(), count), szSuccess);
    EXPECT_EQ(szCodebookFromHistogram(&hist, &cb), szSuccess);
    EXPECT_EQ(szEncodeMaxSize(count, type, &cap), szSuccess);
    std::vector<uint8_t> frame(cap);
    EXPECT_EQ(szEncode(b.data(), count, type, &cb, 0, frame.data(), cap, &bytes), szSuccess);
    raw += double(b.size());
    encoded += double(bytes);
  }
  return raw / encoded;
}

}  // namespace sztest
