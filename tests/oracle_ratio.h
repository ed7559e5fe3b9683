// The ratio a list of buffers reaches with a codebook of its own for each buffer: every buffer
// encoded as one frame with its own top-16 (szCodebookFromHistogram). The per-segment codebook
// tests measure against it, on the host path and on the device path.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "splitzip.h"

namespace sztest {

// BF16 buffers: raw bytes over the bytes of their frames.
inline double oracleRatio(const std::vector<std::vector<uint8_t>>& list) {
  double raw = 0, encoded = 0;
  for (const auto& b : list) {
    const size_t count = b.size() / 2;
    szHistogram_t hist;
    szCodebook_t cb;
    size_t cap = 0, bytes = 0;
    EXPECT_EQ(szHistogramInit(&hist, szBfloat16), szSuccess);
    EXPECT_EQ(szHistogramAccumulate(&hist, b.data(), count), szSuccess);
    EXPECT_EQ(szCodebookFromHistogram(&hist, &cb), szSuccess);
    EXPECT_EQ(szEncodeMaxSize(count, szBfloat16, &cap), szSuccess);
    std::vector<uint8_t> frame(cap);
    EXPECT_EQ(szEncode(b.data(), count, szBfloat16, &cb, 0, frame.data(), cap, &bytes), szSuccess);
    raw += double(b.size());
    encoded += double(bytes);
  }
  return raw / encoded;
}

}  // namespace sztest
