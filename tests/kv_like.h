// Test data shared by the CPU and GPU codec tests: KV-like BF16, and every bit pattern of a type.
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

// Every bit pattern of an element type T whose exponent starts at bit `mantBits`, each followed
// by `reps` elements with its sign and mantissa under the codebook's first `entries` exponents
// in turn: compressible (codebook exponents dominate) while every pattern escapes or not.
template <typename T>
std::vector<T> everyPatternAmidCodebook(uint32_t mantBits, const szCodebook_t& cb, uint32_t entries, uint32_t reps) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  const uint32_t signMantissa = (1u << (kBits - 1)) | ((1u << mantBits) - 1);
  std::vector<T> v;
  for (uint32_t i = 0; i < (1u << kBits); ++i) {
    v.push_back(T(i));
    for (uint32_t r = 0; r < reps; ++r) v.push_back(T((i & signMantissa) | (uint32_t(cb.exponents[r % entries]) << mantBits)));
  }
  return v;
}

// Every BF16 bit pattern amid the 16 exponents of `cb`.
inline std::vector<uint16_t> everyBf16PatternAmidCodebook(const szCodebook_t& cb) {
  return everyPatternAmidCodebook<uint16_t>(7, cb, 16, 16);
}

}  // namespace sztest
