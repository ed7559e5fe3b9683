// BMI2 per-chunk kernels for the types of at most 16 bits (compiled with -mbmi2, called only
// after a CPU check): eight elements per step, their sign-mantissa symbols and exponents
// gathered with one bit extract (pext) per 64-bit word and scattered back with one bit deposit
// (pdep), since the format packs both least-significant-bit first in element order
// (docs/FORMAT.md §Sections). The exponent -> code lookups stay eight table loads; escapes are
// found in the looked-up bytes and recorded in place.
#include <immintrin.h>

#include <cstring>

#include "chunk_codec.h"

namespace sz {
namespace {

// Bits `field` of each of the 64 / w w-bit lanes of a word.
constexpr uint64_t repeat(uint64_t field, uint32_t w) {
  uint64_t m = 0;
  for (uint32_t i = 0; i < 64; i += w) m |= field << i;
  return m;
}

template <int kType>
struct Bmi2Shape {
  static constexpr TypeTraits T = typeTraits(kType);
  static constexpr uint32_t kWords = T.elemBytes;  // eight elements: one or two 64-bit words
  static constexpr uint32_t kPerWord = 8 / T.elemBytes;
  static constexpr uint64_t kSm = repeat((1ull << (T.elemBits() - 1)) | ((1ull << T.mantBits) - 1), T.elemBits());
  static constexpr uint64_t kExp = repeat(((1ull << T.expBits) - 1) << T.mantBits, T.elemBits());
  static constexpr uint32_t kSmWordBits = kPerWord * T.smBits;  // symbols of one word's elements
  static constexpr uint64_t kExpBytes = repeat((1ull << T.expBits) - 1, 8);  // an exponent per byte
  static_assert(T.elemBytes == 1 || T.elemBytes == 2, "eight elements in at most two words");
};

template <uint32_t kBits>
constexpr uint64_t kCodeBytes = repeat((1ull << kBits) - 1, 8);  // a code per byte

template <int kType, uint32_t kBits>
uint32_t encodeChunkBmi2(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab,
                         uint8_t* sm, uint8_t* codes, uint8_t* esc) {
  using S = Bmi2Shape<kType>;
  constexpr TypeTraits T = S::T;
  uint32_t escapes = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w[S::kWords];
    memcpy(w, in + size_t(i) * T.elemBytes, sizeof(w));
    // The eight exponents, one per byte (a word's lanes: the low 8 / kWords bytes).
    uint64_t ex = 0;
    for (uint32_t j = 0; j < S::kWords; ++j)
      ex |= _pdep_u64(_pext_u64(w[j], S::kExp), S::kExpBytes) << (64 / S::kWords * j);
    uint64_t g = 0;
    for (uint32_t k = 0; k < 8; ++k) g |= uint64_t(tab.code[(ex >> (8 * k)) & 0xFF]) << (8 * k);
    // Escapes (kEscapeCode has bit 7 set): code 0, and a record each, in position order.
    for (uint64_t m = g & 0x8080808080808080ull; m != 0; m &= m - 1) {
      const uint32_t k = uint32_t(__builtin_ctzll(m)) / 8, pos = i + k;
      g &= ~(uint64_t(0xFF) << (8 * k));
      putEscape(esc, escapes++, pos, uint8_t(ex >> (8 * k)));
    }
    const uint64_t c = _pext_u64(g, kCodeBytes<kBits>);
    memcpy(codes + size_t(i / 8) * kBits, &c, kBits);
    unsigned __int128 s = 0;
    for (uint32_t j = 0; j < S::kWords; ++j) s |= (unsigned __int128)_pext_u64(w[j], S::kSm) << (S::kSmWordBits * j);
    memcpy(sm + size_t(i / 8) * T.smBits, &s, T.smBits);
  }
  if (i < n) escapes += encodeTailPortable(t, in, i, n, tab, sm, codes, esc + 3 * escapes);
  return escapes;
}

template <int kType, uint32_t kBits>
void decodeChunkBmi2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                     const CodecTables& tab, uint8_t* out) {
  using S = Bmi2Shape<kType>;
  constexpr TypeTraits T = S::T;
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t cb = _pdep_u64(uint64_t(loadLeBytes<kBits>(codes + size_t(i / 8) * kBits)), kCodeBytes<kBits>);
    uint64_t ex = 0;
    for (uint32_t k = 0; k < 8; ++k) ex |= uint64_t(tab.exponent[(cb >> (8 * k)) & 0xFF]) << (8 * k);
    const unsigned __int128 s = loadLeBytes<T.smBits>(sm + size_t(i / 8) * T.smBits);
    uint64_t w[S::kWords];
    for (uint32_t j = 0; j < S::kWords; ++j) {
      const uint64_t e = _pext_u64(ex >> (64 / S::kWords * j), S::kExpBytes);
      const uint64_t sj = uint64_t(s >> (S::kSmWordBits * j));
      w[j] = _pdep_u64(e, S::kExp) | _pdep_u64(sj, S::kSm);
    }
    memcpy(out + size_t(i) * T.elemBytes, w, sizeof(w));
  }
  if (i < n) decodeTailPortable(t, sm, codes, i, n, tab, out);
}

template <int kType, uint32_t kBits>
struct Bmi2Kernels {
  static constexpr EncodeChunkFn encode = encodeChunkBmi2<kType, kBits>;
  static constexpr DecodeChunkFn decode = decodeChunkBmi2<kType, kBits>;
};

}  // namespace

bool bmi2ChunkCodec(int type, uint32_t codeBits, ChunkCodec* out) {
  return familyCodec<Bmi2Kernels, szBfloat16, szFloat16, szFloat8e5m2, szFloat8e4m3>(type, codeBits, "bmi2", out);
}

}  // namespace sz
