// The GPU encoder's kernels (paper §3, App. A), shared by szEncodeAsync (kernels/encode.cu: the
// format version 1 types) and kernels/encode_narrow.cu (FP16 and E4M3 at 3- or 4-bit codes,
// format version 2): two kernels, no block barrier in the streaming pass and no atomics, no
// host synchronization.
//  - The chunk kernel: W "range warps", each encoding a contiguous range of at most 32 chunks
//    in the decoder's lane layout (kernels/encode_lanes.cuh). It stores the sign-mantissa and
//    code sections and the chunk counts, puts each chunk's first slotRecords(type) escape records in
//    the chunk's slot in temporary memory and the range's escape total in totals[w].
//  - The place kernel (a few blocks per SM): every block sums the totals and decides raw or
//    compressed as the host encoder does. Raw: the grid copies the input behind a raw header.
//    Compressed: a warp per range scans its chunk counts, writes the group offsets starting in
//    it and moves the slots' records to their place in the escape section; a chunk with more
//    escapes than its slot holds is read again and its records regenerated. Block 0 writes the
//    header.
//  - A frame of at most kPlaceWarps chunks (16K elements) is one launch of one block, the solo
//    kernel: a warp per chunk, a block barrier, then the place pass of that block. Small calls
//    are launch-bound; this halves their launches. (SZ_ENCODE_CALIBRATE puts the calibration's
//    histogram and codebook launches before it: kernels/calibrate.h.)
// Temporary memory is only read where the chunk kernel wrote it: nothing to zero.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "bulk_ring.cuh"
#include "calibrate.h"
#include "codec/frame.h"
#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "device_props.h"
#include "encode_lanes.cuh"
#include "escape_slots.h"
#include "encode_tiles.cuh"

