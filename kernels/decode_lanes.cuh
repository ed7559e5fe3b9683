// What one lane of the decoder rebuilds per step (paper §3, App. A): 16 output bytes, i.e. 8
// BF16, 16 FP8 E5M2 or 4 FP32 elements, from their sign-mantissa symbols and exponent codes.
// A warp's 32 lanes cover 512 consecutive output bytes per step, so every store is a full-width
// coalesced 16-byte vector. The 16-entry codebook lives in four registers and codes are looked
// up four at a time with byte permutes: no shared-memory table, no per-element branch. The
// grid encoder's warps use the same lane layout (LaneShape, chunkLen, laneElems;
// kernels/encode_lanes.cuh).
#pragma once

#include <cstdint>

#include "codec/dtype.h"
#include "codec/frame.h"
#include "narrow_pack.h"
#include "thread_elems.cuh"

namespace sz {

template <int kType, uint32_t kBits = 4>
struct LaneShape {
  static constexpr TypeTraits T = typeTraits(kType);
  static constexpr uint32_t kElems = 16 / T.elemBytes;             // per lane and step
  static constexpr uint32_t kStepElems = 32 * kElems;               // per warp and step
  static constexpr uint32_t kSteps = kChunkElems / kStepElems;      // a chunk is 4, 2 or 8 steps
  static constexpr uint32_t kSmBytes = kElems * T.smBits / 8;       // 8, 6, 12; FP16 11, E4M3 8
  static constexpr uint32_t kSmWords = (kSmBytes + 3) / 4;
  static constexpr uint32_t kCodeBytes = kElems * kBits / 8;        // 4, 8 or 2; 3-bit FP16 3, E4M3 6
  static constexpr uint32_t kCodeWords = (kCodeBytes + 3) / 4;
  // Steps of a chunk loaded at once: all of them where they fit 12 registers (BF16, E5M2,
  // E4M3), two otherwise (FP32, FP16).
  static constexpr uint32_t kAhead = (kSmWords + kCodeWords) * kSteps <= 12 ? kSteps : 2;
  // FP16's fields (11 symbol bytes, 3 code bytes at 3 bits) are not whole words: a whole step's
  // aligned stores need the whole warp (narrow_pack.h spanWords).
  static constexpr bool kWarpStores = kType == szFloat16;
  static_assert(kSteps * kStepElems == kChunkElems, "a chunk is whole steps");
  static_assert(kSteps % kAhead == 0, "steps go in equal batches");
  static_assert(kBits == 4 || narrowCodecType(kType), "3-bit codes: FP16 and E4M3 only");
};

// Elements in chunk c of a frame's layout (1024 but in the last chunk), and of them lane
// `lane`'s in step s of a chunk of `len` elements (kElems but at the chunk's end).
__device__ __forceinline__ uint32_t chunkLen(const FrameLayout& l, uint64_t c) {
  const uint64_t left = l.count - c * kChunkElems;
  return left < kChunkElems ? uint32_t(left) : kChunkElems;
}

template <int kType>
__device__ __forceinline__ uint32_t laneElems(uint32_t len, uint32_t s, uint32_t lane) {
  using S = LaneShape<kType>;
  const uint32_t first = s * S::kStepElems + lane * S::kElems;
  return first >= len ? 0 : (len - first < S::kElems ? len - first : S::kElems);
}

// A lane's inputs of one step: sign-mantissa symbols and codes as the sections store them.
template <int kType, uint32_t kBits = 4>
struct LaneIn {
  using S = LaneShape<kType, kBits>;
  uint32_t sm[S::kSmWords];
  uint32_t code[S::kCodeWords];

