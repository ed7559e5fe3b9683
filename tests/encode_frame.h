// szEncode into a vector of exactly the frame's size, with its result checked: the codec tests'
// one way to make a frame.
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

}  // namespace sztest
