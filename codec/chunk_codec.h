// Per-chunk encode/decode kernels of the CPU codec: a portable version for every compressible
// type and an AVX2 version for BF16, picked once at run time (selectChunkCodec).
#pragma once

#include <cstdint>

#include "dtype.h"

namespace sz {

// Exponent -> code table: 0..15, or kEscapeCode for exponents outside the codebook.
constexpr uint8_t kEscapeCode = 0xFF;
struct CodecTables {
  uint8_t code[256];
  uint8_t exponent[kCodebookSize];
};

// Encodes the n (<= 1024) elements at `in` (one chunk) into the chunk's sign-mantissa bytes
// `sm` and exponent-code bytes `codes` (both start byte aligned); writes its escape records to
// `esc` (room for n records) and returns their number.
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
// The portable kernels on elements [first, n) of a chunk (first a multiple of 8), with escape
// positions relative to the chunk: the tails of the fast kernels.
uint32_t encodeTailPortable(const TypeTraits& t, const uint8_t* in, uint32_t first, uint32_t n,
                            const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc);
// FP8 E5M2, eight elements (three sign-mantissa bytes, four code bytes) per step.
uint32_t encodeChunkE5m2(const TypeTraits& t, const uint8_t* in, uint32_t n, const CodecTables& tab,
                         uint8_t* sm, uint8_t* codes, uint8_t* esc);
void decodeChunkE5m2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                     const CodecTables& tab, uint8_t* out);
uint32_t encodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* in, uint32_t n,
                             const CodecTables& tab, uint8_t* sm, uint8_t* codes, uint8_t* esc);
void decodeChunkBf16Avx2(const TypeTraits& t, const uint8_t* sm, const uint8_t* codes, uint32_t n,
                         const CodecTables& tab, uint8_t* out);

// The fastest kernels for `type` on this CPU (SZ_CPU_SIMD=0 forces the portable ones).
ChunkCodec selectChunkCodec(int type);

// Builds the tables of a validated codebook.
void buildTables(const szCodebook_t& cb, CodecTables* tab);

}  // namespace sz
