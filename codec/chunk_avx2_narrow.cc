// AVX2 + BMI2 per-chunk kernels for FP16 and FP8 E4M3 (compiled with -mavx2 -mbmi2, called only
// after a CPU check): 32 elements per step. The exponents are cut out of a whole vector and
// looked up with byte shuffles (two 16-entry tables cover FP16's 5-bit exponent); escapes show in
// a movemask. Codes are packed and unpacked by vector operations (storeCodes, loadCodes), E4M3's
// 4-bit symbols as nibbles, FP16's 11-bit symbols by multiply-adds and shifts on encode and one
// bit deposit (pdep) per 64-bit word on decode.
#include <immintrin.h>

#include <cstring>

#include "chunk_codec.h"

namespace sz {
namespace {

constexpr uint32_t kStep = 32;

constexpr uint64_t repeat(uint64_t field, uint32_t w) {
  uint64_t m = 0;
  for (uint32_t i = 0; i < 64; i += w) m |= field << i;
  return m;
}

// FP16: the sign and mantissa bits of four elements in a 64-bit word, and the 44 bits of their
// symbols.
constexpr TypeTraits kFp16 = typeTraits(szFloat16);
constexpr uint64_t kFp16Sm = repeat((1ull << 15) | ((1ull << kFp16.mantBits) - 1), 16);
constexpr uint32_t kFp16WordBits = 4 * kFp16.smBits;

// The 32 exponents of a step's FP16 elements, one per byte, in element order.
__m256i fp16Exponents(const uint8_t* in) {
  const __m256i mask = _mm256_set1_epi16(0x1F);
  const __m256i a = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)), 10), mask);
  const __m256i b = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32)), 10), mask);
  return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);  // packus interleaves the lanes
}

// The 11-bit symbols (sign << 10 | mantissa) of 16 FP16 elements packed LSB first: 11 bytes per
// 128-bit lane (its 8 elements), at bytes 0..10 of each. Pairs by a multiply-add (22 bits a 32-bit
// lane), then pairs of those in 64 bits (44), then the lane's two halves (88).
__m256i fp16Symbols(__m256i x) {
  const __m256i s = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 5), _mm256_set1_epi16(0x400)),
                                    _mm256_and_si256(x, _mm256_set1_epi16(0x3FF)));
  const __m256i v32 = _mm256_madd_epi16(s, _mm256_set1_epi32(0x08000001));  // s[2i] + 2048 s[2i+1]
  const __m256i v64 = _mm256_or_si256(_mm256_and_si256(v32, _mm256_set1_epi64x(0x3FFFFF)),
                                      _mm256_slli_epi64(_mm256_srli_epi64(v32, 32), 22));
  const __m256i lowHalf = _mm256_setr_epi64x(-1, 0, -1, 0), highHalf = _mm256_setr_epi64x(0, -1, 0, -1);
  return _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(v64, lowHalf), _mm256_slli_epi64(_mm256_bsrli_epi128(v64, 8), 44)),
                         _mm256_and_si256(_mm256_srli_epi64(v64, 20), highHalf));
}

// 32 nibbles (one per byte, < 16) packed two per byte, element 2i in the low nibble: 16 bytes.
__m128i packNibbles(__m256i v) {
  const __m256i p = _mm256_maddubs_epi16(v, _mm256_set1_epi16(0x1001));  // v[2i] + 16 v[2i+1]
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(p, p), 0x08));
}

// The records of the escapes in `m` (bit k: element i + k of the step, whose exponent is eb[k]),
// in position order, after the `escapes` already written; returns the new count.
uint32_t recordEscapes(uint32_t m, uint32_t i, const uint8_t* eb, uint8_t* esc, uint32_t escapes) {
  for (; m != 0; m &= m - 1) {
    const uint32_t k = uint32_t(__builtin_ctz(m));
    putEscape(esc, escapes++, i + k, eb[k]);
  }
  return escapes;
}

