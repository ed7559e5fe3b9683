// Element-type traits of the SplitZip format (docs/FORMAT.md §Types): where the exponent sits
// and how sign and mantissa pack into the verbatim sign-mantissa symbol. Shared by the CPU codec
// and the CUDA kernels, so both split elements identically.
#pragma once

#include <cstdint>

#include "splitzip.h"

#if defined(__CUDACC__)
#define SZ_HD __host__ __device__ __forceinline__
#else
#define SZ_HD inline
#endif

namespace sz {

constexpr uint32_t kChunkElems = 1024;    // escape positions are relative to a chunk
constexpr uint32_t kChunksPerGroup = 32;  // one uint64 group offset per 32 chunks
constexpr uint64_t kGroupElems = uint64_t(kChunkElems) * kChunksPerGroup;
constexpr uint32_t kEscapeBytes = 3;      // uint16 position + uint8 exponent
constexpr uint32_t kCodebookSize = SZ_CODEBOOK_SIZE;

struct TypeTraits {
  uint32_t elemBytes;  // 0: invalid type
  uint32_t expBits;    // 0: not compressible (stored raw)
  uint32_t mantBits;   // exponent starts at this bit
  uint32_t smBits;     // sign + mantissa bits

  SZ_HD constexpr uint32_t elemBits() const { return elemBytes * 8; }
  SZ_HD constexpr uint32_t exponent(uint32_t w) const { return (w >> mantBits) & ((1u << expBits) - 1); }
  SZ_HD constexpr uint32_t signMantissa(uint32_t w) const {
    return ((w >> (elemBits() - 1)) << mantBits) | (w & ((1u << mantBits) - 1));
  }
  SZ_HD constexpr uint32_t join(uint32_t sm, uint32_t e) const {
    return ((sm >> mantBits) << (elemBits() - 1)) | (e << mantBits) | (sm & ((1u << mantBits) - 1));
  }
};

// The type's name in messages (the CLI's names for the compressible types); "invalid type"
// for a value outside szDataType_t.
inline const char* szTypeName(int type) {
  static const char* const kNames[] = {"int8",    "uint8",   "int32",   "uint32", "int64",   "uint64",
                                       "fp16",    "fp32",    "float64", "bf16",   "fp8e4m3", "fp8e5m2"};
  return type >= 0 && type < szNumTypes ? kNames[type] : "invalid type";
}

SZ_HD constexpr TypeTraits typeTraits(int type) {
  switch (type) {
    case szInt8: case szUint8: return {1, 0, 0, 0};
    case szInt32: case szUint32: return {4, 0, 0, 0};
    case szInt64: case szUint64: case szFloat64: return {8, 0, 0, 0};
    case szBfloat16: return {2, 8, 7, 8};
    case szFloat32: return {4, 8, 23, 24};
    case szFloat8e5m2: return {1, 5, 2, 3};
    case szFloat16: return {2, 5, 10, 11};
    case szFloat8e4m3: return {1, 4, 3, 4};
    default: return {0, 0, 0, 0};
  }
}

// Format version 1's compressed types (bf16, fp32, fp8e5m2 with 4-bit codes): the ones the slot
// kernels' any-type kernel encodes and decodes (FP16's and E4M3's paths, format version 2, are in
// their typed kernels and the kernel of all types: kernels/slot_kernel_table.h).
SZ_HD constexpr bool deviceCodecType(int type) {
  return type == szBfloat16 || type == szFloat32 || type == szFloat8e5m2;
}

// Format version 2's types, FP16 and E4M3 (3- or 4-bit codes; docs/FORMAT.md §Code width): the
// kernels give them paths of their own.
SZ_HD constexpr bool narrowCodecType(int type) { return type == szFloat16 || type == szFloat8e4m3; }

// The types the standalone GPU codec (szEncodeAsync, szDecodeAsync and the batched calls)
// compresses: version 1's with 4-bit codes, and FP16 and E4M3 (format version 2) with 3- or
// 4-bit codes, byte-identical to the CPU codec's frames.
SZ_HD constexpr bool gpuCodecType(int type) { return deviceCodecType(type) || narrowCodecType(type); }

}  // namespace sz
