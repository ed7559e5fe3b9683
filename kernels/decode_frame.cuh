// The decoder's body as device functions (paper §3, App. A), shared by szDecodeAsync's grid
// kernel (kernels/decode.cu: every warp of the grid takes chunks of one frame), the slot kernels
// (kernels/slot_kernels.cu) and the batched decoder (kernels/batch.cu), where one block's warps
// decode a whole frame. Every block validates the header itself (codec/frame.h, the same checks
// as the host decoder); after the header's barriers, warps work alone: a warp per chunk rebuilds its
// elements (kernels/decode_lanes.cuh), stores them and patches the chunk's escapes, checking
// the escape index and records as it goes. Any inconsistency is reported through the status
// word; nothing outside the frame or the output is ever touched.
#pragma once

#include <cstdint>

#include "codec/frame.h"
#include "decode_lanes.cuh"
#include "dependent_launch.cuh"

namespace sz {

struct DecodeParams {
  const uint8_t* frame;
  uint64_t frameBytes;
  uint8_t* out;
  uint64_t outCapacity;
  int* status;
  int expectType;        // >= 0: a frame of another type or count is corrupt
  uint64_t expectCount;
};

// A verdict for the status word. szDecodeAsync's grid is a programmatic dependent of the
// word's reset (kernels/decode.cu), so a report first waits for the reset to be done; in grids
// launched the ordinary way the wait returns at once.
__device__ __forceinline__ void reportStatus(int* status, int code) {
  waitForPrimary();
  atomicCAS(status, 0, code);
}

// Patches escape (pos, ex) of the chunk whose first element is `chunkFirst` into the output
// already stored there: the element is rebuilt from its sign-mantissa symbol in the frame, so
// nothing is read back from the output. The rare path: byte loads and stores.
template <int kType>
__device__ __forceinline__ void patchEscape(const FrameLayout& l, const DecodeParams& p, uint64_t chunkFirst,
                                            uint32_t pos, uint32_t ex) {
  constexpr TypeTraits T = typeTraits(kType);
  const uint64_t idx = chunkFirst + pos, bit = idx * T.smBits;
  const uint8_t* s = p.frame + l.smOff + bit / 8;
  uint32_t w = 0;
#pragma unroll
  for (uint32_t b = 0; b < (T.smBits + 7 + 7) / 8; ++b)
    if (b * 8 < bit % 8 + T.smBits) w |= uint32_t(s[b]) << (8 * b);  // within the frame: codes follow
  const uint32_t e = T.join((w >> (bit % 8)) & ((1u << T.smBits) - 1), ex);
  uint8_t* dst = p.out + idx * T.elemBytes;
#pragma unroll
  for (uint32_t b = 0; b < T.elemBytes; ++b) dst[b] = uint8_t(e >> (8 * b));
}

// A warp's loads of a chunk's escape index: lane j's count of chunk j of the chunk's group,
// lane 0's group offset and, for a group's first chunk, the next one (or the escape count).
struct ChunkIndex {
  uint32_t cnt;
  uint64_t base, next;
};

__device__ __forceinline__ bool wholeChunk(const FrameLayout& l, uint64_t c) { return (c + 1) * kChunkElems <= l.count; }

// Issues steps [s0, s0 + kNum) of chunk c's symbol and code loads. A whole chunk (all but the
// last) takes constant offsets from one base per section: the per-step bounds and 64-bit
// address arithmetic were a third of the decoder's instructions (ncu, codec_notes.md).
template <int kType, uint32_t kBits, bool kAligned, uint32_t kNum>
__device__ __forceinline__ void loadSteps(const FrameLayout& l, const uint8_t* f, uint64_t c, uint32_t s0,
                                          uint32_t lane, LaneIn<kType, kBits> (&in)[kNum]) {
  using S = LaneShape<kType, kBits>;
  if (wholeChunk(l, c)) {
    const uint32_t lead = s0 * S::kStepElems + lane * S::kElems;
    const uint8_t* smp = f + l.smOff + c * (kChunkElems * S::T.smBits / 8) + lead * S::T.smBits / 8;
    const uint8_t* cp = f + l.codeOff + c * (kChunkElems * kBits / 8) + codeByte<kBits>(lead);
#pragma unroll
    for (uint32_t a = 0; a < kNum; ++a)
      in[a].template load<kAligned>(smp + a * S::kStepElems * S::T.smBits / 8, cp + a * S::kStepElems * kBits / 8,
                                    S::kElems);
    return;
  }
  const uint32_t len = chunkLen(l, c);
#pragma unroll
  for (uint32_t a = 0; a < kNum; ++a) {
    const uint32_t n = laneElems<kType>(len, s0 + a, lane);
    const uint64_t e = c * kChunkElems + (s0 + a) * S::kStepElems + lane * S::kElems;
    const uint8_t* smp = f + l.smOff + e * S::T.smBits / 8;
    const uint8_t* cp = f + l.codeOff + codeByte<kBits>(e);
    if (n == S::kElems) in[a].template load<kAligned>(smp, cp, n);
    else if (n > 0) in[a].template load<false>(smp, cp, n);
  }
}

// kAligned: the frame is 16-byte aligned, so the index's fields are at their natural alignment
// (the section starts 16-byte aligned; offsets are 8 bytes, counts 2).
template <bool kAligned>
__device__ __forceinline__ uint64_t indexField64(const uint8_t* p) {
  if constexpr (kAligned) return *reinterpret_cast<const uint64_t*>(p);
  else return loadLe64(p);
}

template <bool kAligned>
__device__ __forceinline__ ChunkIndex loadIndex(const FrameHeader& h, const FrameLayout& l, const uint8_t* f, uint64_t c,
                                                uint32_t lane) {
  const uint64_t g = c / kChunksPerGroup, cj = g * kChunksPerGroup + lane;
  const uint8_t* cnt = f + l.countsOff + 2 * cj;
  ChunkIndex ix{0, 0, 0};
  if (cj < l.numChunks) ix.cnt = kAligned ? *reinterpret_cast<const uint16_t*>(cnt) : loadLe16(cnt);
  if (lane == 0) {
    ix.base = indexField64<kAligned>(f + l.indexOff + 8 * g);
    if (c % kChunksPerGroup == 0)
      ix.next = g + 1 < l.numGroups ? indexField64<kAligned>(f + l.indexOff + 8 * (g + 1)) : h.escapeCount;
  }
  return ix;
}

// Rebuilds and stores steps [s0, s0 + kNum) of chunk c from their loads.
template <int kType, uint32_t kBits, bool kAligned, uint32_t kNum>
__device__ __forceinline__ void storeSteps(const FrameLayout& l, const DecodeParams& p, const LaneCodebook& cb,
                                           uint64_t c, uint32_t s0, uint32_t lane, const LaneIn<kType, kBits> (&in)[kNum]) {
  using S = LaneShape<kType, kBits>;
  if (wholeChunk(l, c)) {
    uint8_t* dst = p.out + (c * kChunkElems + s0 * S::kStepElems + lane * S::kElems) * S::T.elemBytes;
#pragma unroll
    for (uint32_t a = 0; a < kNum; ++a) storeLane<kType, kAligned>(dst + a * 512, decodeLane<kType, kBits>(in[a], cb), S::kElems);
    return;
  }
  const uint32_t len = chunkLen(l, c);
#pragma unroll
  for (uint32_t a = 0; a < kNum; ++a) {
    const uint32_t n = laneElems<kType>(len, s0 + a, lane);
    if (n == 0) continue;
    uint8_t* dst = p.out + (c * kChunkElems + (s0 + a) * S::kStepElems + lane * S::kElems) * S::T.elemBytes;
    const uint4 v = decodeLane<kType, kBits>(in[a], cb);
    if (n == S::kElems) storeLane<kType, kAligned>(dst, v, n);
    else storeLane<kType, false>(dst, v, n);
  }
}

// One warp finishes chunk `c` of a validated compressed frame from its group's index and its
// first kNum steps' loads (later steps are loaded here), with no barrier beyond the warp: its escapes start at the group offset
// plus the counts of the group's chunks before it; it stores 512 bytes a step and then patches
// its escapes, checking each record (index range, position, order, exponent range). The warp
// of a group's first chunk checks the group's offsets (telescoping over all groups:
// offset[0] = 0 and offset[g] + count(g) = offset[g+1] or the escape count).
// False, after reporting to p.status, when the frame is corrupt.
template <int kType, uint32_t kBits, bool kAligned, uint32_t kNum>
__device__ __forceinline__ bool finishChunk(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                                            const LaneCodebook& cb, uint64_t c, uint32_t lane,
                                            const ChunkIndex& ld, const LaneIn<kType, kBits> (&first)[kNum]) {
  using S = LaneShape<kType, kBits>;
  constexpr TypeTraits T = S::T;
  constexpr uint32_t kFull = 0xFFFFFFFFu;
  const uint8_t* __restrict__ f = p.frame;
  const uint64_t g = c / kChunksPerGroup, chunkFirst = c * kChunkElems;
  const uint32_t cl = uint32_t(c % kChunksPerGroup), len = chunkLen(l, c);
  const uint32_t mine = __shfl_sync(kFull, ld.cnt, cl);
  const uint64_t escBase = __shfl_sync(kFull, ld.base, 0) + __reduce_add_sync(kFull, lane < cl ? ld.cnt : 0);
  bool bad = mine > len;
  if (cl == 0) {
    const uint32_t total = __reduce_add_sync(kFull, ld.cnt);
    if (lane == 0) bad |= ld.base > ld.next || ld.next - ld.base != total || (g == 0 && ld.base != 0);
  }
  storeSteps<kType, kBits, kAligned>(l, p, cb, c, 0, lane, first);
#pragma unroll
  for (uint32_t s0 = kNum; s0 < S::kSteps; s0 += kNum) {
    LaneIn<kType, kBits> in[kNum];
    loadSteps<kType, kBits, kAligned>(l, f, c, s0, lane, in);
    storeSteps<kType, kBits, kAligned>(l, p, cb, c, s0, lane, in);
  }
  if (__any_sync(kFull, bad)) {
    if (lane == 0) reportStatus(p.status, szCorruptFrame);
    return false;
  }
  __syncwarp();  // the warp's stores come before its patches
  uint32_t prev = 0;
  for (uint32_t r0 = 0; r0 < mine; r0 += 32) {
    const uint32_t j = r0 + lane;
    const bool have = j < mine;
    uint32_t pos = 0, ex = 0;
    bool ok = true;
    if (have) {
      const uint64_t e = escBase + j;
      ok = e < h.escapeCount;
      if (ok) {
        const uint8_t* rec = f + l.escOff + e * kEscapeBytes;
        pos = loadLe16(rec);
        ex = rec[2];
      }
    }
    uint32_t before = __shfl_up_sync(kFull, pos, 1);
    if (lane == 0) before = prev;
    ok = ok && pos < len && ex < (1u << T.expBits) && (j == 0 || before < pos);
    if (__any_sync(kFull, have && !ok)) {
      if (lane == 0) reportStatus(p.status, szCorruptFrame);
      return false;
    }
    prev = __shfl_sync(kFull, pos, 31);
    if (have) patchEscape<kType>(l, p, chunkFirst, pos, ex);
  }
  return true;
}

// Warp `warp` of `warps` decodes chunks warp, warp + warps, ... of a validated compressed frame.
// A warp holds one chunk's loads (12 registers for BF16) at a time: two chunks at once (also
// for E5M2's 8 registers: 1540 against 1700 GB/s), an L2 prefetch of the next one, or a
// cp.async ring in shared memory all measured slower (perf/results/codec_notes.md, v4).
template <int kType, bool kAligned, uint32_t kBits = 4>
__device__ void decodeChunks(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                             const uint8_t* sExp, uint64_t warp, uint64_t warps) {
  using S = LaneShape<kType, kBits>;
  LaneCodebook cb;
  cb.load(sExp, codebookShift<kType>());
  const uint32_t lane = threadIdx.x % 32;
  for (uint64_t c = warp; c < l.numChunks; c += warps) {
    const ChunkIndex ix = loadIndex<kAligned>(h, l, p.frame, c, lane);
    LaneIn<kType, kBits> in[S::kAhead];
    loadSteps<kType, kBits, kAligned>(l, p.frame, c, 0, lane, in);
    if (!finishChunk<kType, kBits, kAligned>(h, l, p, cb, c, lane, ix, in)) return;
  }
}

// Which frames a decoder carries paths for (its kOnly): one type's (>= 0; FP16's and E4M3's at
// either code width, the others' at 4 bits),
// format version 1's compressed types (the slot kernels), also version 2's FP16 and E4M3 at
// either code width (szDecodeAsync), or those two alone (the batched decoder's second kernel:
// kDecodeV1 and kDecodeNarrow split a batch's items between two kernels, so neither carries the
// other's paths: one warp-per-item kernel with every path spilled 1368 bytes a thread and cost
// BF16's batched decode 17 % on one H200).
constexpr int kDecodeV1 = -1, kDecodeAll = -2, kDecodeNarrow = -3;

// Thread-level: the verdict on a frame's header bytes `bytes` (kHeaderBytes, zeros where the
// frame is shorter), with the header and layout in *h and *l when it is good, for a decoder of
// the types `only` says (kOnly of decodeFramePart): a type (>= 0: a frame of another type is
// corrupt; its callers set p.expectType too), or the sets kDecodeV1, kDecodeAll, kDecodeNarrow
// (the batched decoder's two kernels both check with kDecodeAll, then split the frames).
__device__ __forceinline__ int checkFrameHeader(const uint8_t* bytes, const DecodeParams& p, FrameHeader* h,
                                                FrameLayout* l, int only) {
  uint64_t frameBytes = 0;
  if (p.frameBytes < kHeaderBytes) return szCorruptFrame;
  readHeader(bytes, h);
  if (checkHeader(*h, p.frameBytes, l, &frameBytes) != kHeaderOk) return szCorruptFrame;
  if (p.expectType >= 0 && (h->type != p.expectType || h->count != p.expectCount)) return szCorruptFrame;
  if (only >= 0 && int(h->type) != only) return szCorruptFrame;
  const bool narrow = only == kDecodeAll || only == kDecodeNarrow || narrowCodecType(only);
  // A valid frame this decoder has no path for (3-bit codes of BF16, FP32 or E5M2; FP16 or E4M3
  // where the decoder carries version 1's paths only): the CPU codec's to decode (szDecode).
  const bool path = deviceCodecType(h->type) ? l->codeBits == 4 : narrow && gpuCodecType(h->type);
  if (!(h->flags & kFlagRaw) && !path) return szInvalidUsage;
  return l->rawBytes > p.outCapacity ? szInvalidArgument : szSuccess;
}

// FP16's and E4M3's paths (checkFrameHeader lets only these two types through to here),
// inlined: as a call of their own they cost the version 1 types' inlined paths 10-14 % of
// szDecodeAsync's BF16 rate at 4-16 MiB (one H100, 2026-12-06); inlined, base's rate (one
// H200, 2026-12-07).
template <int kType, bool kAligned>
__device__ __forceinline__ void decodeNarrowTypeChunks(const FrameHeader& h, const FrameLayout& l,
                                                       const DecodeParams& p, const uint8_t* sExp, uint64_t warp,
                                                       uint64_t warps) {
  if (l.codeBits == 3) decodeChunks<kType, kAligned, 3>(h, l, p, sExp, warp, warps);
  else decodeChunks<kType, kAligned, 4>(h, l, p, sExp, warp, warps);
}
template <bool kAligned>
__device__ __forceinline__ void decodeNarrowChunks(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                                                const uint8_t* sExp, uint64_t warp, uint64_t warps) {
  if (h.type == szFloat16) decodeNarrowTypeChunks<szFloat16, kAligned>(h, l, p, sExp, warp, warps);
  else decodeNarrowTypeChunks<szFloat8e4m3, kAligned>(h, l, p, sExp, warp, warps);
}

// The payload of a frame whose header is good: a raw copy, or chunks decoded, as thread `gtid`
// of `stride` (whole warps: warp gtid / 32 of stride / 32 takes chunks gtid / 32,
// (gtid + stride) / 32, ...). sExp: the header's codebook exponents.
template <bool kAligned, int kOnly>
__device__ __forceinline__ void decodePayload(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                                              const uint8_t* sExp, uint64_t gtid, uint64_t stride) {
  if (h.flags & kFlagRaw) {
    const uint64_t n = l.rawBytes;
    const uint8_t* src = p.frame + kHeaderBytes;
    if (kAligned) {
      for (uint64_t i = gtid; i < n / 16; i += stride)
        __stcs(reinterpret_cast<uint4*>(p.out) + i, __ldcs(reinterpret_cast<const uint4*>(src) + i));
      for (uint64_t b = n / 16 * 16 + gtid; b < n; b += stride) p.out[b] = src[b];
    } else {
      for (uint64_t b = gtid; b < n; b += stride) p.out[b] = src[b];
    }
    return;
  }
  const uint64_t warp = gtid / 32, warps = stride / 32;
  if constexpr (kOnly == kDecodeNarrow) {
    decodeNarrowChunks<kAligned>(h, l, p, sExp, warp, warps);
  } else if constexpr (narrowCodecType(kOnly)) {
    decodeNarrowTypeChunks<kOnly, kAligned>(h, l, p, sExp, warp, warps);
  } else if constexpr (kOnly >= 0) {
    decodeChunks<kOnly, kAligned>(h, l, p, sExp, warp, warps);
  } else {
    switch (h.type) {
      case szBfloat16: decodeChunks<szBfloat16, kAligned>(h, l, p, sExp, warp, warps); break;
      case szFloat32: decodeChunks<szFloat32, kAligned>(h, l, p, sExp, warp, warps); break;
      case szFloat8e5m2: decodeChunks<szFloat8e5m2, kAligned>(h, l, p, sExp, warp, warps); break;
      default:
        if constexpr (kOnly == kDecodeAll) decodeNarrowChunks<kAligned>(h, l, p, sExp, warp, warps);
        break;
    }
  }
}

// One block's part of decoding a frame: validates the header (thread 0; every block does, as
// the host knows neither the frame's type nor its size), then copies a raw payload or decodes
// chunks, as thread `gtid` of `stride` (decodePayload). Returns the header's verdict, the same
// in every thread of the block; errors of the payload go to p.status.
// `reportHeader`: this block reports a bad header to p.status (one block of a grid does).
// kOnly >= 0: only frames of that type are decoded (a kernel for one type carries one path;
// callers that set it also set p.expectType, so a frame of another type never gets here);
// kDecodeV1, kDecodeAll: the types checkFrameHeader lets through for them.
template <bool kAligned, int kOnly = kDecodeV1>
__device__ __forceinline__ int decodeFramePart(const DecodeParams& p, uint64_t gtid, uint64_t stride,
                                               bool reportHeader) {
  static_assert(kOnly != kDecodeNarrow, "the narrow types alone are the batched decoder's (decodeFrameWarp)");
  __shared__ FrameHeader sH;
  __shared__ FrameLayout sL;
  __shared__ uint8_t sBytes[kHeaderBytes];  // the header's bytes, loaded by all threads at once
  __shared__ int sErr;
  const uint32_t tid = threadIdx.x;
  const bool whole = p.frameBytes >= kHeaderBytes;
  for (uint32_t i = tid; i < kHeaderBytes; i += blockDim.x) sBytes[i] = whole ? p.frame[i] : 0;
  __syncthreads();
  if (tid == 0) {
    const int err = checkFrameHeader(sBytes, p, &sH, &sL, kOnly);
    if (err != szSuccess && reportHeader) reportStatus(p.status, err);
    sErr = err;
  }
  __syncthreads();
  const int err = sErr;
  if (err == szSuccess) decodePayload<kAligned, kOnly>(sH, sL, p, sBytes + 64, gtid, stride);
  return err;
}

// One warp's frame, for decodeFrameWarp (shared memory, like the block decoder's state: the
// decoder reads its parameters and layout at will, which keeps them out of registers).
struct WarpFrame {
  DecodeParams p;  // p.status points at `status`
  FrameHeader h;
  FrameLayout l;
  alignas(8) uint8_t bytes[kHeaderBytes];
  int status;  // the payload's verdict (the decoder's status word)
};

// The most of a frame decodeFrameWarp prefetches: a 16 KiB item's frame twice over. A larger
// frame's tail would wait in L2 behind the warp's chunks, which go one at a time.
constexpr uint64_t kWarpPrefetchBytes = 32768;

// Puts the frame of p (its first kWarpPrefetchBytes) in flight to L2 at once, before its header
// is read. A warp of the batched decoder has one frame and takes its chunks one after another,
// each load a round trip to DRAM behind the last (ncu: 1.5 KiB in flight a warp, DRAM 42 %);
// after the prefetch those loads wait on L2, and the DRAM fetch of the whole frame overlaps the
// header's load and check. A hint only: nothing is read into registers, no error can come of
// it, and only bytes of the frame's buffer are named: frameBytes, capped at the largest frame
// that fits the output (its raw form, as szDecodeAsync sizes its grid). Lane 0 issues one bulk
// prefetch (sm_90: one instruction for the frame); older GPUs prefetch a line a lane.
__device__ __forceinline__ void prefetchFrameL2(const DecodeParams& p, uint32_t lane) {
  const uint64_t fit =
      p.outCapacity < kWarpPrefetchBytes - kHeaderBytes ? kHeaderBytes + p.outCapacity : kWarpPrefetchBytes;
  const uint32_t span = uint32_t(p.frameBytes < fit ? p.frameBytes : fit);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p.frame);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The bulk copy's address and size are whole 16-byte units: the frame's inside ones.
  const uintptr_t first = (a + 15) & ~uintptr_t(15), end = (a + span) & ~uintptr_t(15);
  if (lane == 0 && end > first) {
    const size_t g = __cvta_generic_to_global(reinterpret_cast<const void*>(first));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(g), "r"(uint32_t(end - first)) : "memory");
  }
