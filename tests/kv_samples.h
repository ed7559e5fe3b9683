// The real KV samples of tests/data (tests/data/README.md), read by the CPU and GPU tests: the
// data section of a safetensors file whose tensors all have one dtype, in data-offset order.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace sztest {

// tests/data of the checkout the test binary was built in (BUILD/tests/binary -> the root).
inline std::string kvSamplePath(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path root = fs::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path();
  return (root / "tests" / "data" / name).string();
}

// The file's tensor bytes (everything after the 8-byte header length and the JSON header); empty
// with a test failure when the file is missing or malformed.
inline std::vector<uint8_t> readKvSample(const std::string& name) {
  const std::string path = kvSamplePath(name);
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  uint64_t header = 0;
  if (file.size() >= 8) memcpy(&header, file.data(), 8);
  if (file.size() < 8 || header > file.size() - 8) {
    ADD_FAILURE() << path << ": missing or not a safetensors file";
    return {};
  }
  return std::vector<uint8_t>(file.begin() + 8 + std::ptrdiff_t(header), file.end());
}

// Elements of `elemBytes` bytes with `expBits` exponent bits above `mantBits` mantissa bits, times
// 2^shift: `shift` added to every exponent of a normal value that stays normal (zeros,
// denormals, the top exponent (Inf and NaN; E4M3's largest binade) as they were). Shifts the
// KV's exponents off the default codebook, as another model's KV would be.
inline std::vector<uint8_t> scaledExponents(std::vector<uint8_t> v, int elemBytes, int expBits, int mantBits,
                                            int shift) {
  const int top = (1 << expBits) - 1;
  for (size_t i = 0; i + size_t(elemBytes) <= v.size(); i += size_t(elemBytes)) {
    uint32_t w = 0;
    memcpy(&w, &v[i], size_t(elemBytes));
    const int e = int(w >> mantBits) & top;
    if (e > 0 && e < top && e + shift > 0 && e + shift < top)
      w = (w & ~(uint32_t(top) << mantBits)) | (uint32_t(e + shift) << mantBits);
    memcpy(&v[i], &w, size_t(elemBytes));
  }
  return v;
}

inline std::vector<uint8_t> scaledBf16(std::vector<uint8_t> v, int shift) { return scaledExponents(std::move(v), 2, 8, 7, shift); }
inline std::vector<uint8_t> scaledE5m2(std::vector<uint8_t> v, int shift) { return scaledExponents(std::move(v), 1, 5, 2, shift); }
inline std::vector<uint8_t> scaledFp16(std::vector<uint8_t> v, int shift) { return scaledExponents(std::move(v), 2, 5, 10, shift); }
inline std::vector<uint8_t> scaledE4m3(std::vector<uint8_t> v, int shift) { return scaledExponents(std::move(v), 1, 4, 3, shift); }

// BF16 widened to FP32: the same exponents, mantissas shifted up (FP32's default is BF16's).
inline std::vector<uint8_t> widenBf16ToFp32(const std::vector<uint8_t>& bf16) {
  std::vector<uint8_t> v(bf16.size() * 2, 0);
  for (size_t i = 0; i < bf16.size() / 2; ++i) memcpy(&v[4 * i + 2], &bf16[2 * i], 2);
  return v;
}

}  // namespace sztest
