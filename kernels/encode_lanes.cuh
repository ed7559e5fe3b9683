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

// An exponent-code table (256 bytes, 8-byte aligned, in shared memory): entry i is the code of
// the exponent that index i stands for, or kDeviceEscape (0x80). BF16 and FP32 index it by the
// biased exponent; E5M2 by the whole element byte; E4M3 by its byte and FP16 by its high byte,
// both without the sign bit (kSignlessIndex; mantissa bits ignored), which saves extracting the
// exponent. Their indexes then lie in 128 bytes, 32 words in 32 banks, so a warp's lookups never
// conflict; with the sign, ncu found 2.0-2.4-way conflicts.
constexpr uint32_t kSignlessIndex = 0x7F7F7F7Fu;
template <int kType>
__host__ __device__ constexpr uint32_t tableExponent(uint32_t i) {
  if constexpr (kType == szFloat8e5m2 || kType == szFloat8e4m3) return typeTraits(kType).exponent(i);
  else if constexpr (kType == szFloat16) return typeTraits(kType).exponent(i << 8);
  else return i;
}

// Fills such a table: each thread `t` of `threads` fills entries t, t + threads, ...; the
// caller orders the fill before the first lookup (__syncwarp for a warp's own table,
// __syncthreads for a block's).
template <int kType>
__device__ __forceinline__ void fillCodeTable(uint8_t* table, const uint8_t* exps, uint32_t t, uint32_t threads) {
  for (uint32_t i = t; i < 256; i += threads) {
    const uint32_t e = tableExponent<kType>(i);
    uint32_t c = kDeviceEscape;
#pragma unroll
    for (uint32_t j = 0; j < kCodebookSize; ++j)
      if (exps[j] == e) c = j;
    table[i] = uint8_t(c);
  }
}

// A warp's own table (no block barrier).
template <int kType>
__device__ __forceinline__ void buildCodeTable(uint8_t* table, const uint8_t* exps, uint32_t lane) {
  fillCodeTable<kType>(table, exps, lane, 32);
  __syncwarp();
}

// A lane's step, encoded: its symbols as the section stores them, its codes (element k in
// nibble k; at 3 bits, bits 3k..3k+2) and its escape flags: which elements escape, in the
// type's own bit layout (escapeMask turns them into bit k = element k; they are nonzero iff an
// element escapes).
template <int kType, uint32_t kBits = 4>
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

// The exponent of FP16 or E4M3 element k (known at run time) of a lane's 16 input bytes: its
// byte (E4M3) or high byte (FP16) by two byte permutes and a select, no indexed registers.
template <int kType>
__device__ __forceinline__ uint32_t narrowExponentAt(const uint32_t (&v)[4], uint32_t k) {
  static_assert(narrowCodecType(kType), "a narrow type");
  const uint32_t b = kType == szFloat16 ? 2 * k + 1 : k;  // the byte holding the exponent
  const uint32_t x = (b & 8) ? __byte_perm(v[2], v[3], b & 7) : __byte_perm(v[0], v[1], b & 7);
  if constexpr (kType == szFloat16) return typeTraits(kType).exponent((x & 0xFF) << 8);
  else return typeTraits(kType).exponent(x & 0xFF);
}

// The table entries of the four bytes of `idx`, byte k's entry in byte k: a byte permute
// extracts each index, a shared-memory load looks it up, three permutes gather.
__device__ __forceinline__ uint32_t lookup4(const uint8_t* table, uint32_t idx) {
  const uint32_t c0 = table[idx & 0xFF], c1 = table[__byte_perm(idx, 0, 0x4441)];
  const uint32_t c2 = table[__byte_perm(idx, 0, 0x4442)], c3 = table[idx >> 24];
  return __byte_perm(__byte_perm(c0, c1, 0x0040), __byte_perm(c2, c3, 0x0040), 0x5410);
}

