// BF16 test data shaped like KV activations: normal values rounded to BF16 (round to nearest
// even), so most exponents sit in a narrow band around the codebook and a few escape.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace sztest {

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

}  // namespace sztest
