// Portable per-chunk kernels: the reference implementation of docs/FORMAT.md for every
// compressible type, one element at a time. Also the run-time kernel selection.
#include <cstring>

#include "chunk_codec.h"
#include "../src/param.h"

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
  return {encodeChunkPortable, decodeChunkPortable, "portable"};
}

}  // namespace sz
