// AVX2 per-chunk kernels for BF16 (compiled with -mavx2, called only after a CPU check).
// 32 elements per step. Encoding looks the exponent's code up with byte shuffles: the
// exponent -> code table is split by the exponent's high nibble into 16-entry tables, one
// shuffle each, and only the high nibbles the codebook uses need one (KV codebooks span 2 or 3,
// e.g. 115..130), instead of comparing against all 16 entries. Decoding looks codes up with one
// byte shuffle (the codebook fits one register).
#include <immintrin.h>

#include "chunk_codec.h"

namespace sz {
namespace {

constexpr uint32_t kStep = 32;

// Scalar tail of a chunk: the portable kernel on the remaining elements, offset to match.
// The exponent -> code table as shuffle tables: for each high nibble h the codebook uses,
// bytes 0x10 | code (hit) or 0 (escape) indexed by the low nibble.
struct NibbleTables {
  int count = 0;
  __m256i high[16], table[16];
};

void buildNibbleTables(const CodecTables& tab, NibbleTables* nt) {
  const __m128i escape = _mm_set1_epi8(char(kEscapeCode)), hitFlag = _mm_set1_epi8(0x10);
  for (int h = 0; h < 16; ++h) {
    __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code + 16 * h));
    __m128i miss = _mm_cmpeq_epi8(codes, escape);
    if (_mm_movemask_epi8(miss) == 0xFFFF) continue;
    nt->high[nt->count] = _mm256_set1_epi8(char(h));
    nt->table[nt->count++] = _mm256_broadcastsi128_si256(_mm_andnot_si128(miss, _mm_or_si128(codes, hitFlag)));
  }
}

}  // namespace

uint32_t encodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  NibbleTables nt;
  buildNibbleTables(tab, &nt);
  const __m256i mant = _mm256_set1_epi16(0x7F), sign = _mm256_set1_epi16(0x80);
  const __m256i expMask = _mm256_set1_epi16(0xFF), nibble = _mm256_set1_epi8(0x0F);
  const __m256i pairMul = _mm256_set1_epi16(0x1001);  // bytes {1, 16}: lo + 16 * hi
  uint32_t escapes = 0, i = 0;
  for (; i + kStep <= n; i += kStep) {
    __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i));
    __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 2 * i + 32));
    __m256i s0 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 8), sign), _mm256_and_si256(v0, mant));
    __m256i s1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v1, 8), sign), _mm256_and_si256(v1, mant));
    __m256i smb = _mm256_permute4x64_epi64(_mm256_packus_epi16(s0, s1), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sm + i), smb);
    __m256i e0 = _mm256_and_si256(_mm256_srli_epi16(v0, 7), expMask);
    __m256i e1 = _mm256_and_si256(_mm256_srli_epi16(v1, 7), expMask);
    __m256i e = _mm256_permute4x64_epi64(_mm256_packus_epi16(e0, e1), 0xD8);
    __m256i lo = _mm256_and_si256(e, nibble), hi = _mm256_and_si256(_mm256_srli_epi16(e, 4), nibble);
    __m256i hit = _mm256_setzero_si256();  // 0x10 | code where the exponent is in the codebook
    for (int k = 0; k < nt.count; ++k)
      hit = _mm256_or_si256(hit, _mm256_and_si256(_mm256_cmpeq_epi8(hi, nt.high[k]),
                                                  _mm256_shuffle_epi8(nt.table[k], lo)));
    __m256i code = _mm256_and_si256(hit, nibble);  // escapes get code 0
    __m256i pairs = _mm256_maddubs_epi16(code, pairMul);
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(pairs, pairs), 0xD8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i / 2), _mm256_castsi256_si128(packed));
    // Bit 4 (the hit flag) of every byte moves to bit 7 for movemask.
    uint32_t miss = ~uint32_t(_mm256_movemask_epi8(_mm256_slli_epi16(hit, 3)));
    while (miss) {
      uint32_t b = __builtin_ctz(miss);
      miss &= miss - 1;
      uint32_t pos = i + b;
      putEscape(esc, escapes++, pos, (in[2 * pos] >> 7) | (in[2 * pos + 1] << 1));
    }
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

void decodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  const __m128i lut = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.exponent));
  const __m128i lowNibble = _mm_set1_epi8(0x0F);
  const __m256i mant = _mm256_set1_epi16(0x7F), sign = _mm256_set1_epi16(0x80);
  uint32_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i / 2));
    __m128i lo = _mm_and_si128(c, lowNibble);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(c, 4), lowNibble);
    __m128i ea = _mm_shuffle_epi8(lut, _mm_unpacklo_epi8(lo, hi));  // elements 0..15
    __m128i eb = _mm_shuffle_epi8(lut, _mm_unpackhi_epi8(lo, hi));  // elements 16..31
    __m128i sa = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sm + i));
    __m128i sb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sm + i + 16));
    __m256i wa = _mm256_cvtepu8_epi16(sa), wb = _mm256_cvtepu8_epi16(sb);
    __m256i oa = _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(wa, sign), 8),
                                                 _mm256_slli_epi16(_mm256_cvtepu8_epi16(ea), 7)),
                                 _mm256_and_si256(wa, mant));
    __m256i ob = _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(wb, sign), 8),
                                                 _mm256_slli_epi16(_mm256_cvtepu8_epi16(eb), 7)),
                                 _mm256_and_si256(wb, mant));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), oa);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i + 32), ob);
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

}  // namespace sz