// A step's 32 codes (one per byte, < 2^kBits) as the code section stores them: nibbles (4-bit),
// or 3-bit fields LSB first, gathered into 24-bit groups of eight by two multiply-adds and a
// shift, then 12 bytes by a shuffle (stored as 8 + 4: nothing past the step's codes).
template <uint32_t kBits>
void storeCodes(uint8_t* dst, __m256i c) {
  if constexpr (kBits == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), packNibbles(c));
  } else {
    const __m256i gather = _mm256_setr_epi8(0, 1, 2, 8, 9, 10, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                            0, 1, 2, 8, 9, 10, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i v16 = _mm256_maddubs_epi16(c, _mm256_set1_epi16(0x0801));    // c[2i] + 8 c[2i+1]
    const __m256i v32 = _mm256_madd_epi16(v16, _mm256_set1_epi32(0x00400001));  // 12 bits of four
    const __m256i g = _mm256_shuffle_epi8(_mm256_or_si256(v32, _mm256_srli_epi64(v32, 20)), gather);
    const uint64_t lo = uint64_t(_mm_cvtsi128_si64(_mm256_castsi256_si128(g)));
    const uint64_t hi = uint64_t(_mm_cvtsi128_si64(_mm256_extracti128_si256(g, 1)));
    const uint64_t w0 = lo | hi << 48;
    const uint32_t w1 = uint32_t(hi >> 16);
    memcpy(dst, &w0, 8);
    memcpy(dst + 8, &w1, 4);
  }
}

// E4M3's step with every section made by vector operations: the symbols and 4-bit codes as
// nibbles paired by a multiply-add; 3-bit codes gathered into 24-bit groups of eight by two
// multiply-adds and a shift, then 12 bytes by a shuffle. The step's first escape is recorded
// whether or not it has one and counted only if it has; a second one is rare (12 % of steps at
// 1.8 % escapes). That record is stored as 4 bytes at record `escapes` <= i (the elements before
// the step), so it ends by byte 3i + 4 < 3n: inside the n records `esc` holds, past the counted ones.
template <uint32_t kBits>
uint32_t encodeChunkAvx2E4m3(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab, uint8_t* sm,
                             uint8_t* codes, uint8_t* esc) {
  // Exponent -> code; an escape 0x80 (code 0 under the mask below, its sign bit for movemask).
  const __m256i table = _mm256_min_epu8(
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code))), _mm256_set1_epi8(char(0x80)));
  const __m256i low4 = _mm256_set1_epi8(0x0F), low3 = _mm256_set1_epi8(0x07), sign = _mm256_set1_epi8(0x08);
  const __m256i codeMask = _mm256_set1_epi8(char((1u << kBits) - 1));
  uint32_t escapes = 0, i = 0;
  for (; i + kStep <= n; i += kStep) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i e = _mm256_and_si256(_mm256_srli_epi16(x, 3), low4);
    const __m256i c = _mm256_shuffle_epi8(table, e);
    const uint32_t m = uint32_t(_mm256_movemask_epi8(c));
    const __m256i c0 = _mm256_and_si256(c, codeMask);
    const __m256i s = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 4), sign), _mm256_and_si256(x, low3));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sm + i / 2), packNibbles(s));
    storeCodes<kBits>(codes + size_t(i) * kBits / 8, c0);
    alignas(32) uint8_t eb[kStep];
    _mm256_store_si256(reinterpret_cast<__m256i*>(eb), e);
    const uint32_t k = uint32_t(__builtin_ctz(m | 0x80000000u));  // 31 when none escapes: written, not counted
    const uint32_t rec = (i + k) | uint32_t(eb[k]) << 16;  // putEscape's record, and a fourth byte
    memcpy(esc + 3 * escapes, &rec, 4);
    escapes = recordEscapes(m & (m - 1), i, eb, esc, escapes + (m != 0));
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

