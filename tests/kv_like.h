// BF16 test data shared by the CPU and GPU codec tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "splitzip.h"

namespace sztest {

// Shaped like KV activations: normal values rounded to BF16 (round to nearest even), so most
// exponents sit in a narrow band around the codebook and a few escape.
inline std::vector<uint16_t> kvLikeBf16(size_t n, uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    float f = dist(rng);
    uint32_t b;
    memcpy(&b, &f, 4);
    x = uint16_t((b + 0x7FFF + ((b >> 16) & 1)) >> 16);
  }
  return v;
}

// Every BF16 bit pattern, each followed by its sign and mantissa under the 16 exponents of
// `cb`: compressible (codebook exponents dominate) while every pattern escapes or not.
inline std::vector<uint16_t> everyBf16PatternAmidCodebook(const szCodebook_t& cb) {
  std::vector<uint16_t> v;
  for (uint32_t i = 0; i < 65536; ++i) {
    v.push_back(uint16_t(i));
    for (int r = 0; r < 16; ++r) v.push_back(uint16_t((i & 0x807F) | (uint32_t(cb.exponents[r]) << 7)));
  }
  return v;
}

}  // namespace sztest
