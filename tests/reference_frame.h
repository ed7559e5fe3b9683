// An independent, deliberately naive encoder written straight from docs/FORMAT.md, used by
// the tests to check that the library's (and the GPU's) frames are byte-for-byte the spec's.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "splitzip.h"

namespace sztest {

inline uint32_t elemBits(szDataType_t t) { return 8 * uint32_t(szTypeSize(t)); }

inline std::vector<uint8_t> referenceEncode(const void* data, uint64_t count, szDataType_t type,
                                            const szCodebook_t& cb, bool crcFlag) {
  const uint8_t* in = static_cast<const uint8_t*>(data);
  uint32_t eb = uint32_t(szTypeSize(type));
  uint32_t expBits = type == szFloat8e5m2 || type == szFloat16 ? 5 : type == szFloat8e4m3 ? 4 : 8;
  uint32_t mantBits = type == szBfloat16 ? 7 : type == szFloat32 ? 23 : type == szFloat16 ? 10 : type == szFloat8e4m3 ? 3 : 2;
  uint32_t smBits = eb * 8 - expBits;
  // Code width: a codebook whose entries 8..15 are all 0xFF has 3-bit codes (FORMAT.md §Code width).
  bool narrow = true;
  for (int j = 8; j < 16; ++j) narrow = narrow && cb.exponents[j] == 0xFF;
  const uint32_t codeBits = narrow ? 3 : 4, entries = 1u << codeBits;
  // Version 2 for FP16, E4M3 and 3-bit codes (compressed frames only).
  const bool v1Type = type == szBfloat16 || type == szFloat32 || type == szFloat8e5m2;
  auto put = [](std::vector<uint8_t>& v, uint64_t off, uint64_t x, int n) {
    for (int i = 0; i < n; ++i) v[off + i] = uint8_t(x >> (8 * i));
  };
  auto a16 = [](uint64_t x) { return (x + 15) / 16 * 16; };
  uint64_t raw = count * eb;
  std::vector<uint8_t> f(96, 0);
  f[0] = 'S'; f[1] = 'Z'; f[2] = 'I'; f[3] = 'P';
  put(f, 4, 1, 2);
  f[8] = uint8_t(type);
  put(f, 12, 1024, 4);
  put(f, 16, count, 8);
  bool compressible = szTypeIsCompressible(type);
  uint64_t smB = (count * smBits + 7) / 8, codeB = (count * codeBits + 7) / 8;
  uint64_t chunks = (count + 1023) / 1024, groups = (chunks + 31) / 32;
  uint64_t idxB = 8 * groups + 2 * chunks;
  std::vector<uint8_t> sm(smB, 0), codes(codeB, 0), idx(idxB, 0), esc;
  uint64_t escapes = 0;
  if (compressible) {
    for (uint64_t c = 0; c < chunks; ++c) {
      if (c % 32 == 0) put(idx, 8 * (c / 32), escapes, 8);
      uint32_t k = 0;
      for (uint64_t i = c * 1024; i < count && i < (c + 1) * 1024; ++i) {
        uint32_t w = 0;
        memcpy(&w, in + i * eb, eb);
        uint32_t e = (w >> mantBits) & ((1u << expBits) - 1);
        uint32_t s = ((w >> (eb * 8 - 1)) << mantBits) | (w & ((1u << mantBits) - 1));
        for (uint32_t b = 0; b < smBits; ++b)
          if (s >> b & 1) sm[(i * smBits + b) / 8] |= uint8_t(1u << ((i * smBits + b) % 8));
        int code = -1;
        for (uint32_t j = 0; j < entries; ++j)
          if (cb.exponents[j] == e) code = int(j);
        if (code < 0) {
          uint32_t pos = uint32_t(i - c * 1024);
          esc.push_back(uint8_t(pos));
          esc.push_back(uint8_t(pos >> 8));
          esc.push_back(uint8_t(e));
          ++k;
          code = 0;
        }
        for (uint32_t b = 0; b < codeBits; ++b)
          if (uint32_t(code) >> b & 1) codes[(i * codeBits + b) / 8] |= uint8_t(1u << ((i * codeBits + b) % 8));
      }
      put(idx, 8 * groups + 2 * c, k, 2);
      escapes += k;
    }
  }
  uint64_t payload = a16(smB) + a16(codeB) + a16(idxB) + 3 * escapes;
  if (!compressible || payload >= raw) {
    put(f, 6, 1 | (crcFlag ? 2 : 0), 2);
    f.insert(f.end(), in, in + raw);
  } else {
    put(f, 6, crcFlag ? 2 : 0, 2);
    if (!v1Type || codeBits == 3) {
      put(f, 4, 2, 2);
      f[10] = uint8_t(codeBits);
    }
    f[9] = uint8_t(cb.used);
    put(f, 24, escapes, 8);
    put(f, 32, smB, 8);
    put(f, 40, codeB, 8);
    put(f, 48, idxB, 8);
    put(f, 56, 3 * escapes, 8);
    memcpy(&f[64], cb.exponents, entries);  // the rest of the field stays 0
    for (auto* sec : {&sm, &codes, &idx}) {
      f.insert(f.end(), sec->begin(), sec->end());
      f.resize(a16(f.size()), 0);
    }
    f.insert(f.end(), esc.begin(), esc.end());
  }
  return f;  // CRC fields are left 0: tests compare CRC frames with the CRC bytes masked
}

}  // namespace sztest
