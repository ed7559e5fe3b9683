// One block encodes a whole FP16 or E4M3 frame (format version 2, 3- or 4-bit codes; paper §3,
// App. A): the slot kernels' encoder for these two types (kernels/slot_ops.cuh). It is the
// grid encoder's solo kernel (kernels/encode_grid.cuh) for a frame of any size a slot holds:
// the block's warps encode ranges of at most 32 chunks (narrowRangesOf) in the decoder's lane
// layout, each chunk's first slotRecords(type) escape records going to the block's scratch,
// then a block barrier and the place pass as one block (group offsets, records moved into the
// escape section, chunks with more escapes than their slot re-encoded, the header or a raw copy).
// Frames are byte-identical to szEncodeAsync's and the CPU codec's.
#pragma once

#include <cstdint>

#include "encode_grid.cuh"

namespace sz {

// Chunks of a frame one block places: kPlaceRanges ranges of 32.
constexpr uint64_t kNarrowBlockChunks = uint64_t(kPlaceRanges) * 32;

// The encoder's block-wide state, in shared memory: one for all of a kernel's instantiations
// (each would otherwise hold its own 12.6 KiB).
struct NarrowBlockShared {
  ChunkParams c;
  PlaceParams p;
  uint64_t bytes;
  alignas(8) uint8_t table[256];
  PlaceShared place;
};

// Encodes `count` elements of FP16 or E4M3 (kType) at `in` into a frame at `frame` with the
// `kBits`-bit codebook `codebook` (16 exponents as szCodebook_t holds them, `used` of them seen
// by calibration), using `scratch` (narrowScratchBytes of the slice, device memory, 16-byte
// aligned). Returns the frame size, the escapes stored in it and whether the frame stores the
// input raw (it would not have paid, or the slice has more than kNarrowBlockChunks chunks). Every
// thread of the block (kPlaceThreads) calls it with the same `s`; it ends with a block barrier.
template <int kType, uint32_t kBits, bool kAligned>
__device__ uint64_t encodeNarrowSlice(NarrowBlockShared& s, const uint8_t* codebook, int used, const uint8_t* in,
                                      uint64_t count, uint8_t* frame, uint8_t* scratch, uint64_t* escapes, bool* raw) {
  static_assert(narrowCodecType(kType), "FP16 and E4M3 only");
  ChunkParams& sC = s.c;
  PlaceParams& sP = s.p;
  if (threadIdx.x == 0) {
    FrameLayout l;
    computeLayout(kType, count, &l, kBits);
    const uint64_t fixed = l.escOff - kHeaderBytes;
    // E4M3 with 4-bit codes reaches the raw size in its sections alone, as szEncodeAsync's forceRaw.
    const bool forceRaw = fixed >= l.rawBytes || l.numChunks > kNarrowBlockChunks;
    const uint64_t ranges = forceRaw ? 0 : narrowRangesOf(l.numChunks);
    ChunkParams c{};
    c.in = in;
    c.out = frame;
    c.l = l;
    c.chunks = Split{ranges ? l.numChunks / ranges : 0, ranges ? l.numChunks % ranges : 0};
    c.ranges = ranges;
    c.totals = reinterpret_cast<uint32_t*>(scratch);
    c.recs = scratch + narrowRecordsOff(l.numChunks);
    for (uint32_t i = 0; i < kCodebookSize; ++i) c.codebook[i] = codebook[i];
    PlaceParams p{};
    p.in = in;
    p.out = frame;
    p.l = l;
    p.type = kType;
    p.chunks = c.chunks;
    p.ranges = ranges;
    p.blocks = Split{ranges, 0};
    p.totals = c.totals;
    p.recs = c.recs;
    p.budget = forceRaw ? 0 : (l.rawBytes - fixed - 1) / kEscapeBytes;
    p.forceRaw = forceRaw;
    for (uint32_t i = 0; i < kCodebookSize; ++i) p.codebook[i] = codebook[i];
    p.used = used;
    p.outBytes = &s.bytes;
    sC = c;
    sP = p;
  }
  __syncthreads();
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if constexpr (!(kType == szFloat8e4m3 && kBits == 4)) {  // that one is always raw (forceRaw)
    if (sC.ranges > 0) {
      buildBlockTable<kType>(sC, s.table);
      // FP16 loads no chunk ahead in registers: within the slot kernels' 64, its aligned send
      // kernel spilled 2852 bytes with it, 644 without (ptxas), and sendrecv_perf on one H100
      // (ipc, 256 MiB) rose from 157 to 189 GB/s; E4M3 keeps it (156 with, 143 without).
      constexpr bool kAhead = kType == szFloat8e4m3 && kPrefetch<kType, kAligned>;
      for (uint64_t w = warp; w < sC.ranges; w += kPlaceWarps)
        chunkRange<kType, kBits, kAligned, false, kAhead>(sC, w, s.table, lane);
      __syncthreads();  // the counts, totals and records are visible to the whole block
    }
    placeBlock<kType, kBits, kAligned>(sP, 0, 1, s.place);
  } else {
    placeBlock<szFloat8e4m3, 3, kAligned>(sP, 0, 1, s.place);  // forceRaw: the raw copy alone
  }
  __syncthreads();
  const uint64_t bytes = s.bytes;
  // A compressed frame is smaller than the raw one (the budget keeps it so).
  *raw = bytes == kHeaderBytes + sP.l.rawBytes;
  *escapes = *raw ? 0 : (bytes - sP.l.escOff) / kEscapeBytes;
  __syncthreads();  // s is rewritten by the next frame
  return bytes;
}

}  // namespace sz
