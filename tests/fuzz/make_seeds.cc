// Writes the seed corpus of decode_fuzzer: small valid frames of every kind the decoder knows
// (compressed BF16/FP32/E5M2 with and without escapes and CRC, several chunks and escape
// groups, raw fallbacks, incompressible types, zero elements, and format version 2: FP16, E4M3
// and 3-bit codes), one file per frame.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "splitzip.h"

namespace {

// `count` elements of `type`: codebook exponents, one in `escapeEvery` replaced by a rare one.
std::vector<uint8_t> elements(szDataType_t type, size_t count, size_t escapeEvery, uint32_t seed) {
  const size_t eb = szTypeSize(type);
  std::vector<uint8_t> v(count * eb);
  std::mt19937 rng(seed);
  szCodebook_t cb;
  if (szCodebookDefault(type, &cb) != szSuccess) {  // incompressible types: random bytes
    for (auto& b : v) b = uint8_t(rng());
    return v;
  }
  int bits = 4;
  szCodebookCodeBits(&cb, &bits);
  const uint32_t rare = type == szFloat8e5m2 || type == szFloat16 ? 31 : type == szFloat8e4m3 ? 1 : 200;
  for (size_t i = 0; i < count; ++i) {
    uint32_t r = rng(), e = (escapeEvery && i % escapeEvery == 0) ? rare : cb.exponents[r % (1u << bits)], w;
    if (type == szBfloat16) w = (r >> 16 & 0x807F) | e << 7;
    else if (type == szFloat32) w = (r & 0x807FFFFF) | e << 23;
    else if (type == szFloat16) w = (r >> 16 & 0x83FF) | e << 10;
    else if (type == szFloat8e4m3) w = (r >> 8 & 0x87) | e << 3;
    else w = (r >> 8 & 0x83) | e << 2;
    for (size_t b = 0; b < eb; ++b) v[i * eb + b] = uint8_t(w >> (8 * b));
  }
  return v;
}

bool writeFrame(const std::string& dir, const std::string& name, szDataType_t type, size_t count,
                size_t escapeEvery, int flags, int bits) {
  std::vector<uint8_t> in = elements(type, count, escapeEvery, uint32_t(count + flags));
  size_t max = 0, bytes = 0;
  if (szEncodeMaxSize(count, type, &max) != szSuccess) return false;
  szCodebook_t cb;
  const szCodebook_t* book = nullptr;
  if (bits == 3) {  // 3-bit codes calibrated on the elements themselves
    szHistogram_t h;
    if (szHistogramInit(&h, type) != szSuccess || szHistogramAccumulate(&h, in.data(), count) != szSuccess ||
        szCodebookFromHistogramBits(&h, 3, &cb) != szSuccess)
      return false;
    book = &cb;
  }
  std::vector<uint8_t> frame(max);
  if (szEncode(in.data(), count, type, book, flags, frame.data(), max, &bytes) != szSuccess) return false;
  FILE* f = fopen((dir + "/" + name).c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = fwrite(frame.data(), 1, bytes, f) == bytes;
  return fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const struct {
    const char* name;
    szDataType_t type;
    size_t count, escapeEvery;
    int flags, bits = 4;  // bits 3: a calibrated 3-bit codebook (version 2)
  } seeds[] = {
      {"bf16_small", szBfloat16, 100, 0, 0},
      {"bf16_escapes", szBfloat16, 1500, 97, 0},
      {"bf16_escapes_crc", szBfloat16, 1500, 97, SZ_ENCODE_CRC},
      {"bf16_raw_fallback", szBfloat16, 600, 2, 0},
      {"bf16_tiny_raw", szBfloat16, 3, 0, 0},
      {"fp32_escapes", szFloat32, 700, 50, 0},
      {"fp8_escapes", szFloat8e5m2, 2049, 64, 0},
      {"fp8_two_groups", szFloat8e5m2, 33 * 1024 + 5, 1000, 0},
      {"fp8_crc", szFloat8e5m2, 1000, 0, SZ_ENCODE_CRC},
      {"int8_raw", szInt8, 200, 0, 0},
      {"fp16_crc", szFloat16, 64, 0, SZ_ENCODE_CRC},
      {"int64_raw_crc", szInt64, 64, 0, SZ_ENCODE_CRC},
      {"bf16_empty", szBfloat16, 0, 0, 0},
      {"fp16_escapes", szFloat16, 2100, 77, 0},
      {"fp16_3bit", szFloat16, 3000, 101, 0, 3},
      {"e4m3_escapes", szFloat8e4m3, 2049, 64, 0},
      {"e4m3_crc", szFloat8e4m3, 1000, 0, SZ_ENCODE_CRC},
      {"bf16_3bit", szBfloat16, 1500, 97, 0, 3},
      {"e5m2_3bit", szFloat8e5m2, 33 * 1024 + 5, 1000, 0, 3},
  };
  for (const auto& s : seeds) {
    if (!writeFrame(dir, s.name, s.type, s.count, s.escapeEvery, s.flags, s.bits)) {
      fprintf(stderr, "make_seeds: cannot write %s/%s: %s\n", dir.c_str(), s.name, szGetLastError(nullptr));
      return 1;
    }
  }
  return 0;
}