namespace sz {

// Temporary memory: [histogram | codebook | totals[W] (u32) | slots[C] of slotRecords(type) records].
constexpr size_t kTempHist = 0, kTempCodebook = kTempHist + kCalibrateCountsBytes, kTempTotals = kTempCodebook + 32;
static_assert(sizeof(szCodebook_t) <= kTempTotals - kTempCodebook, "the calibrated codebook fits its place");
constexpr size_t kTempExponents = kTempCodebook + offsetof(szCodebook_t, exponents);

// Range warps: at most 32 chunks each, so a range's chunk counts fit one warp's lanes, and at
// least min(C, C/8 held within [kFewRanges, kManyRanges]): about two waves of the resident warps
// or more, with ranges of 8 chunks where that still makes kManyRanges. Fewer, longer ranges pay
// a range's fixed cost less often (64 MiB: +6-8 %); past 128 MiB more of them keep the last
// wave short (perf/results/codec_notes.md, the place kernel).
constexpr uint64_t kFewRanges = 8192, kManyRanges = 16384;

constexpr uint32_t kChunkThreads = 256, kChunkWarps = kChunkThreads / 32;

// Chunk kernels that load chunks ahead of their encode: aligned inputs but FP32's. Aligned
// BF16, FP16 and E4M3 on sm_90 and later stream them through a ring of bulk copies in shared
// memory (kRingEncode, kernels/bulk_ring.cuh); E5M2, and all of them before sm_90, hold one
// chunk ahead in registers.
template <int kType, bool kAligned>
constexpr bool kPrefetch = kAligned && kType != szFloat32;
template <int kType, bool kAligned>
constexpr bool kRingEncode = SZ_BULK_DEVICE && kAligned && (kType == szBfloat16 || narrowCodecType(kType));
using CodeTable = uint8_t[256];  // a block's exponent-code table (shared memory beside the rings)

// Blocks per SM of the chunk kernel: those that load a chunk ahead in registers (chunkRange)
// need more than 64 registers. BF16 ahead at 2 (128 registers): 1937-1940 GB/s against 1910 at
// 4 without, and 1834 at 3 (80 registers, it spills); E5M2 ahead at 3: 1652-1659 against
// 1500-1503 at 4 without, 1508 at 2. FP32 and unaligned inputs at 4 without. The BF16 ring holds
// its chunks ahead in shared memory: 4 blocks (64 registers), 1998-2021 GB/s; E5M2 with a ring
// measured 1581 against 1648 (codec_notes.md, v6). FP16 and E4M3 through the ring on one H100:
// 1065 and 910 GB/s, against 1001 and 900 ahead in registers at 2 and 3 blocks (128 and 80
// registers; perf/results/2026-12-07h_h100.md).
template <int kType, bool kAligned>
constexpr uint32_t chunkBlocksPerSm() {
  if constexpr (kRingEncode<kType, kAligned>)
    return ringBlocksPerSm(4, kChunkWarps, sizeof(CodeTable) + kChunkWarps * kWarpStageBytes<kType>);
  return !kAligned ? 4 : kType == szBfloat16 || kType == szFloat16 ? 2 : kType == szFloat8e5m2 || kType == szFloat8e4m3 ? 3 : 4;
}
constexpr uint32_t kPlaceThreads = 512, kPlaceWarps = kPlaceThreads / 32;
constexpr uint32_t kPlaceRanges = 2048;  // most ranges a place block scans (shared memory)
constexpr uint32_t kPlaceBlocksPerSm = 2;

// The split of `items` over `parts`: part i takes [i * per + min(i, extra), + per + (i < extra)).
struct Split {
  uint64_t per, extra;
  SZ_HD uint64_t first(uint64_t i) const { return i * per + (i < extra ? i : extra); }
  SZ_HD uint64_t size(uint64_t i) const { return per + (i < extra); }
};
inline Split split(uint64_t items, uint64_t parts) { return parts == 0 ? Split{0, 0} : Split{items / parts, items % parts}; }

struct TempLayout {
  uint64_t ranges, recsOff, bytes;
};
inline TempLayout tempLayout(int type, const FrameLayout& l) {
  TempLayout t;
  const uint64_t c = l.numChunks, want = std::min(std::max(c / 8, kFewRanges), kManyRanges);
  const uint64_t atLeast = c < want ? c : want;
  t.ranges = (c + 31) / 32 > atLeast ? (c + 31) / 32 : atLeast;
  t.recsOff = (kTempTotals + 4 * t.ranges + 15) / 16 * 16;
  t.bytes = t.recsOff + uint64_t(slotBytes(type)) * c;
  return t;
}

struct ChunkParams {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  Split chunks;  // chunks over range warps
  uint64_t ranges;
  uint32_t* totals;
  uint8_t* recs;
  const uint8_t* tempExps;  // the calibrated codebook's exponents, or NULL: `codebook`
  uint8_t codebook[kCodebookSize];
};

// The block's code table, filled by all its threads: one table at a fixed shared address, so a
// lookup's address is the index plus a constant.
template <int kType>
__device__ __forceinline__ void buildBlockTable(const ChunkParams& p, uint8_t* table) {
  fillCodeTable<kType>(table, p.tempExps ? p.tempExps : p.codebook, threadIdx.x, blockDim.x);
  __syncthreads();
}

// Range warp w: encodes its chunks with the block's code table, stores their counts and the
// range's escape total. kRing (kRingEncode): the block's dynamic shared memory holds the warp's
// ring (kernels/bulk_ring.cuh), and FP16's and E4M3's whole chunks store their unaligned
// section through the warp's `stage` (kWarpStageBytes). kAhead: whole chunks are loaded a chunk
// ahead in registers (kPrefetch), where the kernel has the registers for it.
template <int kType, uint32_t kBits, bool kAligned, bool kRing = false, bool kAhead = kPrefetch<kType, kAligned>>
__device__ __forceinline__ void chunkRange(const ChunkParams& p, uint64_t w, const uint8_t* code, uint32_t lane,
                                           uint8_t* stage = nullptr) {
  const uint64_t c0 = p.chunks.first(w);
  const uint32_t n = uint32_t(p.chunks.size(w));
  uint32_t mine = 0;  // lane j: escapes of chunk c0 + j
  if constexpr (kRing) {
    // The range's whole chunks (all but a frame's last) stream through the ring, its stages'
    // count ahead of their encode; each is read into registers and its stage refilled before
    // the encode, so the warp's next chunks are in flight while it encodes.
    constexpr uint32_t kBytes = kChunkInBytes<kType>;
    using Ring = BulkRing<ringStages(kBytes), kBytes>;
    const uint64_t whole = p.l.count / kChunkElems;
    const uint32_t nb = c0 >= whole ? 0 : whole - c0 < n ? uint32_t(whole - c0) : n;  // chunks [0, nb) of the range
    Ring ring(warpRingSpace(), lane);
    const auto fill = [&](uint32_t s, uint32_t j) {
      ring.arm(s, kBytes);
      ring.copy(s, p.in + (c0 + j) * kBytes, kBytes);
    };
    if (lane == 0)
      for (uint32_t j = 0; j < Ring::kNumStages && j < nb; ++j) fill(j, j);
    for (uint32_t j = 0; j < n; ++j) {
      const uint64_t c = c0 + j;
      uint32_t k;
      if (j < nb) {
        ChunkRegs<kType> cur;
        ring.wait();
        loadWholeChunk<kType, true>(ring.current(), 0, lane, cur);
        ring.release();
        if (lane == 0 && j + Ring::kNumStages < nb) fill(ring.stage, j + Ring::kNumStages);
        ring.advance();
        // The chunk's places, from c each chunk: carried across chunks, they made BF16's kernel
        // spill 88 bytes at 64 registers.
        const LanePlaces<kType, kBits> at(p.in, p.out, p.l, c, lane);
        k = encodeChunkPart<kType, kBits, kAligned, true, true, true, kWarpStageBytes<kType> != 0>(
            at, code, kChunkElems, lane, p.recs + c * slotBytes(kType), slotRecords(kType), &cur, stage);
      } else {
        k = encodeChunk<kType, kBits, kAligned, true>(p.in, p.out, p.l, code, c, lane, p.recs + c * slotBytes(kType), slotRecords(kType));
      }
      if (lane == j) mine = k;
    }
  } else if constexpr (kAhead) {
    // Whole chunks (all but a frame's last) are loaded a chunk ahead of their encode, so a
    // warp keeps a chunk's loads in flight while it encodes the one before.
    const uint64_t whole = p.l.count / kChunkElems;  // chunks [0, whole) are whole
    ChunkRegs<kType> cur, nxt;
    if (c0 < whole) loadWholeChunk<kType>(p.in, c0, lane, cur);
    for (uint32_t j = 0; j < n; ++j) {
      const uint64_t c = c0 + j;
      uint32_t k;
      if (c < whole) {
        const bool ahead = j + 1 < n && c + 1 < whole;
        if (ahead) loadWholeChunk<kType>(p.in, c + 1, lane, nxt);
        const LanePlaces<kType, kBits> at(p.in, p.out, p.l, c, lane);
        k = encodeChunkPart<kType, kBits, kAligned, true, true, true>(at, code, kChunkElems, lane,
                                                                      p.recs + c * slotBytes(kType), slotRecords(kType), &cur);
        if (ahead) {
#pragma unroll
          for (uint32_t a = 0; a < ChunkPass<kType>::kAhead; ++a)
#pragma unroll
            for (uint32_t i = 0; i < 4; ++i) cur[a][i] = nxt[a][i];
        }
      } else {
        k = encodeChunk<kType, kBits, kAligned, true>(p.in, p.out, p.l, code, c, lane, p.recs + c * slotBytes(kType), slotRecords(kType));
      }
      if (lane == j) mine = k;
    }
  } else {
    for (uint32_t j = 0; j < n; ++j) {
      const uint64_t c = c0 + j;
      const uint32_t k = encodeChunk<kType, kBits, kAligned, true>(p.in, p.out, p.l, code, c, lane,
                                                            p.recs + c * slotBytes(kType), slotRecords(kType));
      if (lane == j) mine = k;
    }
  }
  if (lane < n) storeLe16(p.out + p.l.countsOff + 2 * (c0 + lane), uint16_t(mine));
  const uint32_t total = __reduce_add_sync(0xFFFFFFFFu, mine);
  if (lane == 0) p.totals[w] = total;
}

template <int kType, uint32_t kBits, bool kAligned>
__global__ void __launch_bounds__(kChunkThreads, chunkBlocksPerSm<kType, kAligned>()) chunkKernel(const __grid_constant__ ChunkParams p) {
  __shared__ alignas(8) CodeTable sCode;
  buildBlockTable<kType>(p, sCode);
  const uint32_t lane = threadIdx.x % 32, wb = threadIdx.x / 32;
  const uint64_t w = uint64_t(blockIdx.x) * kChunkWarps + wb;
  if (w >= p.ranges) return;
  if constexpr (kRingEncode<kType, kAligned> && kWarpStageBytes<kType> != 0) {
    static_assert(kType != szFloat8e4m3 || kBits == 3, "E4M3 has kernels at 3-bit codes only (encode_narrow.cu)");
    __shared__ alignas(16) uint8_t sStage[kChunkWarps][kWarpStageBytes<kType>];
    chunkRange<kType, kBits, kAligned, true>(p, w, sCode, lane, sStage[wb]);
  } else {
    chunkRange<kType, kBits, kAligned, kRingEncode<kType, kAligned>>(p, w, sCode, lane);
  }
}

struct PlaceParams {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  int type;
  Split chunks;  // as the chunk kernel's
  uint64_t ranges;
  Split blocks;  // ranges over place blocks
  const uint32_t* totals;
  const uint8_t* recs;
  uint64_t budget;  // most escapes that keep the frame smaller than raw
  bool forceRaw;    // raw whatever the escapes (type, size): the chunk kernel did not run
  const uint8_t* temp;  // calibrated: the codebook is in temp, not in `codebook` and `used`
  uint8_t codebook[kCodebookSize];
  int used;
  uint64_t* outBytes;
};

template <class T>
__device__ __forceinline__ T warpSum(T v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
  return v;
}

__device__ __forceinline__ uint32_t warpInclusiveScan(uint32_t v, uint32_t lane) {
#pragma unroll
  for (uint32_t off = 1; off < 32; off *= 2) {
    const uint32_t t = __shfl_up_sync(0xFFFFFFFFu, v, off);
    if (lane >= off) v += t;
  }
  return v;
}

// One warp places range w, whose first escape has index `base` in the frame: the group offsets
// of the groups starting in it, its slots' records, and the regenerated records of its chunks
// with more than slotRecords(kType) escapes. The code table is built on the first such chunk.
template <int kType, uint32_t kBits, bool kAligned>
__device__ void placeRange(const PlaceParams& p, const uint8_t* exps, uint64_t w, uint64_t base, uint8_t* table,
                           bool& tableBuilt, uint32_t lane) {
  constexpr uint32_t kFull = 0xFFFFFFFFu;
  const FrameLayout& l = p.l;
  const uint64_t c0 = p.chunks.first(w), c = c0 + lane;
  const uint32_t n = uint32_t(p.chunks.size(w));
  const uint32_t cnt = lane < n ? loadLe16(p.out + l.countsOff + 2 * c) : 0;
  const uint32_t incl = warpInclusiveScan(cnt, lane), excl = incl - cnt;
  const uint32_t total = __shfl_sync(kFull, incl, 31);
  if (lane < n && c % kChunksPerGroup == 0) storeLe64(p.out + l.indexOff + 8 * (c / kChunksPerGroup), base + excl);
  uint8_t* esc = p.out + l.escOff + base * kEscapeBytes;
  // kMoveRounds rounds of 32 records at once: their loads are all issued before the stores.
  constexpr uint32_t kMoveRounds = 4;
  for (uint32_t r0 = 0; r0 < total; r0 += 32 * kMoveRounds) {
    uint32_t rec[kMoveRounds], at[kMoveRounds];
#pragma unroll
    for (uint32_t b = 0; b < kMoveRounds; ++b) {
      // Record r belongs to the last chunk j whose first record is at most r.
      const uint32_t r = r0 + 32 * b + lane;
      uint32_t j = 0;
#pragma unroll
      for (uint32_t step = 16; step > 0; step /= 2)
        if (__shfl_sync(kFull, excl, j + step) <= r) j += step;
      const uint32_t cj = __shfl_sync(kFull, cnt, j), ej = __shfl_sync(kFull, excl, j);
      at[b] = ~0u;
      rec[b] = 0;
      if (r < total && cj <= slotRecords(kType)) {
        const uint8_t* src = p.recs + (c0 + j) * slotBytes(kType) + (r - ej) * kEscapeBytes;
        rec[b] = src[0] | uint32_t(src[1]) << 8 | uint32_t(src[2]) << 16;
        at[b] = r;
      }
    }
#pragma unroll
    for (uint32_t b = 0; b < kMoveRounds; ++b) {
      if (at[b] == ~0u) continue;
      uint8_t* dst = esc + at[b] * kEscapeBytes;
      dst[0] = uint8_t(rec[b]);
      dst[1] = uint8_t(rec[b] >> 8);
      dst[2] = uint8_t(rec[b] >> 16);
    }
  }
  uint32_t over = __ballot_sync(kFull, cnt > slotRecords(kType));
  if (over != 0 && !tableBuilt) {
    buildCodeTable<kType>(table, exps, lane);
    tableBuilt = true;
  }
  while (over != 0) {
    const uint32_t j = __ffs(over) - 1;
    over &= over - 1;
    const uint32_t ej = __shfl_sync(kFull, excl, j);
    encodeChunk<kType, kBits, kAligned, false>(p.in, p.out, l, table, c0 + j, lane, esc + ej * kEscapeBytes, ~0u);
  }
}

// A place block's shared memory, declared by its kernel: one for all the place passes a kernel
// inlines (the slot kernels' FP16 and E4M3 paths), not 12.3 KiB per instantiation.
struct PlaceShared {
  uint32_t range[kPlaceRanges];  // this block's range totals, then their exclusive scan
  unsigned long long sum[kPlaceWarps], pre[kPlaceWarps];
  uint32_t warp[kPlaceWarps];
  alignas(8) uint8_t code[kPlaceWarps][256];  // a code table per warp
};

// Place block `block` of `blocks` (kPlaceThreads threads): its ranges, and its part of a raw
// frame's copy.
template <int kType, uint32_t kBits, bool kAligned>
__device__ __forceinline__ void placeBlock(const PlaceParams& p, uint32_t block, uint32_t blocks, PlaceShared& sh) {
  uint32_t* sRange = sh.range;
  unsigned long long *sSum = sh.sum, *sPre = sh.pre;
  uint32_t* sWarp = sh.warp;
  const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const uint64_t r0 = p.blocks.first(block);
  const uint32_t nr = uint32_t(p.blocks.size(block));
  // Every block sums all totals (the raw decision needs them all) and the ones before its ranges.
  // kSumLoads loads a thread at once, so a block waits for few round trips.
  constexpr uint32_t kSumLoads = 8;
  uint64_t sum = 0, pre = 0;
  for (uint64_t i0 = 0; i0 < p.ranges; i0 += kSumLoads * kPlaceThreads) {
    uint32_t t[kSumLoads];
#pragma unroll
    for (uint32_t k = 0; k < kSumLoads; ++k) {
      const uint64_t i = i0 + k * kPlaceThreads + tid;
      t[k] = i < p.ranges ? p.totals[i] : 0;
    }
#pragma unroll
    for (uint32_t k = 0; k < kSumLoads; ++k) {
      const uint64_t i = i0 + k * kPlaceThreads + tid;
      sum += t[k];
      if (i < r0) pre += t[k];
      else if (i - r0 < nr) sRange[i - r0] = t[k];
    }
  }
  sum = warpSum(sum);
  pre = warpSum(pre);
  if (lane == 0) {
    sSum[warp] = sum;
    sPre[warp] = pre;
  }
  __syncthreads();
  sum = pre = 0;
  for (uint32_t i = 0; i < kPlaceWarps; ++i) {
    sum += sSum[i];
    pre += sPre[i];
  }
  const uint8_t* exps = p.temp ? p.temp + kTempExponents : p.codebook;
  const int used = p.temp ? reinterpret_cast<const szCodebook_t*>(p.temp + kTempCodebook)->used : p.used;
  const FrameFinish f{p.in, p.out, p.l, p.type, p.budget, p.forceRaw, exps, used};
  const uint64_t gtid = uint64_t(block) * kPlaceThreads + tid;
  const uint64_t bytes = finishFrame<kAligned, !deviceCodecType(kType)>(f, sum, gtid, uint64_t(blocks) * kPlaceThreads);
  if (gtid == 0) *p.outBytes = bytes;
  if (p.forceRaw || sum > p.budget) return;

  // Exclusive scan of the block's range totals, four consecutive ones a thread (they fit 32
  // bits: at most kPlaceRanges * 32 * 1024 escapes).
  static_assert(kPlaceRanges == 4 * kPlaceThreads, "four ranges a thread");
  uint32_t v[4], s = 0;
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i) {
    v[i] = 4 * tid + i < nr ? sRange[4 * tid + i] : 0;
    s += v[i];
  }
  const uint32_t incl = warpInclusiveScan(s, lane);
  if (lane == 31) sWarp[warp] = incl;
  __syncthreads();
  uint32_t run = incl - s;
  for (uint32_t i = 0; i < warp; ++i) run += sWarp[i];
#pragma unroll
  for (uint32_t i = 0; i < 4; ++i) {
    if (4 * tid + i < nr) sRange[4 * tid + i] = run;
    run += v[i];
  }
  __syncthreads();
  bool tableBuilt = false;
  for (uint32_t r = warp; r < nr; r += kPlaceWarps)
    placeRange<kType, kBits, kAligned>(p, exps, r0 + r, pre + sRange[r], sh.code[warp], tableBuilt, lane);
}

