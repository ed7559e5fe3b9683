// AVX-512 (BW, VBMI) decoder of FP8 E4M3 chunks (compiled with -mavx512f -mavx512bw -mavx512vbmi,
// called only after a CPU check; selectChunkCodec pairs it with the AVX2 encoder): 64 elements
// a step. Symbols and 4-bit codes are nibbles widened to 16-bit lanes; 3-bit codes are moved
// three bytes to a 64-bit lane by a byte permute, and each lane's eight fields are cut out by one
// bit-field shuffle (vpmultishiftqb). Two table shuffles rebuild the elements.
#include <immintrin.h>

#include "chunk_codec.h"

// Broadcast, byte permute and bit-field shuffle in their zero-masked forms: GCC 12's unmasked ones
// pass an undefined vector that -Wuninitialized reports (an error under -Werror).

namespace sz {
namespace {

constexpr uint32_t kStep = 64;

// 32 bytes of nibbles as the 64 bytes they pack, element 2i from the low nibble of byte i.
__m512i unpackNibbles(__m256i v) {
  const __m512i x = _mm512_cvtepu8_epi16(v);
  return _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi16(0x000F)),
                         _mm512_and_si512(_mm512_slli_epi16(x, 4), _mm512_set1_epi16(0x0F00)));
}

// A step's 64 codes, one per byte. 3-bit codes: output byte 8q + m takes source byte 3q + m
// (m < 3), so lane q holds codes 8q .. 8q + 7 in its low 24 bits, and byte k of the lane is bits
// 3k .. 3k + 7 of it, masked to 3. Reads the step's codes only (24 or 32 bytes).
template <uint32_t kBits>
__m512i loadCodes(const uint8_t* p) {
  if constexpr (kBits == 4) {
    return unpackNibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  } else {
    const __m512i group = _mm512_set_epi8(0, 0, 0, 0, 0, 23, 22, 21, 0, 0, 0, 0, 0, 20, 19, 18,  //
                                          0, 0, 0, 0, 0, 17, 16, 15, 0, 0, 0, 0, 0, 14, 13, 12,  //
                                          0, 0, 0, 0, 0, 11, 10, 9, 0, 0, 0, 0, 0, 8, 7, 6,      //
                                          0, 0, 0, 0, 0, 5, 4, 3, 0, 0, 0, 0, 0, 2, 1, 0);
    const __m512i bytes = _mm512_maskz_loadu_epi8(0xFFFFFFull, p);
    const __m512i fields = _mm512_set1_epi64(0x15120F0C09060300ll);  // bit offsets 0, 3, .., 21
    return _mm512_and_si512(_mm512_maskz_multishift_epi64_epi8(~0ull, fields, _mm512_maskz_permutexvar_epi8(~0ull, group, bytes)),
                            _mm512_set1_epi8(0x07));
  }
}

template <uint32_t kBits>
void decodeChunkE4m3Vbmi(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out) {
  // Code -> exponent field (exponent << 3; a 3-bit codebook's unused entries masked too), and
  // symbol nibble -> sign and mantissa in place.
  const __m512i book = _mm512_and_si512(
      _mm512_slli_epi16(_mm512_maskz_broadcast_i32x4(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.exponent))), 3),
      _mm512_set1_epi8(0x78));
  const __m512i symbol = _mm512_maskz_broadcast_i32x4(0xFFFF, _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, char(0x80), char(0x81),
                                                              char(0x82), char(0x83), char(0x84), char(0x85),
                                                              char(0x86), char(0x87)));
  uint32_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    const __m512i s = unpackNibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sm + i / 2)));
    const __m512i c = loadCodes<kBits>(codes + size_t(i) * kBits / 8);
    _mm512_storeu_si512(out + i, _mm512_or_si512(_mm512_shuffle_epi8(symbol, s), _mm512_shuffle_epi8(book, c)));
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

}  // namespace

DecodeChunkFn e4m3DecodeVbmi(uint32_t codeBits) {
  return codeBits == 3 ? decodeChunkE4m3Vbmi<3> : decodeChunkE4m3Vbmi<4>;
}

}  // namespace sz
