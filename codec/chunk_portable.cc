// Portable per-chunk kernels: the reference implementation of docs/FORMAT.md for every
// compressible type, one element at a time. Also the run-time kernel selection.
#include <cstring>

#include "chunk_codec.h"
#include "code_bits.h"
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

// `bits`-bit field i of a bit-packed section (LSB first): sign-mantissa symbols of the types
// whose symbols are not whole bytes, and 3-bit exponent codes. A field spans at most 3 bytes.
void putBits(uint8_t* p, uint32_t bits, uint32_t i, uint32_t v) {
  const uint32_t bit = i * bits;
  uint8_t* b = p + bit / 8;
  const uint32_t x = v << (bit % 8);
  for (uint32_t k = 0; k * 8 < bit % 8 + bits; ++k) b[k] |= uint8_t(x >> (8 * k));
}

uint32_t getBits(const uint8_t* p, uint32_t bits, uint32_t i) {
  const uint32_t bit = i * bits;
  const uint8_t* b = p + bit / 8;
  uint32_t x = 0;
  for (uint32_t k = 0; k * 8 < bit % 8 + bits; ++k) x |= uint32_t(b[k]) << (8 * k);
  return (x >> (bit % 8)) & ((1u << bits) - 1);
}

void putSm(const TypeTraits& t, uint8_t* sm, uint32_t i, uint32_t v) {
  if (t.smBits % 8 == 0) storeElem(sm + size_t(i) * (t.smBits / 8), t.smBits / 8, v);
  else putBits(sm, t.smBits, i, v);
}

uint32_t getSm(const TypeTraits& t, const uint8_t* sm, uint32_t i) {
  if (t.smBits % 8 == 0) return loadElem(sm + size_t(i) * (t.smBits / 8), t.smBits / 8);
  return getBits(sm, t.smBits, i);
}

uint32_t getCode(const uint8_t* codes, uint32_t bits, uint32_t i) {
  return bits == 4 ? (codes[i / 2] >> (4 * (i & 1))) & 0xF : getBits(codes, 3, i);
}

// Eight elements per step: their symbols (8 * smBits bits, at most 128) and codes (8 * kBits
// bits) as whole bytes. Escapes as in the portable kernel.
template <int kType, uint32_t kBits>
uint32_t encodeChunkSteps(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab,
                          uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  constexpr TypeTraits T = typeTraits(kType);
  static_assert(8 * T.smBits <= 128 && (kBits == 3 || kBits == 4), "eight symbols in 128 bits");
  uint32_t escapes = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    unsigned __int128 smAcc = 0;
    uint32_t codeAcc = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      uint32_t w = 0;
      memcpy(&w, in + size_t(i + k) * T.elemBytes, T.elemBytes);
      const uint32_t e = T.exponent(w);
      uint32_t c = tab.code[e];
      if (c == kEscapeCode) {
        putEscape(esc, escapes++, i + k, e);
        c = 0;
      }
      codeAcc |= c << (kBits * k);
      smAcc |= (unsigned __int128)T.signMantissa(w) << (T.smBits * k);
    }
    memcpy(sm + size_t(i / 8) * T.smBits, &smAcc, T.smBits);  // little-endian: the low bytes
    memcpy(codes + size_t(i / 8) * kBits, &codeAcc, kBits);
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

template <int kType, uint32_t kBits>
void decodeChunkSteps(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                      const CodecTables& tab, uint8_t* out) {
  constexpr TypeTraits T = typeTraits(kType);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const unsigned __int128 smAcc = loadLeBytes<T.smBits>(sm + size_t(i / 8) * T.smBits);
    const uint32_t codeAcc = uint32_t(loadLeBytes<kBits>(codes + size_t(i / 8) * kBits));
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t s = uint32_t(smAcc >> (T.smBits * k)) & ((1u << T.smBits) - 1);
      const uint32_t e = tab.exponent[(codeAcc >> (kBits * k)) & ((1u << kBits) - 1)];
      const uint32_t w = T.join(s, e);
      memcpy(out + size_t(i + k) * T.elemBytes, &w, T.elemBytes);
    }
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

