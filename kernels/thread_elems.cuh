// What one GPU thread of the encoder handles: 16 consecutive elements of one type, their loads
// (16-byte vectors on aligned buffers, bytes otherwise), and the packing of their sign-mantissa
// symbols and exponent codes into the frame's sections (docs/FORMAT.md). The decoder's lanes
// are in kernels/decode_lanes.cuh.
#pragma once

#include <cstdint>

#include "codec/dtype.h"

namespace sz {

constexpr uint32_t kThreadElems = 16;

// Byte-wise loads and stores of the first `bytes` bytes of a register array; the unrolled,
// guarded loops keep the array in registers (a run-time index would move it to local memory).
template <uint32_t kWords>
__device__ __forceinline__ void loadBytes(uint32_t (&w)[kWords], const uint8_t* p, uint32_t bytes) {
#pragma unroll
  for (uint32_t i = 0; i < kWords; ++i) {
    w[i] = 0;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j)
      if (4 * i + j < bytes) w[i] |= uint32_t(p[4 * i + j]) << (8 * j);
  }
}

template <uint32_t kWords>
__device__ __forceinline__ void storeBytes(const uint32_t (&w)[kWords], uint8_t* p, uint32_t bytes) {
#pragma unroll
  for (uint32_t i = 0; i < kWords; ++i)
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j)
      if (4 * i + j < bytes) p[4 * i + j] = uint8_t(w[i] >> (8 * j));
}

template <int kType>
struct ThreadElems {
  static constexpr TypeTraits T = typeTraits(kType);
  static constexpr uint32_t kInBytes = kThreadElems * T.elemBytes;       // 16, 32 or 64
  static constexpr uint32_t kInWords = kInBytes / 4;
  static constexpr uint32_t kSmBytes = kThreadElems * T.smBits / 8;      // 6, 16 or 48
  static constexpr uint32_t kSmWords = (kSmBytes + 3) / 4;

  uint32_t in[kInWords];  // the 16 elements as loaded (little-endian)

  __device__ __forceinline__ uint32_t elem(uint32_t k) const {
    if constexpr (T.elemBytes == 4) return in[k];
    else if constexpr (T.elemBytes == 2) return (in[k / 2] >> (16 * (k & 1))) & 0xFFFF;
    else return (in[k / 4] >> (8 * (k & 3))) & 0xFF;
  }

  // Loads n (<= 16) elements from p; kVec: p is 16-byte aligned and n == 16.
  template <bool kVec>
  __device__ __forceinline__ void load(const uint8_t* p, uint32_t n) {
    if constexpr (kVec) {
#pragma unroll
      for (uint32_t v = 0; v < kInWords / 4; ++v) {
        uint4 x = __ldcs(reinterpret_cast<const uint4*>(p) + v);
        in[4 * v] = x.x; in[4 * v + 1] = x.y; in[4 * v + 2] = x.z; in[4 * v + 3] = x.w;
      }
    } else {
      loadBytes(in, p, n * T.elemBytes);
    }
  }
};

// Sign-mantissa symbols of 16 elements packed LSB-first as the section stores them.
template <int kType>
struct SmPack {
  using E = ThreadElems<kType>;
  uint32_t w[E::kSmWords];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (uint32_t i = 0; i < E::kSmWords; ++i) w[i] = 0;
  }
  __device__ __forceinline__ void put(uint32_t k, uint32_t sm) {
    constexpr uint32_t bits = E::T.smBits;
    uint32_t bit = k * bits;
    w[bit / 32] |= sm << (bit % 32);
    if ((bit % 32) + bits > 32) w[bit / 32 + 1] |= sm >> (32 - bit % 32);
  }

  // Stores the symbols of n elements at p (the section offset of the thread's first
  // element). kVec: p is aligned to the symbol group (16 bytes for BF16/FP32, 2 for E5M2).
  template <bool kVec>
  __device__ __forceinline__ void store(uint8_t* p, uint32_t n) const {
    if constexpr (kVec) {
      if constexpr (E::kSmBytes % 16 == 0) {
#pragma unroll
        for (uint32_t v = 0; v < E::kSmBytes / 16; ++v)
          __stcs(reinterpret_cast<uint4*>(p) + v, make_uint4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]));
      } else {
        uint16_t* q = reinterpret_cast<uint16_t*>(p);
        q[0] = uint16_t(w[0]); q[1] = uint16_t(w[0] >> 16); q[2] = uint16_t(w[1]);
      }
    } else {
      storeBytes(w, p, (n * E::T.smBits + 7) / 8);
    }
  }
};

