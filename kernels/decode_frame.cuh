// The decoder's body as device functions (paper §3, App. A), shared by szDecodeAsync's grid
// kernel (kernels/decode.cu: the blocks of a grid split one frame's escape groups) and the slot
// kernels (kernels/slot_kernels.cu: one block decodes a whole slice frame). Every block
// validates the header itself (codec/frame.h, the same checks as the host decoder), then walks
// escape groups: sign-mantissa bytes and codes become elements with 16-byte stores, and after a
// block barrier the group's escapes are checked (index consistency, positions, order, exponent
// range) and patched in. Any inconsistency is reported through the status word; nothing
// outside the frame or the output is ever touched.
#pragma once

#include <cstdint>

#include "codec/frame.h"
#include "thread_elems.cuh"

namespace sz {

constexpr uint32_t kDecodeThreads = 512;
constexpr uint32_t kDecodeStepElems = kDecodeThreads * kThreadElems;
constexpr uint32_t kDecodeSteps = kGroupElems / kDecodeStepElems;

struct DecodeParams {
  const uint8_t* frame;
  uint64_t frameBytes;
  uint8_t* out;
  uint64_t outCapacity;
  int* status;
  int expectType;        // >= 0: a frame of another type or count is corrupt
  uint64_t expectCount;
};

__device__ __forceinline__ void reportStatus(int* status, int code) { atomicCAS(status, 0, code); }

struct GroupEscapes {
  uint32_t countIncl[kChunksPerGroup];  // inclusive prefix of the group's chunk counts
  uint64_t base;                        // index of the group's first escape
  uint32_t total;
  int bad;
};

// Warp 0's raw loads of a group's escape index, issued early so their latency overlaps the
// element work: lane j's chunk count and length, lane 0's group offset and the next one.
struct GroupIndexLoads {
  uint32_t cnt, len;
  uint64_t base, next;
};

__device__ __forceinline__ GroupIndexLoads fetchGroupIndex(const FrameHeader& h, const FrameLayout& l,
                                                           const uint8_t* f, uint64_t g, uint32_t lane) {
  GroupIndexLoads r{0, 0, 0, 0};
  uint64_t chunk = g * kChunksPerGroup + lane;
  if (chunk < l.numChunks) {
    uint64_t left = l.count - chunk * kChunkElems;
    r.len = left < kChunkElems ? uint32_t(left) : kChunkElems;
    r.cnt = loadLe16(f + l.countsOff + 2 * chunk);
  }
  if (lane == 0) {
    r.base = loadLe64(f + l.indexOff + 8 * g);
    r.next = g + 1 < l.numGroups ? loadLe64(f + l.indexOff + 8 * (g + 1)) : h.escapeCount;
  }
  return r;
}

// Warp 0: validates group `g`'s chunk counts and offsets (telescoping over all groups:
// offset[0] = 0 and offset[g] + count(g) = offset[g+1] or the header's escape count).
__device__ __forceinline__ void finishGroupIndex(const GroupIndexLoads& r, uint64_t g, uint32_t lane, GroupEscapes* ge) {
  bool bad = r.cnt > r.len;
  uint32_t incl = r.cnt;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    uint32_t t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
    if (int(lane) >= off) incl += t;
  }
  ge->countIncl[lane] = incl;
  uint32_t total = __shfl_sync(0xFFFFFFFFu, incl, 31);
  if (lane == 0) {
    bad |= r.base > r.next || r.next - r.base != total || (g == 0 && r.base != 0);
    ge->base = r.base;
    ge->total = total;
  }
  bad = __any_sync(0xFFFFFFFFu, bad);
  if (lane == 0) ge->bad = bad;
}