template <uint32_t kBits>
uint32_t encodeChunkAvx2Fp16(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab, uint8_t* sm,
                             uint8_t* codes, uint8_t* esc) {
  // Exponent -> code as shuffle tables: exponents 0..15 and 16..31.
  const __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code)));
  const __m256i hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code + 16)));
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  uint32_t escapes = 0, i = 0;
  for (; i + kStep <= n; i += kStep) {
    const uint8_t* src = in + size_t(i) * 2;
    const __m256i e = fp16Exponents(src);
    const __m256i upper = _mm256_cmpgt_epi8(e, low4);
    const __m256i c = _mm256_blendv_epi8(_mm256_shuffle_epi8(lo, _mm256_and_si256(e, low4)),
                                         _mm256_shuffle_epi8(hi, _mm256_and_si256(e, low4)), upper);
    // Escapes (kEscapeCode has bit 7 set) get code 0 and a record each, in position order (the
    // default codebook escapes rarely, so the loop's branch predicts well; E4M3's kernel has none).
    const __m256i escaped = _mm256_cmpgt_epi8(_mm256_setzero_si256(), c);
    alignas(32) uint8_t eb[kStep];
    _mm256_store_si256(reinterpret_cast<__m256i*>(eb), e);
    escapes = recordEscapes(uint32_t(_mm256_movemask_epi8(escaped)), i, eb, esc, escapes);
    storeCodes<kBits>(codes + size_t(i) * kBits / 8, _mm256_andnot_si256(escaped, c));
    // Symbols: 44 bytes, 11 from each 128-bit lane of the two vectors. Three go as 16-byte stores
    // that the next overwrites past its 11; the last as 8 + 2 + 1, nothing past the step's.
    uint8_t* sdst = sm + size_t(i) * kFp16.smBits / 8;
    const __m256i a = fp16Symbols(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
    const __m256i b = fp16Symbols(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sdst), _mm256_castsi256_si128(a));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sdst + 11), _mm256_extracti128_si256(a, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sdst + 22), _mm256_castsi256_si128(b));
    const __m128i last = _mm256_extracti128_si256(b, 1);
    const uint64_t w0 = uint64_t(_mm_cvtsi128_si64(last));
    const uint32_t w1 = uint32_t(_mm_extract_epi32(last, 2));
    memcpy(sdst + 33, &w0, 8);
    memcpy(sdst + 41, &w1, 2);
    sdst[43] = uint8_t(w1 >> 16);
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

// 16 bytes of nibbles as the 32 bytes they pack, element 2i from the low nibble of byte i.
__m256i unpackNibbles(__m128i v) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(v, low4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
  return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi));
}

// A step's 32 codes from the code section, one per byte: nibbles, or 3-bit fields two to a 16-bit
// lane (lane k holds codes 2k and 2k+1, bits 6k.. of the step's 96: a byte shuffle gathers the
// 16 bits from byte 6k / 8, a multiply shifts each lane's pair to bits 6..11, one shift and two
// masks spread it to the lane's two bytes). Reads the step's codes only (12 bytes as 8 + 4).
template <uint32_t kBits>
__m256i loadCodes(const uint8_t* p) {
  if constexpr (kBits == 4) {
    return unpackNibbles(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    const __m256i gather = _mm256_setr_epi8(0, 1, 0, 1, 1, 2, 2, 3, 3, 4, 3, 4, 4, 5, 5, 6,
                                            6, 7, 6, 7, 7, 8, 8, 9, 9, 10, 9, 10, 10, 11, 11, -1);
    const __m256i align = _mm256_setr_epi16(64, 1, 4, 16, 64, 1, 4, 16, 64, 1, 4, 16, 64, 1, 4, 16);  // 2^(6 - 6k % 8)
    uint64_t w0;
    uint32_t w1;
    memcpy(&w0, p, 8);
    memcpy(&w1, p + 8, 4);
    const __m128i v = _mm_insert_epi32(_mm_cvtsi64_si128(int64_t(w0)), int(w1), 2);
    const __m256i pair = _mm256_srli_epi16(
        _mm256_mullo_epi16(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(v), gather), align), 6);
    return _mm256_or_si256(_mm256_and_si256(pair, _mm256_set1_epi16(0x7)),
                           _mm256_and_si256(_mm256_slli_epi16(pair, 5), _mm256_set1_epi16(0x700)));
  }
}

