// Portable per-chunk kernels: the reference implementation of docs/FORMAT.md for every
// compressible type, one element at a time. Also the run-time kernel selection.
#include <cstring>

#include "chunk_codec.h"
#include "base/param.h"

namespace sz {
namespace {

uint32_t loadElem(const uint8_t* p, uint32_t bytes) {
  uint32_t w = 0;
  for (uint32_t b = 0; b < bytes; ++b) w |= uint32_t(p[b]) << (8 * b);
  return w;
}

void storeElem(uint8_t* p, uint32_t bytes, uint32_t w) {
  for (uint32_t b = 0; b < bytes; ++b) p[b] = uint8_t(w >> (8 * b));
}

// Sign-mantissa symbol i of a section: whole bytes for BF16/FP32, 3-bit fields for E5M2.
void putSm(const TypeTraits& t, uint8_t* sm, uint32_t i, uint32_t v) {
  if (t.smBits % 8 == 0) {
    storeElem(sm + size_t(i) * (t.smBits / 8), t.smBits / 8, v);
    return;
  }
  uint32_t bit = i * t.smBits;
  sm[bit / 8] |= uint8_t(v << (bit % 8));
  if ((bit % 8) + t.smBits > 8) sm[bit / 8 + 1] |= uint8_t(v >> (8 - bit % 8));
}

uint32_t getSm(const TypeTraits& t, const uint8_t* sm, uint32_t i) {
  if (t.smBits % 8 == 0) return loadElem(sm + size_t(i) * (t.smBits / 8), t.smBits / 8);
  uint32_t bit = i * t.smBits;
  uint32_t pair = sm[bit / 8];
  if ((bit % 8) + t.smBits > 8) pair |= uint32_t(sm[bit / 8 + 1]) << 8;
  return (pair >> (bit % 8)) & ((1u << t.smBits) - 1);
}

}  // namespace

uint32_t encodeChunkPortable(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  if (t.smBits % 8 != 0) memset(sm, 0, (size_t(n) * t.smBits + 7) / 8);
  uint32_t escapes = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t w = loadElem(in + size_t(i) * t.elemBytes, t.elemBytes);
    uint32_t e = t.exponent(w);
    uint32_t code = tab.code[e];
    if (code == kEscapeCode) {
      esc[3 * escapes] = uint8_t(i);
      esc[3 * escapes + 1] = uint8_t(i >> 8);
      esc[3 * escapes + 2] = uint8_t(e);
      ++escapes;
      code = 0;
    }
    putSm(t, sm, i, t.signMantissa(w));
    if (i & 1) codes[i / 2] |= uint8_t(code << 4);
    else codes[i / 2] = uint8_t(code);
  }
  return escapes;
}

void decodeChunkPortable(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t code = (codes[i / 2] >> (4 * (i & 1))) & 0xF;
    storeElem(out + size_t(i) * t.elemBytes, t.elemBytes, t.join(getSm(t, sm, i), tab.exponent[code]));
  }
}

uint32_t encodeTailPortable(const TypeTraits& t, const uint8_t* in, uint32_t first, uint32_t n,
                            const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  uint32_t k = encodeChunkPortable(t, in + size_t(first) * t.elemBytes, n - first, tab,
                                   sm + size_t(first) * t.smBits / 8, codes + first / 2, esc);
  for (uint32_t j = 0; j < k; ++j) {
    uint32_t pos = (esc[3 * j] | (esc[3 * j + 1] << 8)) + first;
    esc[3 * j] = uint8_t(pos);
    esc[3 * j + 1] = uint8_t(pos >> 8);
  }
  return k;
}

uint32_t encodeChunkE5m2(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab,
                         uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  uint32_t escapes = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t smBits = 0, codeBits = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      uint32_t b = in[i + k], e = (b >> 2) & 0x1F, c = tab.code[e];
      if (c == kEscapeCode) {
        esc[3 * escapes] = uint8_t(i + k);
        esc[3 * escapes + 1] = uint8_t((i + k) >> 8);
        esc[3 * escapes + 2] = uint8_t(e);
        ++escapes;
        c = 0;
      }
      codeBits |= c << (4 * k);
      smBits |= (((b >> 5) & 4) | (b & 3)) << (3 * k);
    }
    storeElem(sm + 3 * (i / 8), 3, smBits);
    storeElem(codes + i / 2, 4, codeBits);
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

void decodeChunkE5m2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                     const CodecTables& tab, uint8_t* out) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint32_t smBits = loadElem(sm + 3 * (i / 8), 3), codeBits = loadElem(codes + i / 2, 4);
    for (uint32_t k = 0; k < 8; ++k) {
      uint32_t s = (smBits >> (3 * k)) & 7, e = tab.exponent[(codeBits >> (4 * k)) & 0xF];
      out[i + k] = uint8_t(((s & 4) << 5) | (e << 2) | (s & 3));
    }
  }
  if (i < n) decodeChunkPortable(t, sm + 3 * (i / 8), codes + i / 2, n - i, tab, out + i);
}

void buildTables(const szCodebook_t& cb, CodecTables* tab) {
  memset(tab->code, kEscapeCode, sizeof(tab->code));
  for (uint32_t i = 0; i < kCodebookSize; ++i) {
    tab->code[cb.exponents[i]] = uint8_t(i);
    tab->exponent[i] = cb.exponents[i];
  }
}

ChunkCodec selectChunkCodec(int type) {
  if (type == szBfloat16 && szParamCpuSimd() != 0 && __builtin_cpu_supports("avx2"))
    return {encodeChunkBf16Avx2, decodeChunkBf16Avx2, "bf16-avx2"};
  if (type == szFloat8e5m2) return {encodeChunkE5m2, decodeChunkE5m2, "e5m2"};
  return {encodeChunkPortable, decodeChunkPortable, "portable"};
}

}  // namespace sz
