// One warp encodes a whole frame alone (paper §3, App. A): the batched encoder's item
// (kernels/batch.cu). Chunks go in order through the lane encoder (kernels/encode_lanes.cuh), so
// the warp keeps the running escape count: each chunk's records go straight to their place in
// the escape section, its count to the counts section, each group's first escape to the index.
// No block barrier, no temporary memory; the frame is byte-identical to szEncode's.
#pragma once

#include <cstdint>

#include "codec/frame.h"
#include "encode_lanes.cuh"
#include "encode_tiles.cuh"

namespace sz {

// Encodes `count` elements of kType at `in` into the frame at `frame` (room for
// szEncodeMaxSize bytes) with code table `table` (built for `exps`, the codebook's exponents,
// `used` of them seen by calibration; kBits-bit codes). All 32 lanes call it; returns the frame
// size in every lane.
template <int kType, uint32_t kBits, bool kAligned>
__device__ __forceinline__ uint64_t encodeFrameWarp(const uint8_t* in, uint64_t count, uint8_t* frame,
                                                    const uint8_t* table, const uint8_t* exps, int used) {
  const uint32_t lane = threadIdx.x % 32;
  FrameLayout l;
  computeLayout(kType, count, &l, kBits);
  const uint64_t fixed = l.escOff - kHeaderBytes;
  const bool forceRaw = fixed >= l.rawBytes;
  const uint64_t budget = forceRaw ? 0 : (l.rawBytes - fixed - 1) / kEscapeBytes;
  uint64_t run = 0;  // escapes of the chunks before
  if (!forceRaw) {
    uint32_t mine = 0;  // lane j: the count of chunk j of the current 32
    for (uint64_t c = 0; c < l.numChunks; ++c) {
      if (lane == 0 && c % kChunksPerGroup == 0) storeLe64(frame + l.indexOff + 8 * (c / kChunksPerGroup), run);
      // Records past the budget are never written: the frame would go raw.
      const uint32_t limit = run < budget ? uint32_t(budget - run < kChunkElems ? budget - run : kChunkElems) : 0;
      const uint32_t k = encodeChunk<kType, kBits, kAligned, true>(in, frame, l, table, c, lane,
                                                            frame + l.escOff + run * kEscapeBytes, limit);
      if (lane == c % 32) mine = k;
      if (c % 32 == 31 || c + 1 == l.numChunks) {
        if (lane <= c % 32) storeLe16(frame + l.countsOff + 2 * (c - c % 32 + lane), uint16_t(mine));
      }
      run += k;
    }
  }
  __syncwarp();  // a raw frame's copy overwrites what the lanes stored
  const FrameFinish f{in, frame, l, kType, budget, forceRaw, exps, used};
  const uint64_t bytes = finishFrame<kAligned, !deviceCodecType(kType)>(f, run, lane, 32);
  return __shfl_sync(0xFFFFFFFFu, bytes, 0);
}

}  // namespace sz