// Decodes groups first, first + step, ... of a validated compressed frame.
template <int kType, bool kAligned>
__device__ void decodeGroups(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                             const uint8_t* sExp, GroupEscapes* ge, uint64_t first, uint64_t step) {
  using E = ThreadElems<kType>;
  constexpr TypeTraits T = E::T;
  constexpr uint32_t expField = ((1u << T.expBits) - 1) << T.mantBits;
  // All steps' loads are issued before the first element is built where registers allow.
  constexpr uint32_t kAhead = SmPack<kType>::E::kSmWords <= 4 ? kDecodeSteps : 1;
  const uint32_t tid = threadIdx.x;
  const uint8_t* __restrict__ f = p.frame;
  for (uint64_t g = first; g < l.numGroups; g += step) {
    const uint64_t base = g * kGroupElems;
    GroupIndexLoads idx{};
    if (tid < 32) idx = fetchGroupIndex(h, l, f, g, tid);
#pragma unroll
    for (uint32_t s0 = 0; s0 < kDecodeSteps; s0 += kAhead) {
      SmPack<kType> sm[kAhead];
      uint64_t codes[kAhead];
      uint32_t n[kAhead];
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        uint64_t first = base + (s0 + a) * kDecodeStepElems + tid * kThreadElems;
        n[a] = first >= l.count ? 0 : uint32_t(l.count - first < kThreadElems ? l.count - first : kThreadElems);
        const uint8_t* smSrc = f + l.smOff + first * T.smBits / 8;
        const uint8_t* codeSrc = f + l.codeOff + first / 2;
        if (n[a] == kThreadElems) {
          sm[a].template load<kAligned>(smSrc, n[a]);
          codes[a] = loadCodes<kAligned>(codeSrc, n[a]);
        } else if (n[a] > 0) {
          sm[a].template load<false>(smSrc, n[a]);
          codes[a] = loadCodes<false>(codeSrc, n[a]);
        }
      }
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        if (n[a] == 0) continue;
        uint64_t first = base + (s0 + a) * kDecodeStepElems + tid * kThreadElems;
        E e;
        decodeSixteen<kType>(sm[a], codes[a], sExp, e);
        if (n[a] == kThreadElems) e.template store<kAligned>(p.out + first * T.elemBytes, n[a]);
        else e.template store<false>(p.out + first * T.elemBytes, n[a]);
      }
    }
    if (tid < 32) finishGroupIndex(idx, g, tid, ge);
    __syncthreads();  // the group's elements are written; escapes patch them
    if (ge->bad) {
      if (tid == 0) reportStatus(p.status, szCorruptFrame);
    } else {
      for (uint32_t j = tid; j < ge->total; j += kDecodeThreads) {
        uint64_t e = ge->base + j;
        uint32_t c = 0;  // chunk of escape j: first chunk whose inclusive count exceeds j
        for (uint32_t step = 16; step > 0; step /= 2)
          if (ge->countIncl[c + step - 1] <= j) c += step;
        uint32_t chunkFirst = c ? ge->countIncl[c - 1] : 0;
        uint64_t chunkElem = base + uint64_t(c) * kChunkElems;
        uint32_t len = l.count - chunkElem < kChunkElems ? uint32_t(l.count - chunkElem) : kChunkElems;
        const uint8_t* rec = f + l.escOff + e * kEscapeBytes;
        uint32_t pos = loadLe16(rec), ex = rec[2];
        bool ok = e < h.escapeCount && pos < len && ex < (1u << T.expBits) &&
                  (j == chunkFirst || loadLe16(rec - kEscapeBytes) < pos);
        if (!ok) {
          reportStatus(p.status, szCorruptFrame);
          continue;
        }
        uint8_t* dst = p.out + (chunkElem + pos) * T.elemBytes;
        uint32_t w = 0;
        for (uint32_t b = 0; b < T.elemBytes; ++b) w |= uint32_t(dst[b]) << (8 * b);
        w = (w & ~expField) | (ex << T.mantBits);
        for (uint32_t b = 0; b < T.elemBytes; ++b) dst[b] = uint8_t(w >> (8 * b));
      }
    }
    __syncthreads();  // ge is reused by the next group
  }
}


// One block's part of decoding a frame: validates the header (thread 0; every block does, as
// the host knows neither the frame's type nor its size), then copies a raw payload (thread
// `gtid` of `stride`) or decodes groups part, part + parts, ... Returns the header's verdict,
// the same in every thread of the block; errors of the payload go to p.status.
// `reportHeader`: this block reports a bad header to p.status (one block of a grid does).
// kOnly >= 0: only frames of that type are decoded (a kernel for one type carries one path;
// callers that set it also set p.expectType, so a frame of another type never gets here).
template <bool kAligned, int kOnly = -1>
__device__ __forceinline__ int decodeFramePart(const DecodeParams& p, uint64_t part, uint64_t parts,
                                               uint64_t gtid, uint64_t stride, bool reportHeader) {
  __shared__ FrameHeader sH;
  __shared__ FrameLayout sL;
  __shared__ uint8_t sExp[kCodebookSize];
  __shared__ GroupEscapes sGroup;
  __shared__ int sErr;
  const uint32_t tid = threadIdx.x;
  if (tid == 0) {
    int err = szSuccess;
    uint64_t frameBytes = 0;
    if (p.frameBytes < kHeaderBytes) {
      err = szCorruptFrame;
    } else {
      readHeader(p.frame, &sH);
      if (checkHeader(sH, p.frameBytes, &sL, &frameBytes) != kHeaderOk) err = szCorruptFrame;
      else if (p.expectType >= 0 && (sH.type != p.expectType || sH.count != p.expectCount)) err = szCorruptFrame;
      else if (sL.rawBytes > p.outCapacity) err = szInvalidArgument;
    }
    if (err != szSuccess && reportHeader) reportStatus(p.status, err);
    sErr = err;
  }
  if (tid < kCodebookSize) sExp[tid] = p.frameBytes >= kHeaderBytes ? p.frame[64 + tid] : 0;
  __syncthreads();
  const int err = sErr;
  if (err != szSuccess) return err;
  if (sH.flags & kFlagRaw) {
    const uint64_t n = sL.rawBytes;
    const uint8_t* src = p.frame + kHeaderBytes;
    if (kAligned) {
      for (uint64_t i = gtid; i < n / 16; i += stride)
        __stcs(reinterpret_cast<uint4*>(p.out) + i, __ldcs(reinterpret_cast<const uint4*>(src) + i));
      for (uint64_t b = n / 16 * 16 + gtid; b < n; b += stride) p.out[b] = src[b];
    } else {
      for (uint64_t b = gtid; b < n; b += stride) p.out[b] = src[b];
    }
    return err;
  }
  if constexpr (kOnly >= 0) {
    decodeGroups<kOnly, kAligned>(sH, sL, p, sExp, &sGroup, part, parts);
  } else {
    switch (sH.type) {
      case szBfloat16: decodeGroups<szBfloat16, kAligned>(sH, sL, p, sExp, &sGroup, part, parts); break;
      case szFloat32: decodeGroups<szFloat32, kAligned>(sH, sL, p, sExp, &sGroup, part, parts); break;
      default: decodeGroups<szFloat8e5m2, kAligned>(sH, sL, p, sExp, &sGroup, part, parts); break;
    }
  }
  return err;
}

}  // namespace sz
