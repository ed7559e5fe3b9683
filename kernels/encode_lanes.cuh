// The grid encoder's warp pass over one chunk (paper §3, App. A), in the decoder's lane layout
// (kernels/decode_lanes.cuh): lane l of step s takes the 16 input bytes of elements
// [s*32*P + l*P, +P) of the chunk, so its loads are 16-byte vectors and its sign-mantissa
// symbols and exponent codes land next to its neighbours' (docs/FORMAT.md §Sections). Escapes
// are counted with warp shuffles only and handed out in position order with their rank in the
// chunk. Used by both kernels of kernels/encode.cu: the chunk kernel stores the sections and
// the first few records, the place kernel regenerates the records of chunks with more.
#pragma once

#include <cstdint>
#include <type_traits>

#include "codec/frame.h"
#include "decode_lanes.cuh"
#include "thread_elems.cuh"

namespace sz {

// A warp's exponent-code table (256 bytes, 8-byte aligned, in shared memory): entry e is the
// code of biased exponent e, or kDeviceEscape. Built by the warp alone, so no block barrier.
__device__ __forceinline__ void buildCodeTable(uint8_t* table, const uint8_t* exps, uint32_t lane) {
  reinterpret_cast<uint2*>(table)[lane] = make_uint2(0x80808080u, 0x80808080u);
  __syncwarp();
  if (lane < kCodebookSize) table[exps[lane]] = uint8_t(lane);
  __syncwarp();
}

// A lane's step, encoded: its symbols as the section stores them, its codes (element k in
// nibble k) and which elements escape (bit k).
template <int kType>
struct LaneCode {
  uint32_t sm[LaneShape<kType>::kSmWords];
  uint64_t codes;
  uint32_t esc;
};

// Element k (compile-time after unrolling) of a lane's 16 input bytes.
template <int kType>
__device__ __forceinline__ uint32_t laneElem(const uint32_t (&v)[4], uint32_t k) {
  constexpr uint32_t eb = LaneShape<kType>::T.elemBytes;
  if constexpr (eb == 4) return v[k];
  else if constexpr (eb == 2) return (v[k / 2] >> (16 * (k & 1))) & 0xFFFF;
  else return (v[k / 4] >> (8 * (k & 3))) & 0xFF;
}

// Encodes the first n (1..P) elements of a lane's step; elements >= n get code 0, no escape.
// BF16 and E5M2 split four elements per 32-bit operation.
template <int kType>
__device__ __forceinline__ void encodeLane(const uint32_t (&v)[4], uint32_t n, const uint8_t* table,
                                           LaneCode<kType>& o) {
  using S = LaneShape<kType>;
  constexpr TypeTraits T = S::T;
  uint64_t codes = 0;
  uint32_t esc = 0;
  auto code = [&](uint32_t k, uint32_t exponent) {
    const uint32_t c = table[exponent];
    codes |= uint64_t(c & 0xF) << (4 * k);
    esc |= (c >> 7) << k;
  };
  if constexpr (kType == szBfloat16) {
#pragma unroll
    for (uint32_t j = 0; j < 2; ++j) {
      const uint32_t hb = __byte_perm(v[2 * j], v[2 * j + 1], 0x7531);  // high bytes of 4 elements
      const uint32_t lb = __byte_perm(v[2 * j], v[2 * j + 1], 0x6420);  // low bytes
      o.sm[j] = (hb & 0x80808080u) | (lb & 0x7F7F7F7Fu);
      const uint32_t ex = ((hb << 1) & 0xFEFEFEFEu) | ((lb >> 7) & 0x01010101u);
#pragma unroll
      for (uint32_t b = 0; b < 4; ++b) code(4 * j + b, (ex >> (8 * b)) & 0xFF);
    }
  } else if constexpr (kType == szFloat8e5m2) {
    // Per byte sign << 2 | mantissa, then four 3-bit symbols squeezed into 12 bits, LSB first.
    uint64_t bits = 0;
#pragma unroll
    for (uint32_t w = 0; w < 4; ++w) {
      const uint32_t x = v[w];
      const uint32_t y = ((x >> 5) & 0x04040404u) | (x & 0x03030303u);
      const uint32_t s = (y & 7u) | ((y >> 5) & 0x38u) | ((y >> 10) & 0x1C0u) | ((y >> 15) & 0xE00u);
      bits |= uint64_t(s) << (12 * w);
#pragma unroll
      for (uint32_t b = 0; b < 4; ++b) code(4 * w + b, (x >> (8 * b + T.mantBits)) & 0x1F);
    }
    o.sm[0] = uint32_t(bits);
    o.sm[1] = uint32_t(bits >> 32);
  } else {
    uint32_t s[4];
#pragma unroll
    for (uint32_t k = 0; k < 4; ++k) {
      s[k] = T.signMantissa(v[k]);
      code(k, T.exponent(v[k]));
    }
    o.sm[0] = s[0] | s[1] << 24;
    o.sm[1] = s[1] >> 8 | s[2] << 16;
    o.sm[2] = s[2] >> 16 | s[3] << 8;
  }
  if (n < S::kElems) {
    codes &= (uint64_t(1) << (4 * n)) - 1;
    esc &= (1u << n) - 1;
  }
  o.codes = codes;
  o.esc = esc;
}

// Loads the first n (<= P) elements of a lane's step at p; kVec: p 16-byte aligned, n == P.
// Missing bytes read as 0 (an element of zeros has zero symbols).
template <int kType, bool kVec>
__device__ __forceinline__ void loadLane(uint32_t (&v)[4], const uint8_t* p, uint32_t n) {
  if constexpr (kVec) {
    const uint4 x = __ldcs(reinterpret_cast<const uint4*>(p));
    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
  } else {
    loadBytes(v, p, n * LaneShape<kType>::T.elemBytes);
  }
}

// Stores a lane's symbols at smp and codes at cp (n elements). kVec: n == P and the frame is
// 16-byte aligned, so the symbols sit on 8 (BF16), 2 (E5M2) or 4 (FP32) bytes and the codes
// on 4, 8 or 2.
template <int kType, bool kVec>
__device__ __forceinline__ void storeLane(const LaneCode<kType>& o, uint8_t* smp, uint8_t* cp, uint32_t n) {
  using S = LaneShape<kType>;
  if constexpr (kVec) {
    if constexpr (kType == szBfloat16) {
      __stcs(reinterpret_cast<uint2*>(smp), make_uint2(o.sm[0], o.sm[1]));
      __stcs(reinterpret_cast<unsigned int*>(cp), uint32_t(o.codes));
    } else if constexpr (kType == szFloat8e5m2) {
      unsigned short* q = reinterpret_cast<unsigned short*>(smp);
      __stcs(q, (unsigned short)o.sm[0]);
      __stcs(q + 1, (unsigned short)(o.sm[0] >> 16));
      __stcs(q + 2, (unsigned short)o.sm[1]);
      __stcs(reinterpret_cast<uint2*>(cp), make_uint2(uint32_t(o.codes), uint32_t(o.codes >> 32)));
    } else {
      unsigned int* q = reinterpret_cast<unsigned int*>(smp);
      __stcs(q, o.sm[0]);
      __stcs(q + 1, o.sm[1]);
      __stcs(q + 2, o.sm[2]);
      __stcs(reinterpret_cast<unsigned short*>(cp), (unsigned short)o.codes);
    }
  } else {
    storeBytes(o.sm, smp, (n * S::T.smBits + 7) / 8);
    const uint32_t c[2] = {uint32_t(o.codes), uint32_t(o.codes >> 32)};
    storeBytes(c, cp, (n + 1) / 2);
  }
}

// Steps of a chunk one pass loads before using them: all of them where 16 registers hold them
// (BF16 4, E5M2 2), else 4 of FP32's 8. A batch's per-step escape counts pack into the fields
// of one word, as narrow as a step's count allows (at most 32 * P): one scan counts them all.
template <int kType>
struct ChunkPass {
  using S = LaneShape<kType>;
  static constexpr uint32_t kAhead = S::kSteps * 4 <= 16 ? S::kSteps : 4;
  static constexpr uint32_t kFieldBits = 32 * S::kElems < 256 ? 8 : 16;
  using Packed = std::conditional_t<kAhead * kFieldBits <= 32, uint32_t, uint64_t>;
  static_assert(S::kSteps % kAhead == 0, "steps go in equal batches");
  static_assert(kAhead * kFieldBits <= 64 && 32 * S::kElems < (1u << kFieldBits), "a step's count fits its field");
  static __device__ __forceinline__ uint32_t field(Packed packed, uint32_t a) {
    return uint32_t(packed >> (kFieldBits * a)) & ((1u << kFieldBits) - 1);
  }
};

// One warp's pass over chunk c: loads the chunk's input, stores its symbols and codes into the
// frame's sections when kSections, and writes every escape whose rank in the chunk (position
// order) is below `limit` as a 3-byte record (position u16 LE, exponent) at recs + 3 * rank.
// Returns the chunk's escape count (in every lane). Warp-synchronous: all 32 lanes call it.
template <int kType, bool kAligned, bool kSections>
__device__ __forceinline__ uint32_t encodeChunk(const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                                                const FrameLayout& l, const uint8_t* table, uint64_t c,
                                                uint32_t lane, uint8_t* recs, uint32_t limit) {
  using S = LaneShape<kType>;
  using C = ChunkPass<kType>;
  constexpr TypeTraits T = S::T;
  constexpr uint32_t kFull = 0xFFFFFFFFu;
  const uint32_t len = chunkLen(l, c);
  const uint64_t first = c * kChunkElems;
  uint32_t run = 0;  // escapes of the steps before this batch
#pragma unroll
  for (uint32_t s0 = 0; s0 < S::kSteps; s0 += C::kAhead) {
    uint32_t v[C::kAhead][4];
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      const uint32_t n = laneElems<kType>(len, s0 + a, lane);
      const uint8_t* p = in + (first + (s0 + a) * S::kStepElems + lane * S::kElems) * T.elemBytes;
      if (n == S::kElems) loadLane<kType, kAligned>(v[a], p, n);
      else loadLane<kType, false>(v[a], p, n);
    }
    uint32_t esc[C::kAhead];
    typename C::Packed packed = 0;
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      const uint32_t n = laneElems<kType>(len, s0 + a, lane);
      esc[a] = 0;
      if (n == 0) continue;
      LaneCode<kType> o;
      encodeLane<kType>(v[a], n, table, o);
      esc[a] = o.esc;
      packed |= typename C::Packed(__popc(o.esc)) << (C::kFieldBits * a);
      if constexpr (kSections) {
        const uint64_t e = first + (s0 + a) * S::kStepElems + lane * S::kElems;
        uint8_t* smp = out + l.smOff + e * T.smBits / 8;
        uint8_t* cp = out + l.codeOff + e / 2;
        if (n == S::kElems) storeLane<kType, kAligned>(o, smp, cp, n);
        else storeLane<kType, false>(o, smp, cp, n);
      }
    }
    if (!__any_sync(kFull, packed != 0)) continue;
    // Rank of a lane's first escape in step a: the batch's earlier steps, then lower lanes.
    typename C::Packed incl = packed;
#pragma unroll
    for (uint32_t off = 1; off < 32; off *= 2) {
      const typename C::Packed t = __shfl_up_sync(kFull, incl, off);
      if (lane >= off) incl += t;
    }
    const typename C::Packed total = __shfl_sync(kFull, incl, 31), excl = incl - packed;
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      if (esc[a] != 0) {
        uint32_t rank = run + C::field(excl, a);
        const uint32_t pos0 = (s0 + a) * S::kStepElems + lane * S::kElems;
#pragma unroll
        for (uint32_t k = 0; k < S::kElems; ++k) {
          if (!((esc[a] >> k) & 1)) continue;
          if (rank < limit) {
            uint8_t* rec = recs + rank * kEscapeBytes;
            rec[0] = uint8_t(pos0 + k);
            rec[1] = uint8_t((pos0 + k) >> 8);
            rec[2] = uint8_t(T.exponent(laneElem<kType>(v[a], k)));
          }
          ++rank;
        }
      }
      run += C::field(total, a);
    }
  }
  return run;
}

}  // namespace sz