template <int kType, uint32_t kBits, bool kAligned>
__global__ void __launch_bounds__(kPlaceThreads, kPlaceBlocksPerSm) placeKernel(const __grid_constant__ PlaceParams p) {
  __shared__ PlaceShared sh;
  // Launched as a programmatic dependent of the chunk kernel: its blocks are placed while the
  // chunk kernel drains, and wait here until everything it wrote is visible.
  waitForPrimary();
  placeBlock<kType, kBits, kAligned>(p, blockIdx.x, gridDim.x, sh);
}

// A frame of at most kPlaceWarps ranges (chunks) in one launch and one block: its warps encode
// a range each, then the block places them; the barrier between makes the chunk pass's global
// writes (counts, totals, slots) visible to the whole block.
template <int kType, uint32_t kBits, bool kAligned>
__global__ void __launch_bounds__(kPlaceThreads, 1) soloKernel(const __grid_constant__ ChunkParams c,
                                                             const __grid_constant__ PlaceParams p) {
  __shared__ alignas(8) uint8_t sTable[256];
  __shared__ PlaceShared sh;
  buildBlockTable<kType>(c, sTable);
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (warp < c.ranges) chunkRange<kType, kBits, kAligned>(c, warp, sTable, lane);
  __syncthreads();
  placeBlock<kType, kBits, kAligned>(p, 0, 1, sh);
}

