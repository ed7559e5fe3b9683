// Per-chunk encode/decode kernels of the CPU codec: a portable version for every compressible
// type and code width, eight-element steps for the types whose eight symbols fit 128 bits (with
// BMI2's bit extract and deposit where the CPU has them), and AVX2 versions for BF16 with 4-bit
// codes and for FP16 and E4M3, picked per frame (selectChunkCodec).
#pragma once

#include <cstdint>
#include <cstring>

#include "dtype.h"

namespace sz {

// Exponent -> code table: 0..15 (0..7 for 3-bit codes), or kEscapeCode for exponents outside
// the codebook.
constexpr uint8_t kEscapeCode = 0xFF;
struct CodecTables {
  uint8_t code[256];
  uint8_t exponent[kCodebookSize];  // 3-bit codes: entries 8..15 unused
  uint32_t codeBits;                // 4, or 3 (docs/FORMAT.md §Code width)
};

// Encodes the n (<= 1024) elements at `in` (one chunk) into the chunk's sign-mantissa bytes
// `sm` and exponent-code bytes `codes` (both start byte aligned; a chunk's sections do, since
// 1024 elements fill whole bytes at any width); writes its escape records to `esc` (room for n
// records) and returns their number.
using EncodeChunkFn = uint32_t (*)(const TypeTraits& t, const uint8_t* in, uint32_t n,
                                   const CodecTables& tab, uint8_t* sm, uint8_t* codes,
                                   uint8_t* esc);
// Decodes one chunk's n elements from `sm` and `codes` into `out`, escapes not yet applied.
using DecodeChunkFn = void (*)(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes,
                               uint32_t n, const CodecTables& tab, uint8_t* out);

struct ChunkCodec {
  EncodeChunkFn encode;
  DecodeChunkFn decode;
  const char* name;
};

uint32_t encodeChunkPortable(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc);
void decodeChunkPortable(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out);
// The portable kernels on elements [first, n) of a chunk (first a multiple of 8, so both
// sections start on a byte), with escape positions relative to the chunk: the fast kernels' tails.
uint32_t encodeTailPortable(const TypeTraits& t, const uint8_t* in, uint32_t first, uint32_t n,
                            const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc);
void decodeTailPortable(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t first, uint32_t n,
                        const CodecTables& tab, uint8_t* out);
uint32_t encodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc);
void decodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out);
// The eight-element-step kernels of `type` (BF16, FP16, E5M2, E4M3) and `codeBits`, portable
// C++ or with BMI2 (only where the CPU has it); false for other types.
bool stepsChunkCodec(int type, uint32_t codeBits, ChunkCodec* out);
bool bmi2ChunkCodec(int type, uint32_t codeBits, ChunkCodec* out);
// AVX2 (with BMI2) kernels of FP16 and E4M3, 32 elements per step; false for other types.
bool avx2NarrowChunkCodec(int type, uint32_t codeBits, ChunkCodec* out);
// AVX-512 (BW, VBMI) decoder of E4M3 with `codeBits`-bit codes, 64 elements per step (only where
// the CPU has them).
DecodeChunkFn e4m3DecodeVbmi(uint32_t codeBits);

// A family of kernels, K<kType, kBits>::encode / ::decode, as the ChunkCodec of `type` (one of
// kTypes) and `codeBits` (3 or 4); false for a type the family lacks.
template <template <int, uint32_t> class K, int kType>
bool familyCodecOf(int type, uint32_t codeBits, const char* name, ChunkCodec* out) {
  if (type != kType) return false;
  *out = codeBits == 3 ? ChunkCodec{K<kType, 3>::encode, K<kType, 3>::decode, name}
                       : ChunkCodec{K<kType, 4>::encode, K<kType, 4>::decode, name};
  return true;
}
template <template <int, uint32_t> class K, int... kTypes>
bool familyCodec(int type, uint32_t codeBits, const char* name, ChunkCodec* out) {
  return (familyCodecOf<K, kTypes>(type, codeBits, name, out) || ...);
}

// The kN (<= 16) little-endian bytes at p as an integer, assembled in registers: a memcpy of a
// few bytes into a zeroed wider variable reads them back through a partial store, which stalls
// store forwarding (a step kernel's hot spot, measured with perf).
template <uint32_t kN>
static inline unsigned __int128 loadLeBytes(const uint8_t* p) {  // internal: kernels built for other ISAs include it
  static_assert(kN <= 16, "at most 16 bytes");
  unsigned __int128 v = 0;
  if constexpr (kN >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    v = w;
    for (uint32_t k = 8; k < kN; ++k) v |= (unsigned __int128)p[k] << (8 * k);
  } else if constexpr (kN == 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    v = w;
  } else {
    for (uint32_t k = 0; k < kN; ++k) v |= (unsigned __int128)p[k] << (8 * k);
  }
  return v;
}

// Writes a chunk's escape record `index` (docs/FORMAT.md: position u16 LE, then the exponent) into
// its records at `esc`.
static inline void putEscape(uint8_t* esc, uint32_t index, uint32_t pos, uint32_t exponent) {  // internal, as loadLeBytes
  esc[3 * index] = uint8_t(pos);
  esc[3 * index + 1] = uint8_t(pos >> 8);
  esc[3 * index + 2] = uint8_t(exponent);
}

// The fastest kernels for `type` and `codeBits`-bit codes on this CPU (SZ_CPU_SIMD=0 forces the
// portable ones).
ChunkCodec selectChunkCodec(int type, uint32_t codeBits);

// Builds the tables of a validated codebook.
void buildTables(const szCodebook_t& cb, CodecTables* tab);

}  // namespace sz