// 16 exponent codes, element k in nibble k (= the section's low-nibble-first order).
template <bool kVec>
__device__ __forceinline__ void storeCodes(uint8_t* p, uint64_t codes, uint32_t n) {
  if constexpr (kVec) {
    __stcs(reinterpret_cast<uint2*>(p), make_uint2(uint32_t(codes), uint32_t(codes >> 32)));
  } else {
#pragma unroll
    for (uint32_t b = 0; b < 8; ++b)
      if (b < (n + 1) / 2) p[b] = uint8_t(codes >> (8 * b));
  }
}

}  // namespace sz

namespace sz {

// Exponent-code table entry of an escape: code 0 with bit 7 set, so the low nibble can be
// inserted unconditionally and one OR over a thread's entries says whether any escaped.
constexpr uint8_t kDeviceEscape = 0x80;

// Encodes 16 elements into their sign-mantissa symbols and exponent codes (element k in
// nibble k; elements >= n get code 0). Returns the OR of the table entries looked up: bit 7
// is set iff an element escaped. BF16 works on four elements per 32-bit operation.
template <int kType>
__device__ __forceinline__ uint32_t encodeSixteen(const ThreadElems<kType>& e, uint32_t n,
                                                  const uint8_t* sCode, SmPack<kType>& sm,
                                                  uint64_t& codes) {
  constexpr TypeTraits T = ThreadElems<kType>::T;
  uint32_t lo = 0, hi = 0, any = 0;  // codes of elements 0..7 and 8..15
  if constexpr (kType == szBfloat16) {
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      uint32_t hb = __byte_perm(e.in[2 * j], e.in[2 * j + 1], 0x7531);  // high bytes of 4 elements
      uint32_t lb = __byte_perm(e.in[2 * j], e.in[2 * j + 1], 0x6420);  // low bytes
      sm.w[j] = (hb & 0x80808080u) | (lb & 0x7F7F7F7Fu);
      uint32_t ex = ((hb << 1) & 0xFEFEFEFEu) | ((lb >> 7) & 0x01010101u);
#pragma unroll
      for (uint32_t b = 0; b < 4; ++b) {
        uint32_t c = sCode[(ex >> (8 * b)) & 0xFF];
        any |= c;
        uint32_t k = 4 * j + b;
        if (k < 8) lo |= (c & 0xF) << (4 * k);
        else hi |= (c & 0xF) << (4 * (k - 8));
      }
    }
  } else {
    sm.clear();
#pragma unroll
    for (uint32_t k = 0; k < kThreadElems; ++k) {
      uint32_t w = e.elem(k);
      uint32_t c = sCode[T.exponent(w)];
      any |= c;
      if (k < 8) lo |= (c & 0xF) << (4 * k);
      else hi |= (c & 0xF) << (4 * (k - 8));
      sm.put(k, T.signMantissa(w));
    }
  }
  codes = lo | (uint64_t(hi) << 32);
  if (n < kThreadElems) codes &= (uint64_t(1) << (4 * n)) - 1;
  return any;
}

// Which of the first n elements escape (bit k for element k): the rare path after
// encodeSixteen reported an escape.
template <int kType>
__device__ __forceinline__ uint32_t escapeMask(const ThreadElems<kType>& e, uint32_t n, const uint8_t* sCode) {
  constexpr TypeTraits T = ThreadElems<kType>::T;
  uint32_t mask = 0;
#pragma unroll
  for (uint32_t k = 0; k < kThreadElems; ++k)
    if (k < n && (sCode[T.exponent(e.elem(k))] & kDeviceEscape)) mask |= 1u << k;
  return mask;
}

}  // namespace sz