  // n (<= kElems) elements whose symbols start at `sm` and codes at `codes`. kVec: n == kElems
  // and the sections are where an aligned frame puts them (8, 2 or 4 bytes for the symbols; a
  // whole step's fields of FP16 and E4M3 lie back to back from a 16-byte boundary).
  template <bool kVec>
  __device__ __forceinline__ void load(const uint8_t* smp, const uint8_t* cp, uint32_t n) {
    if constexpr (kVec) {
      if constexpr (kType == szBfloat16) {
        uint2 x = *reinterpret_cast<const uint2*>(smp);
        sm[0] = x.x; sm[1] = x.y;
        code[0] = *reinterpret_cast<const uint32_t*>(cp);
      } else if constexpr (kType == szFloat8e5m2) {
        const uint16_t* q = reinterpret_cast<const uint16_t*>(smp);
        sm[0] = q[0] | uint32_t(q[1]) << 16;
        sm[1] = q[2];
        uint2 c = *reinterpret_cast<const uint2*>(cp);
        code[0] = c.x; code[1] = c.y;
      } else if constexpr (kType == szFloat32) {
        const uint32_t* q = reinterpret_cast<const uint32_t*>(smp);
        sm[0] = q[0]; sm[1] = q[1]; sm[2] = q[2];
        code[0] = *reinterpret_cast<const uint16_t*>(cp);
      } else if constexpr (kType == szFloat16) {
        loadField<S::kSmBytes>(smp, sm);
        if constexpr (kBits == 4) code[0] = *reinterpret_cast<const uint32_t*>(cp);
        else loadField<S::kCodeBytes>(cp, code);
      } else {  // E4M3: 8 symbol bytes; 8 code bytes, or 6 (2-byte aligned)
        const uint2 x = *reinterpret_cast<const uint2*>(smp);
        sm[0] = x.x; sm[1] = x.y;
        if constexpr (kBits == 4) {
          const uint2 c = *reinterpret_cast<const uint2*>(cp);
          code[0] = c.x; code[1] = c.y;
        } else {
          const uint16_t* q = reinterpret_cast<const uint16_t*>(cp);
          code[0] = q[0] | uint32_t(q[1]) << 16;
          code[1] = q[2];
        }
      }
    } else {
      loadBytes(sm, smp, (n * S::T.smBits + 7) / 8);
      loadBytes(code, cp, kBits == 4 ? (n + 1) / 2 : (n * kBits + 7) / 8);
    }
  }

