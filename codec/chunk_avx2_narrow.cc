// AVX2 + BMI2 per-chunk kernels for FP16 and FP8 E4M3 (compiled with -mavx2 -mbmi2, called only
// after a CPU check): 32 elements per step. The exponents are cut out of a whole vector and
// looked up with byte shuffles (two 16-entry tables cover a 5-bit exponent); escapes show in a
// movemask. Codes and sign-mantissa symbols are packed least-significant-bit first with one
// bit extract (pext) per 64-bit word, and unpacked with one bit deposit (pdep) on decode.
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

template <int kType>
struct Narrow {
  static constexpr TypeTraits T = typeTraits(kType);
  static constexpr uint32_t kVecs = T.elemBytes;  // 32-byte loads per step
  static constexpr uint64_t kSm = repeat((1ull << (T.elemBits() - 1)) | ((1ull << T.mantBits) - 1), T.elemBits());
  static constexpr uint32_t kSmWordBits = (64 / T.elemBits()) * T.smBits;  // one 64-bit word's symbols
  static_assert(kType == szFloat16 || kType == szFloat8e4m3, "FP16 and E4M3");
};

template <uint32_t kBits>
constexpr uint64_t kCodeBytes = repeat((1ull << kBits) - 1, 8);

// The 32 exponents of a step's elements, one per byte, in element order.
template <int kType>
__m256i exponents(const uint8_t* in) {
  if constexpr (kType == szFloat16) {
    const __m256i mask = _mm256_set1_epi16(0x1F);
    const __m256i a = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)), 10), mask);
    const __m256i b = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + 32)), 10), mask);
    return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);  // packus interleaves the lanes
  } else {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in));
    return _mm256_and_si256(_mm256_srli_epi16(x, 3), _mm256_set1_epi8(0x0F));
  }
}