// Four gathered entries (codes 0..15, escapes 0x80, code 0 in the section) as four nibbles in
// bytes 0 and 2: byte 0 = entry 0 | entry 1 << 4, byte 2 = entry 2 | entry 3 << 4.
__device__ __forceinline__ uint32_t nibblePairs(uint32_t w) {
  return (w & 0x0F0F0F0Fu) | ((w >> 4) & 0xF0F0F0F0u);
}

constexpr uint32_t kEscFlags = 0x80808080u;  // the escape bit of four gathered entries

// Bits at 0, 8, 16 and 24 of x as bits 0..3 (the four products land on distinct bits).
__device__ __forceinline__ uint32_t gatherByteBits(uint32_t x) { return ((x * 0x00204081u) >> 21) & 0xF; }

// A step's escape flags as bit k = element k. BF16 and FP16: elements 0-3 at bits 7, 15, 23, 31
// and 4-7 at bits 3, 11, 19, 27. E5M2 and E4M3: element 4j + b at bit 8b + 7 - j. FP32: already so.
template <int kType>
__device__ __forceinline__ uint32_t escapeMask(uint32_t f) {
  if constexpr (kType == szBfloat16 || kType == szFloat16) {
    return gatherByteBits((f >> 7) & 0x01010101u) | gatherByteBits((f >> 3) & 0x01010101u) << 4;
  } else if constexpr (kType == szFloat8e5m2 || kType == szFloat8e4m3) {
    uint32_t m = 0;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) m |= gatherByteBits((f >> (7 - j)) & 0x01010101u) << (4 * j);
    return m;
  } else {
    return f;
  }
}

// The flags of elements 0..n-1 (escapeMask's inverse of a mask of the first n elements).
template <int kType>
__device__ __forceinline__ uint32_t escapeFlagsBelow(uint32_t n) {
  uint32_t f = 0;
#pragma unroll
  for (uint32_t k = 0; k < LaneShape<kType>::kElems; ++k) {
    if (k >= n) break;
    if constexpr (kType == szBfloat16 || kType == szFloat16) f |= 1u << (k < 4 ? 8 * k + 7 : 8 * (k - 4) + 3);
    else if constexpr (kType == szFloat8e5m2 || kType == szFloat8e4m3) f |= 1u << (8 * (k & 3) + 7 - k / 4);
    else f |= 1u << k;
  }
  return f;
}