__m256i vec(const uint64_t* w) {
  return _mm256_set_epi64x((long long)w[3], (long long)w[2], (long long)w[1], (long long)w[0]);
}

template <uint32_t kBits>
void decodeChunkAvx2Fp16(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.exponent)));
  uint32_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    const __m256i e = _mm256_shuffle_epi8(book, loadCodes<kBits>(codes + size_t(i) * kBits / 8));
    // Symbols back into each 64-bit word's sign and mantissa bits: word j's symbols start at bit
    // 44 j of the step's (so one 8-byte load at their first byte holds them). The last load may
    // read up to 4 bytes past the step's symbols: the section's next step, or the frame's code
    // section behind it, never outside the frame.
    uint64_t words[8];
    const uint8_t* ssrc = sm + size_t(i) * kFp16.smBits / 8;
    for (uint32_t j = 0; j < 8; ++j) {
      const uint32_t bit = j * kFp16WordBits;
      uint64_t w;
      memcpy(&w, ssrc + bit / 8, 8);
      words[j] = _pdep_u64(w >> (bit % 8), kFp16Sm);
    }
    const __m256i e16a = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(e)), 10);
    const __m256i e16b = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(e, 1)), 10);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + size_t(i) * 2), _mm256_or_si256(vec(words), e16a));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + size_t(i) * 2 + 32), _mm256_or_si256(vec(words + 4), e16b));
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

// E4M3's step by vector operations: nibbles unpacked by byte interleaves; 3-bit codes four to a
// 32-bit lane (bits 12d.. of the step's 96: a byte shuffle, a variable shift, four fields spread
// to bytes), then the codebook by one byte shuffle.
template <uint32_t kBits>
void decodeChunkAvx2E4m3(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  // Code -> exponent field (exponent << 3), and symbol nibble -> sign and mantissa in place.
  const __m256i book = _mm256_and_si256(  // the unused entries of a 3-bit codebook masked too
      _mm256_slli_epi16(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.exponent))), 3),
      _mm256_set1_epi8(0x78));
  const __m256i symbol = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, char(0x80), char(0x81), char(0x82), char(0x83),
                                          char(0x84), char(0x85), char(0x86), char(0x87), 0, 1, 2, 3, 4, 5, 6, 7,
                                          char(0x80), char(0x81), char(0x82), char(0x83), char(0x84), char(0x85),
                                          char(0x86), char(0x87));
  uint32_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    const __m256i s = unpackNibbles(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sm + i / 2)));
    const __m256i c = loadCodes<kBits>(codes + size_t(i) * kBits / 8);
    const __m256i v = _mm256_or_si256(_mm256_shuffle_epi8(symbol, s), _mm256_shuffle_epi8(book, c));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), v);
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

template <int kType, uint32_t kBits>
struct Avx2NarrowKernels;
template <uint32_t kBits>
struct Avx2NarrowKernels<szFloat16, kBits> {
  static constexpr EncodeChunkFn encode = encodeChunkAvx2Fp16<kBits>;
  static constexpr DecodeChunkFn decode = decodeChunkAvx2Fp16<kBits>;
};
template <uint32_t kBits>
struct Avx2NarrowKernels<szFloat8e4m3, kBits> {
  static constexpr EncodeChunkFn encode = encodeChunkAvx2E4m3<kBits>;
  static constexpr DecodeChunkFn decode = decodeChunkAvx2E4m3<kBits>;
};

}  // namespace

bool avx2NarrowChunkCodec(int type, uint32_t codeBits, ChunkCodec* out) {
  return familyCodec<Avx2NarrowKernels, szFloat16, szFloat8e4m3>(type, codeBits, "avx2-narrow", out);
}

}  // namespace sz