  // A field of kBytes (not whole words) at p, from the aligned words that hold any of its bytes
  // (so no load leaves the section): narrow_pack.h fieldFromWords.
  template <uint32_t kBytes, uint32_t kWords>
  static __device__ __forceinline__ void loadField(const uint8_t* p, uint32_t (&x)[kWords]) {
    const uint32_t lead = uint32_t(reinterpret_cast<uintptr_t>(p) & 3);
    const uint32_t* q = reinterpret_cast<const uint32_t*>(p - lead);
    uint32_t w[kWords + 1];
#pragma unroll
    for (uint32_t i = 0; i <= kWords; ++i) w[i] = 4 * i < lead + kBytes ? q[i] : 0;
    fieldFromWords<kBytes>(w, lead, x);
  }
};

// How far LaneCodebook's entries are shifted: the FP8 types' exponents go straight into the
// element byte.
template <int kType>
__host__ __device__ constexpr uint32_t codebookShift() { return kType == szFloat8e5m2 || kType == szFloat8e4m3 ? typeTraits(kType).mantBits : 0; }

// The codebook's 16 exponents, byte i of word i / 4 = entry i (shifted left by `shift`).
struct LaneCodebook {
  uint32_t t[4];
  __device__ __forceinline__ void load(const uint8_t* exps, uint32_t shift) {
#pragma unroll
    for (uint32_t w = 0; w < 4; ++w) {
      t[w] = 0;
#pragma unroll
      for (uint32_t b = 0; b < 4; ++b) t[w] |= uint32_t(exps[4 * w + b] << shift) << (8 * b);
    }
  }
  // The entries of four codes (nibbles of c4's low 16 bits), one per byte.
  __device__ __forceinline__ uint32_t lookup4(uint32_t c4) const {
    const uint32_t sel = c4 & 0x7777u;
    const uint32_t lo = __byte_perm(t[0], t[1], sel), hi = __byte_perm(t[2], t[3], sel);
    const uint32_t high = __byte_perm(0u, 0xFFFFFFFFu, (c4 >> 1) & 0x4444u);  // 0xFF where code >= 8
    return (hi & high) | (lo & ~high);
  }
};

// The lane's 16 output bytes, little-endian words; escapes keep the codebook's entry for code 0
// until they are patched. The codebook's entries are shifted by codebookShift<kType>.
template <int kType, uint32_t kBits = 4>
__device__ __forceinline__ uint4 decodeLane(const LaneIn<kType, kBits>& in, const LaneCodebook& cb) {
  uint32_t o[4];
  if constexpr (kType == szBfloat16) {
    // Symbol byte = sign << 7 | mantissa; element = sign | exponent << 7 | mantissa.
#pragma unroll
    for (uint32_t j = 0; j < 2; ++j) {
      const uint32_t ex = cb.lookup4(in.code[0] >> (16 * j));
      const uint32_t s = in.sm[j];
      const uint32_t hb = (s & 0x80808080u) | ((ex >> 1) & 0x7F7F7F7Fu);
      const uint32_t lb = (s & 0x7F7F7F7Fu) | ((ex << 7) & 0x80808080u);
      o[2 * j] = __byte_perm(lb, hb, 0x5140);
      o[2 * j + 1] = __byte_perm(lb, hb, 0x7362);
    }
  } else if constexpr (kType == szFloat8e5m2) {
    // 3-bit symbols (sign << 2 | mantissa), LSB first; the codebook holds exponent << 2.
    const uint64_t bits = in.sm[0] | uint64_t(in.sm[1]) << 32;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t x = uint32_t(bits >> (12 * j));
      const uint32_t y = (x & 7u) | ((x << 5) & 0x700u) | ((x << 10) & 0x70000u) | ((x << 15) & 0x7000000u);
      const uint32_t ex = cb.lookup4(in.code[j / 2] >> (16 * (j & 1)));
      o[j] = ((y << 5) & 0x80808080u) | (y & 0x03030303u) | ex;
    }
  } else if constexpr (kType == szFloat16) {
    // 11-bit symbols; codes as nibbles (narrow_pack.h), four exponents a lookup.
    const uint32_t nib = uint32_t(codesToNibbles<kBits>(in.code[0]));
    const uint32_t ex[2] = {cb.lookup4(nib), cb.lookup4(nib >> 16)};
    const uint32_t sm[3] = {in.sm[0], in.sm[1], in.sm[2]};
    joinFp16(sm, ex, o);
  } else if constexpr (kType == szFloat8e4m3) {
    // 4-bit symbols, element k in nibble k; the codebook holds exponent << 3.
    const uint64_t nib = codesToNibbles<kBits>(in.code[0] | uint64_t(in.code[1]) << 32);
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j)
      o[j] = joinE4m3x4((in.sm[j / 2] >> (16 * (j & 1))) & 0xFFFF, cb.lookup4(uint32_t(nib >> (16 * j))));
  } else {
    // 24-bit symbols (sign << 23 | mantissa).
    const uint32_t ex = cb.lookup4(in.code[0]);
    const uint32_t s[4] = {in.sm[0] & 0xFFFFFFu, __byte_perm(in.sm[0], in.sm[1], 0x0543) & 0xFFFFFFu,
                           __byte_perm(in.sm[1], in.sm[2], 0x0432) & 0xFFFFFFu, in.sm[2] >> 8};
#pragma unroll
    for (uint32_t k = 0; k < 4; ++k)
      o[k] = (s[k] >> 23) << 31 | ((ex >> (8 * k)) & 0xFFu) << 23 | (s[k] & 0x7FFFFFu);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// Stores the first n (<= kElems) elements of a lane's output; kVec: 16-byte aligned, n whole.
template <int kType, bool kVec>
__device__ __forceinline__ void storeLane(uint8_t* p, uint4 v, uint32_t n) {
  if constexpr (kVec) {
    __stcs(reinterpret_cast<uint4*>(p), v);
  } else {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    storeBytes(w, p, n * LaneShape<kType>::T.elemBytes);
  }
}

}  // namespace sz