// Encodes the first n (1..P) elements of a lane's step; elements >= n get code 0, no escape.
// BF16, FP16 and the FP8 types work on four elements per 32-bit operation; the code lookups
// are one byte permute and one shared-memory load per element.
template <int kType, uint32_t kBits>
__device__ __forceinline__ void encodeLane(const uint32_t (&v)[4], uint32_t n, const uint8_t* table,
                                           LaneCode<kType, kBits>& o) {
  using S = LaneShape<kType>;
  constexpr TypeTraits T = S::T;
  if constexpr (kType == szBfloat16) {
    uint32_t w[2];
#pragma unroll
    for (uint32_t j = 0; j < 2; ++j) {
      const uint32_t hb = __byte_perm(v[2 * j], v[2 * j + 1], 0x7531);  // high bytes of 4 elements
      const uint32_t lb = __byte_perm(v[2 * j], v[2 * j + 1], 0x6420);  // low bytes
      o.sm[j] = (hb & 0x80808080u) | (lb & 0x7F7F7F7Fu);
      w[j] = lookup4(table, ((hb << 1) & 0xFEFEFEFEu) | ((lb >> 7) & 0x01010101u));
    }
    o.codes = __byte_perm(nibblePairs(w[0]), nibblePairs(w[1]), 0x6420);
    o.esc = (w[0] & kEscFlags) | ((w[1] & kEscFlags) >> 4);
  } else if constexpr (kType == szFloat8e5m2) {
    // Per byte sign << 2 | mantissa, then four 3-bit symbols squeezed into 12 bits, LSB first.
    uint32_t u[4], t[4];
    o.esc = 0;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t x = v[j];
      const uint32_t y = ((x >> 5) & 0x04040404u) | (x & 0x03030303u);
      const uint32_t p = (y | (y >> 5)) & 0x003F003Fu;  // symbols 0,1 in bits 0-5; 2,3 in 16-21
      u[j] = (p | (p >> 10)) & 0xFFFu;
      const uint32_t wj = lookup4(table, x);
      t[j] = nibblePairs(wj);
      o.esc |= (wj & kEscFlags) >> j;
    }
    o.sm[0] = u[0] + (u[1] << 12) + (u[2] << 24);
    o.sm[1] = (u[2] >> 8) + (u[3] << 4);
    o.codes = __byte_perm(t[0], t[1], 0x6420) | uint64_t(__byte_perm(t[2], t[3], 0x6420)) << 32;
  } else if constexpr (kType == szFloat16) {
    // The table is indexed by an element's high byte (fillCodeTable); symbols and 3-bit codes:
    // narrow_pack.h.
    uint32_t w[2];
#pragma unroll
    for (uint32_t j = 0; j < 2; ++j) w[j] = lookup4(table, __byte_perm(v[2 * j], v[2 * j + 1], 0x7531) & kSignlessIndex);
    if constexpr (kBits == 3) o.codes = entriesToCodes3(w[0], w[1]);
    else o.codes = __byte_perm(nibblePairs(w[0]), nibblePairs(w[1]), 0x6420);
    o.esc = (w[0] & kEscFlags) | ((w[1] & kEscFlags) >> 4);
    packFp16Symbols(v, o.sm);
  } else if constexpr (kType == szFloat8e4m3) {
    uint32_t w[4];
    o.esc = 0;
#pragma unroll
    for (uint32_t j = 0; j < 4; ++j) {
      w[j] = lookup4(table, v[j] & kSignlessIndex);
      o.esc |= (w[j] & kEscFlags) >> j;
    }
    if constexpr (kBits == 3) {
      o.codes = entriesToCodes3(w[0], w[1]) | uint64_t(entriesToCodes3(w[2], w[3])) << 24;
    } else {
      o.codes = __byte_perm(nibblePairs(w[0]), nibblePairs(w[1]), 0x6420) |
                uint64_t(__byte_perm(nibblePairs(w[2]), nibblePairs(w[3]), 0x6420)) << 32;
    }
    packE4m3Symbols(v, o.sm);
  } else {
    uint64_t codes = 0;
    uint32_t esc = 0, s[4];
#pragma unroll
    for (uint32_t k = 0; k < 4; ++k) {
      s[k] = T.signMantissa(v[k]);
      const uint32_t c = table[T.exponent(v[k])];
      codes |= uint64_t(c & 0xF) << (4 * k);
      esc |= (c >> 7) << k;
    }
    o.sm[0] = s[0] | s[1] << 24;
    o.sm[1] = s[1] >> 8 | s[2] << 16;
    o.sm[2] = s[2] >> 16 | s[3] << 8;
    o.codes = codes;
    o.esc = esc;
  }
  if (n < S::kElems) {
    o.codes &= (uint64_t(1) << (kBits * n)) - 1;
    o.esc &= escapeFlagsBelow<kType>(n);
  }
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

// A warp's staging buffer in shared memory (kStaged stores): one step's section whose lane
// fields are not whole words, so that the warp writes it to global memory as whole 16-byte
// vectors: FP16's symbols (11 bytes a lane; a warp's 352 bytes) and E4M3's 3-bit codes (6 bytes;
// 192). Stored lane by lane, ncu counted 56 % (FP16) and 42 % (E4M3) of the chunk kernel's
// global sectors as excess: each store instruction touched every sector of the step's span.
// Staged (with the signless table index, measured together) the chunk kernels took 417 and
// 472 us for 512 MiB on one H100, against 445 and 492 (perf/results/2026-12-07h_h100.md).
template <int kType>
constexpr uint32_t kWarpStageBytes = kType == szFloat16 ? 32 * 11 : kType == szFloat8e4m3 ? 32 * 6 : 0;