#else
  for (uint32_t b = lane * 128; b < span; b += 32 * 128) {
    const size_t g = __cvta_generic_to_global(reinterpret_cast<const void*>(a + b));
    asm volatile("prefetch.global.L2 [%0];" ::"l"(g) : "memory");
  }
#endif
}

// Whether a frame whose header checked good is FP16 or E4M3 with compressed chunks: the batched
// decoder's second kernel's (kDecodeNarrow), every other frame the first's.
__device__ __forceinline__ bool narrowFrame(const FrameHeader& h) {
  return !(h.flags & kFlagRaw) && !deviceCodecType(h.type);
}

// One warp decodes the whole frame of w.p (lane 0 has set it, then __syncwarp) alone, with no
// block barrier: the batched decoder's item. Returns the verdict in every lane. kSet kDecodeV1
// or kDecodeNarrow: *mine says whether the frame is this kernel's (narrowFrame), and a frame that
// is not is left alone (nothing written, the verdict meaningless). The first kernel prefetches
// the frame while its header is checked; the second prefetches only its own frames.
template <bool kAligned, int kSet>
__device__ __forceinline__ int decodeFrameWarp(WarpFrame& w, bool* mine) {
  const uint32_t lane = threadIdx.x % 32;
  if (kSet != kDecodeNarrow) prefetchFrameL2(w.p, lane);
  const bool whole = w.p.frameBytes >= kHeaderBytes;
  for (uint32_t i = lane; i < kHeaderBytes; i += 32) w.bytes[i] = whole ? w.p.frame[i] : 0;
  __syncwarp();
  int err = szSuccess;
  if (lane == 0) {
    err = checkFrameHeader(w.bytes, w.p, &w.h, &w.l, kDecodeAll);
    w.status = szSuccess;
  }
  err = __shfl_sync(0xFFFFFFFFu, err, 0);
  __syncwarp();
  *mine = (kSet == kDecodeNarrow) == (err == szSuccess && narrowFrame(w.h));
  if (!*mine || err != szSuccess) return err;
  if (kSet == kDecodeNarrow) prefetchFrameL2(w.p, lane);
  decodePayload<kAligned, kSet>(w.h, w.l, w.p, w.bytes + 64, lane, 32);
  __syncwarp();
  return w.status;
}

}  // namespace sz