template <int kType, uint32_t kBits>
uint32_t encodeChunkAvx2Narrow(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab,
                               uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  using S = Narrow<kType>;
  constexpr TypeTraits T = S::T;
  // Exponent -> code as shuffle tables: exponents 0..15 and 16..31 (FP16's upper half).
  const __m256i lo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code)));
  const __m256i hi = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.code + 16)));
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  uint32_t escapes = 0, i = 0;
  for (; i + kStep <= n; i += kStep) {
    const uint8_t* src = in + size_t(i) * T.elemBytes;
    const __m256i e = exponents<kType>(src);
    __m256i c = _mm256_shuffle_epi8(lo, _mm256_and_si256(e, low4));
    if constexpr (kType == szFloat16) {
      const __m256i upper = _mm256_cmpgt_epi8(e, low4);
      c = _mm256_blendv_epi8(c, _mm256_shuffle_epi8(hi, _mm256_and_si256(e, low4)), upper);
    }
    // Escapes (kEscapeCode has bit 7 set) get code 0 and a record each, in position order; no
    // branch on whether a step has one (44 % of E4M3's steps do, unpredictably).
    const __m256i escaped = _mm256_cmpgt_epi8(_mm256_setzero_si256(), c);
    alignas(32) uint8_t cb[kStep], eb[kStep];
    _mm256_store_si256(reinterpret_cast<__m256i*>(cb), _mm256_andnot_si256(escaped, c));
    _mm256_store_si256(reinterpret_cast<__m256i*>(eb), e);
    for (uint32_t m = uint32_t(_mm256_movemask_epi8(escaped)); m != 0; m &= m - 1) {
      const uint32_t k = uint32_t(__builtin_ctz(m)), pos = i + k;
      esc[3 * escapes] = uint8_t(pos);
      esc[3 * escapes + 1] = uint8_t(pos >> 8);
      esc[3 * escapes + 2] = eb[k];
      ++escapes;
    }
    uint8_t* cdst = codes + size_t(i) * kBits / 8;
    for (uint32_t j = 0; j < 4; ++j) {
      uint64_t w;
      memcpy(&w, cb + 8 * j, 8);
      const uint64_t packed = _pext_u64(w, kCodeBytes<kBits>);
      memcpy(cdst + j * kBits, &packed, kBits);
    }
    // Symbols: each 64-bit word of input gives kSmWordBits bits, whole bytes (44 or 32).
    unsigned __int128 acc = 0;
    uint32_t accBits = 0;
    uint8_t* sdst = sm + size_t(i) * T.smBits / 8;
    for (uint32_t j = 0; j < 4 * S::kVecs; ++j) {
      uint64_t w;
      memcpy(&w, src + 8 * j, 8);
      acc |= (unsigned __int128)_pext_u64(w, S::kSm) << accBits;
      accBits += S::kSmWordBits;
      if (accBits >= 64) {
        memcpy(sdst, &acc, 8);
        sdst += 8;
        acc >>= 64;
        accBits -= 64;
      }
    }
    memcpy(sdst, &acc, accBits / 8);  // 32 symbols fill whole bytes
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

__m256i vec(const uint64_t* w) {
  return _mm256_set_epi64x((long long)w[3], (long long)w[2], (long long)w[1], (long long)w[0]);
}

template <int kType, uint32_t kBits>
void decodeChunkAvx2Narrow(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                           const CodecTables& tab, uint8_t* out) {
  using S = Narrow<kType>;
  constexpr TypeTraits T = S::T;
  const __m256i book = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tab.exponent)));
  uint32_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    // Built in registers: four 8-byte stores read back as one vector would stall store forwarding.
    uint64_t cw[4];
    const uint8_t* csrc = codes + size_t(i) * kBits / 8;
    for (uint32_t j = 0; j < 4; ++j) {
      cw[j] = _pdep_u64(uint64_t(loadLeBytes<kBits>(csrc + j * kBits)), kCodeBytes<kBits>);
    }
    const __m256i e = _mm256_shuffle_epi8(book, vec(cw));
    // Symbols back into each 64-bit word's sign and mantissa bits: word j's symbols start at bit
    // j * kSmWordBits of the step's (44 or 32 bits, so one 8-byte load at their first byte holds
    // them). The last load may read up to 4 bytes past the step's symbols: the section's next
    // step, or the frame's code section behind it, never outside the frame.
    uint64_t words[4 * S::kVecs];
    const uint8_t* ssrc = sm + size_t(i) * T.smBits / 8;
    for (uint32_t j = 0; j < 4 * S::kVecs; ++j) {
      const uint32_t bit = j * S::kSmWordBits;
      uint64_t w;
      memcpy(&w, ssrc + bit / 8, 8);
      words[j] = _pdep_u64(w >> (bit % 8), S::kSm);
    }
    if constexpr (kType == szFloat16) {
      const __m256i e16a = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(e)), 10);
      const __m256i e16b = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(e, 1)), 10);
      const __m256i a = _mm256_or_si256(vec(words), e16a);
      const __m256i b = _mm256_or_si256(vec(words + 4), e16b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + size_t(i) * 2), a);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + size_t(i) * 2 + 32), b);
    } else {
      const __m256i e8 = _mm256_and_si256(_mm256_slli_epi16(e, 3), _mm256_set1_epi8(0x78));
      const __m256i v = _mm256_or_si256(vec(words), e8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), v);
    }
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

template <int kType, uint32_t kBits>
struct Avx2NarrowKernels {
  static constexpr EncodeChunkFn encode = encodeChunkAvx2Narrow<kType, kBits>;
  static constexpr DecodeChunkFn decode = decodeChunkAvx2Narrow<kType, kBits>;
};

}  // namespace

bool avx2NarrowChunkCodec(int type, uint32_t codeBits, ChunkCodec* out) {
  return familyCodec<Avx2NarrowKernels, szFloat16, szFloat8e4m3>(type, codeBits, "avx2-narrow", out);
}

}  // namespace sz