// A frame of at most kPlaceWarps ranges is one launch (soloKernel); `p` then has one block.
inline bool soloFrame(const ChunkParams* c) { return c != nullptr && c->ranges <= kPlaceWarps; }

template <int kType, uint32_t kBits, bool kAligned>
szResult_t launch(const ChunkParams* c, const PlaceParams& p, uint64_t placeBlocks, cudaStream_t stream) {
  if (soloFrame(c)) {
    soloKernel<kType, kBits, kAligned><<<1, kPlaceThreads, 0, stream>>>(*c, p);
    CUDACHECK(cudaGetLastError());
    return szSuccess;
  }
  if (c != nullptr) {
    const uint64_t blocks = (c->ranges + kChunkWarps - 1) / kChunkWarps;
    const uint32_t shared = kRingEncode<kType, kAligned> ? ringSharedBytes(kChunkWarps) : 0;
    if (shared != 0) SZCHECK(allowKernelShared(reinterpret_cast<const void*>(chunkKernel<kType, kBits, kAligned>), shared));
    chunkKernel<kType, kBits, kAligned><<<unsigned(blocks), kChunkThreads, shared, stream>>>(*c);
    CUDACHECK(cudaGetLastError());
  }
  // A dependent of the chunk kernel, when there is one.
  CUDACHECK(launchMaybeDependent(c != nullptr, dim3(unsigned(placeBlocks)), dim3(kPlaceThreads), stream,
                                 placeKernel<kType, kBits, kAligned>, p));
  return szSuccess;
}

template <int kType, uint32_t kBits>
szResult_t launchType(const ChunkParams* c, const PlaceParams& p, uint64_t placeBlocks, bool aligned,
                      cudaStream_t stream) {
  return aligned ? launch<kType, kBits, true>(c, p, placeBlocks, stream)
                 : launch<kType, kBits, false>(c, p, placeBlocks, stream);
}

// FP16's and E4M3's launches (kernels/encode_narrow.cu, their own translation unit): `codeBits`
// 3 or 4, as the codebook's width.
szResult_t launchNarrowEncode(int type, uint32_t codeBits, const ChunkParams* c, const PlaceParams& p,
                              uint64_t placeBlocks, bool aligned, cudaStream_t stream);

}  // namespace sz