// The warp's staged bytes to global memory at `dst` (16-byte aligned): lanes copy 16-byte
// vectors; the barriers order the lanes' staging before, and the next step's after.
template <uint32_t kBytes>
__device__ __forceinline__ void flushStage(const uint8_t* stage, uint8_t* dst, uint32_t lane) {
  static_assert(kBytes % 16 == 0 && kBytes <= 32 * 16, "whole vectors, one a lane");
  __syncwarp();
  if (lane < kBytes / 16) __stcs(reinterpret_cast<uint4*>(dst) + lane, reinterpret_cast<const uint4*>(stage)[lane]);
  __syncwarp();
}

// Stores a lane's symbols at smp and codes at cp (n elements). kVec: n == P and the frame is
// 16-byte aligned, so the symbols sit on 8 (BF16, E4M3), 2 (E5M2) or 4 (FP32) bytes and the
// codes on 4, 8 or 2 (E4M3 at 3 bits: 2). FP16's fields are not whole words: with kVec the whole
// warp stores a whole step together (LaneShape::kWarpStores), every lane the aligned words that
// start in its fields (narrow_pack.h spanWords). kStaged (with kVec, whole chunks, all lanes):
// FP16's symbols and E4M3's 3-bit codes go through the warp's `stage` (kWarpStageBytes).
template <int kType, bool kVec, bool kStaged = false, uint32_t kBits>
__device__ __forceinline__ void storeLane(const LaneCode<kType, kBits>& o, uint8_t* smp, uint8_t* cp, uint32_t n,
                                          uint8_t* stage = nullptr) {
  using S = LaneShape<kType, kBits>;
  static_assert(!kStaged || (kVec && kWarpStageBytes<kType> != 0), "staged stores: FP16 and E4M3, whole steps");
  if constexpr (kVec && kType == szFloat16) {
    constexpr uint32_t kFull = 0xFFFFFFFFu;
    const uint32_t lane = threadIdx.x % 32;
    uint32_t sw[3];
    const uint32_t sh = spanWords<S::kSmBytes>(o.sm, __shfl_down_sync(kFull, o.sm[0], 1), lane, sw);
    uint8_t* const sq = kStaged ? stage + S::kSmBytes * lane : smp;  // the lane's field
#pragma unroll
    for (uint32_t i = 0; i < 3; ++i) {
      if (sh + 4 * i >= S::kSmBytes) continue;
      if constexpr (kStaged) *reinterpret_cast<uint32_t*>(sq + sh + 4 * i) = sw[i];
      else __stcs(reinterpret_cast<unsigned int*>(sq + sh + 4 * i), sw[i]);
    }
    if constexpr (kStaged) flushStage<kWarpStageBytes<kType>>(stage, smp - S::kSmBytes * lane, lane);
    if constexpr (kBits == 4) {
      __stcs(reinterpret_cast<unsigned int*>(cp), uint32_t(o.codes));
    } else {
      const uint32_t x[1] = {uint32_t(o.codes)};
      uint32_t cw[1];
      const uint32_t ch = spanWords<S::kCodeBytes>(x, __shfl_down_sync(kFull, x[0], 1), lane, cw);
      if (ch < S::kCodeBytes) __stcs(reinterpret_cast<unsigned int*>(cp + ch), cw[0]);
    }
  } else if constexpr (kVec && kType == szFloat8e4m3) {
    __stcs(reinterpret_cast<uint2*>(smp), make_uint2(o.sm[0], o.sm[1]));
    if constexpr (kBits == 4) {
      __stcs(reinterpret_cast<uint2*>(cp), make_uint2(uint32_t(o.codes), uint32_t(o.codes >> 32)));
    } else if constexpr (kStaged) {
      const uint32_t lane = threadIdx.x % 32;
      uint16_t* q = reinterpret_cast<uint16_t*>(stage + S::kCodeBytes * lane);
      q[0] = uint16_t(o.codes);
      q[1] = uint16_t(o.codes >> 16);
      q[2] = uint16_t(o.codes >> 32);
      flushStage<kWarpStageBytes<kType>>(stage, cp - S::kCodeBytes * lane, lane);
    } else {
      unsigned short* q = reinterpret_cast<unsigned short*>(cp);
      __stcs(q, (unsigned short)o.codes);
      __stcs(q + 1, (unsigned short)(o.codes >> 16));
      __stcs(q + 2, (unsigned short)(o.codes >> 32));
    }
  } else if constexpr (kVec) {
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
    storeBytes(c, cp, kBits == 4 ? (n + 1) / 2 : (n * kBits + 7) / 8);
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
// kWhole: a whole chunk of an aligned input and frame, every lane's step full (constant
// offsets, no per-step bounds).
// A whole chunk's input (BF16, E5M2: one batch of ChunkPass), loaded ahead of its encode.
template <int kType>
using ChunkRegs = uint32_t[ChunkPass<kType>::kAhead][4];

// Input bytes of a whole chunk.
template <int kType>
constexpr uint32_t kChunkInBytes = kChunkElems * typeTraits(kType).elemBytes;

// Loads whole chunk c of the input at `in`: in global memory (streaming loads), or in shared
// memory when kShared (a ring stage of kernels/bulk_ring.cuh, as chunk 0: lanes read
// consecutive 16-byte vectors, no bank conflicts).
template <int kType, bool kShared = false>
__device__ __forceinline__ void loadWholeChunk(const uint8_t* in, uint64_t c, uint32_t lane, ChunkRegs<kType>& v) {
  using S = LaneShape<kType>;
  static_assert(ChunkPass<kType>::kAhead == S::kSteps, "a chunk is one batch");
  const uint8_t* src = in + (c * kChunkElems + lane * S::kElems) * S::T.elemBytes;
#pragma unroll
  for (uint32_t a = 0; a < S::kSteps; ++a) {
    const uint8_t* q = src + a * S::kStepElems * S::T.elemBytes;
    if constexpr (kShared) {
      const uint4 x = *reinterpret_cast<const uint4*>(q);
      v[a][0] = x.x; v[a][1] = x.y; v[a][2] = x.z; v[a][3] = x.w;
    } else {
      loadLane<kType, true>(v[a], q, S::kElems);
    }
  }
}

// A lane's places in chunk c of a frame: its input (`src`), sign-mantissa symbols (`smp`) and
// codes (`cp`) of step 0, the later steps at fixed strides.
template <int kType, uint32_t kBits>
struct LanePlaces {
  using S = LaneShape<kType>;
  const uint8_t* src;
  uint8_t* smp;
  uint8_t* cp;
  __device__ __forceinline__ LanePlaces(const uint8_t* in, uint8_t* out, const FrameLayout& l, uint64_t c, uint32_t lane) {
    const uint64_t first = c * kChunkElems + lane * S::kElems;  // this lane's first element of step 0
    src = in + first * S::T.elemBytes;
    smp = out + l.smOff + first * S::T.smBits / 8;
    cp = out + l.codeOff + codeByte<kBits>(first);
  }
};

// kPre: a whole chunk (kWhole) whose input is already in `pre` (loadWholeChunk). kStaged: a
// whole chunk of an aligned frame whose unaligned section goes through the warp's `stage`
// (storeLane).
template <int kType, uint32_t kBits, bool kAligned, bool kSections, bool kWhole, bool kPre = false, bool kStaged = false>
__device__ __forceinline__ uint32_t encodeChunkPart(const LanePlaces<kType, kBits>& at, const uint8_t* table,
                                                    uint32_t len, uint32_t lane, uint8_t* recs, uint32_t limit,
                                                    const ChunkRegs<kType>* pre = nullptr, uint8_t* stage = nullptr) {
  static_assert(!kPre || kWhole, "a preloaded chunk is whole");
  static_assert(!kStaged || (kWhole && kAligned && kSections), "staged stores: whole chunks of aligned frames");
  using S = LaneShape<kType>;
  using C = ChunkPass<kType>;
  constexpr TypeTraits T = S::T;
  constexpr uint32_t kFull = 0xFFFFFFFFu;
  const uint8_t* src = at.src;
  uint8_t* smp = at.smp;
  uint8_t* cp = at.cp;
  uint32_t run = 0;  // escapes of the steps before this batch
#pragma unroll
  for (uint32_t s0 = 0; s0 < S::kSteps; s0 += C::kAhead) {
    uint32_t v[C::kAhead][4];
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      if constexpr (kPre) {
#pragma unroll
        for (uint32_t i = 0; i < 4; ++i) v[a][i] = (*pre)[a][i];
        continue;
      }
      const uint32_t n = kWhole ? S::kElems : laneElems<kType>(len, s0 + a, lane);
      const uint8_t* p = src + (s0 + a) * S::kStepElems * T.elemBytes;
      if (kWhole || n == S::kElems) loadLane<kType, kAligned>(v[a], p, n);
      else loadLane<kType, false>(v[a], p, n);
    }
    uint32_t esc[C::kAhead], any = 0;
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      const uint32_t n = kWhole ? S::kElems : laneElems<kType>(len, s0 + a, lane);
      esc[a] = 0;
      if (n == 0) continue;
      LaneCode<kType, kBits> o;
      encodeLane<kType, kBits>(v[a], n, table, o);
      esc[a] = o.esc;
      any |= o.esc;
      if constexpr (kSections) {
        const uint32_t e = (s0 + a) * S::kStepElems;  // elements past this lane's first
        // A warp's stores (FP16) take the vector path in whole chunks only, where all lanes do.
        if (kWhole || (!S::kWarpStores && n == S::kElems))
          storeLane<kType, kAligned, kStaged>(o, smp + e * T.smBits / 8, cp + codeByte<kBits>(e), n, stage);
        else storeLane<kType, false>(o, smp + e * T.smBits / 8, cp + codeByte<kBits>(e), n);
      }
    }
    if (!__any_sync(kFull, any != 0)) continue;
    // The rare path: escapes' ranks. A lane's first escape in step a comes after the batch's
    // earlier steps, then lower lanes.
    typename C::Packed packed = 0;
#pragma unroll
    for (uint32_t a = 0; a < C::kAhead; ++a) {
      esc[a] = escapeMask<kType>(esc[a]);
      packed |= typename C::Packed(__popc(esc[a])) << (C::kFieldBits * a);
    }
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
        if constexpr (narrowCodecType(kType)) {
          // FP16 and E4M3 at 3-bit codes escape ~2 % of KV's elements: a warp passes here in
          // nearly every batch. Their escapes one by one (a lane ~0.3 of them a step), not a
          // check of each of the lane's 8 or 16 elements; the record pointer and the room left
          // below `limit` are set once (the loop is the warp's longest lane's, ~1.8 a step).
          uint32_t room = rank < limit ? limit - rank : 0;
          uint8_t* rec = recs + rank * kEscapeBytes;
          for (uint32_t m = esc[a]; m != 0 && room != 0; m &= m - 1, --room, rec += kEscapeBytes) {
            const uint32_t k = __ffs(m) - 1;
            rec[0] = uint8_t(pos0 + k);
            rec[1] = uint8_t((pos0 + k) >> 8);
            rec[2] = uint8_t(narrowExponentAt<kType>(v[a], k));
          }
        } else {
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
      }
      run += C::field(total, a);
    }
  }
  return run;
}

template <int kType, uint32_t kBits, bool kAligned, bool kSections>
__device__ __forceinline__ uint32_t encodeChunk(const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                                                const FrameLayout& l, const uint8_t* table, uint64_t c,
                                                uint32_t lane, uint8_t* recs, uint32_t limit) {
  const uint32_t len = chunkLen(l, c);
  const LanePlaces<kType, kBits> at(in, out, l, c, lane);
  if (kAligned && len == kChunkElems)
    return encodeChunkPart<kType, kBits, kAligned, kSections, kAligned>(at, table, len, lane, recs, limit);
  return encodeChunkPart<kType, kBits, kAligned, kSections, false>(at, table, len, lane, recs, limit);
}

}  // namespace sz