template <int kType, uint32_t kBits>
struct StepKernels {
  static constexpr EncodeChunkFn encode = encodeChunkSteps<kType, kBits>;
  static constexpr DecodeChunkFn decode = decodeChunkSteps<kType, kBits>;
};

}  // namespace

uint32_t encodeChunkPortable(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  if (t.smBits % 8 != 0) memset(sm, 0, (size_t(n) * t.smBits + 7) / 8);
  if (tab.codeBits == 3) memset(codes, 0, (size_t(n) * 3 + 7) / 8);
  uint32_t escapes = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t w = loadElem(in + size_t(i) * t.elemBytes, t.elemBytes);
    uint32_t e = t.exponent(w);
    uint32_t code = tab.code[e];
    if (code == kEscapeCode) {
      putEscape(esc, escapes++, i, e);
      code = 0;
    }
    putSm(t, sm, i, t.signMantissa(w));
    if (tab.codeBits == 3) putBits(codes, 3, i, code);
    else if (i & 1) codes[i / 2] |= uint8_t(code << 4);
    else codes[i / 2] = uint8_t(code);
  }
  return escapes;
}

void decodeChunkPortable(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t code = getCode(codes, tab.codeBits, i);
    storeElem(out + size_t(i) * t.elemBytes, t.elemBytes, t.join(getSm(t, sm, i), tab.exponent[code]));
  }
}

void decodeTailPortable(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t first, uint32_t n,
                        const CodecTables& tab, uint8_t* out) {
  decodeChunkPortable(t, sm + size_t(first) * t.smBits / 8, codes + size_t(first) * tab.codeBits / 8, n - first, tab,
                      out + size_t(first) * t.elemBytes);
}

uint32_t encodeTailPortable(const TypeTraits& t, const uint8_t* in, uint32_t first, uint32_t n,
                            const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  uint32_t k = encodeChunkPortable(t, in + size_t(first) * t.elemBytes, n - first, tab,
                                   sm + size_t(first) * t.smBits / 8, codes + size_t(first) * tab.codeBits / 8, esc);
  for (uint32_t j = 0; j < k; ++j) {
    uint32_t pos = (esc[3 * j] | (esc[3 * j + 1] << 8)) + first;
    esc[3 * j] = uint8_t(pos);
    esc[3 * j + 1] = uint8_t(pos >> 8);
  }
  return k;
}

void buildTables(const szCodebook_t& cb, CodecTables* tab) {
  tab->codeBits = codebookBits(cb);
  memset(tab->code, kEscapeCode, sizeof(tab->code));
  memset(tab->exponent, 0, sizeof(tab->exponent));
  for (uint32_t i = 0; i < (1u << tab->codeBits); ++i) {
    tab->code[cb.exponents[i]] = uint8_t(i);
    tab->exponent[i] = cb.exponents[i];
  }
}

bool stepsChunkCodec(int type, uint32_t codeBits, ChunkCodec* out) {
  return familyCodec<StepKernels, szBfloat16, szFloat16, szFloat8e5m2, szFloat8e4m3>(type, codeBits, "steps", out);
}

ChunkCodec selectChunkCodec(int type, uint32_t codeBits) {
  const bool simd = szParamCpuSimd() != 0;
  if (type == szBfloat16 && codeBits == 4 && simd && __builtin_cpu_supports("avx2"))
    return {encodeChunkBf16Avx2, decodeChunkBf16Avx2, "bf16-avx2"};
  ChunkCodec c;
  // Zen 1 and 2 run pext/pdep in microcode (hundreds of cycles): the step kernels are faster there.
  const bool fastBmi2 = __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
  if (simd && fastBmi2 && __builtin_cpu_supports("avx2") && avx2NarrowChunkCodec(type, codeBits, &c)) {
    // E4M3 decodes 64 elements a step with AVX-512's byte permutes and bit-field shuffle.
    if (type == szFloat8e4m3 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi"))
      c = ChunkCodec{c.encode, e4m3DecodeVbmi(codeBits), "avx2-narrow, avx512vbmi decode"};
    return c;
  }
  if (simd && fastBmi2 && bmi2ChunkCodec(type, codeBits, &c)) return c;
  if (stepsChunkCodec(type, codeBits, &c)) return c;
  return {encodeChunkPortable, decodeChunkPortable, "portable"};
}

}  // namespace sz
