// szEncode into a vector of exactly the frame's size, with its result checked: the codec tests'
// one way to make a frame; and a codebook of a given code width calibrated on the data.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "splitzip.h"

namespace sztest {

inline std::vector<uint8_t> encodeFrame(const void* data, size_t count, szDataType_t type,
                                        const szCodebook_t* cb = nullptr, int flags = 0) {
  size_t max = 0, bytes = 0;
  EXPECT_EQ(szEncodeMaxSize(count, type, &max), szSuccess);
  std::vector<uint8_t> frame(max);
  EXPECT_EQ(szEncode(data, count, type, cb, flags, frame.data(), frame.size(), &bytes), szSuccess)
      << szGetLastError(nullptr);
  EXPECT_LE(bytes, max);
  frame.resize(bytes);
  return frame;
}

// The codebook with `bits`-bit codes (3 or 4; 0: the width calibration picks, as
// szCodebookFromHistogram does) calibrated on `count` elements of `type` at `data`.
inline szCodebook_t calibratedCodebook(const void* data, size_t count, szDataType_t type, int bits) {
  szHistogram_t h;
  EXPECT_EQ(szHistogramInit(&h, type), szSuccess);
  EXPECT_EQ(szHistogramAccumulate(&h, data, count), szSuccess);
  szCodebook_t cb{};
  EXPECT_EQ(bits == 0 ? szCodebookFromHistogram(&h, &cb) : szCodebookFromHistogramBits(&h, bits, &cb), szSuccess);
  return cb;
}

}  // namespace sztest
