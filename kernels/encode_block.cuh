// One block encodes a whole frame (paper §3, App. A): the tile loop of kernels/encode_tiles.cuh
// with its tiles taken in order and escapes placed by a running count, then the frame finished
// by the same block. Used where a block owns a frame: the slot kernels (one slice per block,
// kernels/slot_kernels.cu; the batched calls give a warp an item, kernels/encode_warp.cuh).
#pragma once

#include <cstdint>

#include "encode_tiles.cuh"

namespace sz {

// One block on one frame: tiles in order, escapes placed by a running count.
struct BlockTiles {
  unsigned long long* total;
  uint64_t next = 0, run = 0;
  __device__ uint64_t ticket() { return next++; }
  __device__ uint64_t prefix(uint64_t, uint64_t escapes, uint32_t) {
    uint64_t r = run;
    run += escapes;
    return r;
  }
  __device__ void last(uint64_t t) { *total = t; }
};

// Encodes `count` elements of kType at `in` into a frame at `frame` with the codebook's
// exponents (`codebook`, device-readable, `used` of them seen by calibration); returns the frame
// size, the escapes stored in it and whether the frame stores the input raw (it would not have
// paid). `frame` must hold the frame (at most kHeaderBytes + count * element size). Every
// thread of the block calls it; it ends with a block barrier.
template <int kType, bool kAligned>
__device__ uint64_t encodeSlice(const uint8_t* codebook, int used, const uint8_t* in, uint64_t count,
                                uint8_t* frame, uint64_t* escapes, bool* raw) {
  // The frame's layout lives in shared memory: in registers it would crowd out the tile loop's.
  __shared__ TileParams sTile;
  __shared__ FrameFinish sFinish;
  __shared__ unsigned long long sTotal;
  if (threadIdx.x == 0) {
    FrameLayout l;
    computeLayout(kType, count, &l);
    const uint64_t fixed = l.escOff - kHeaderBytes;
    const bool forceRaw = fixed >= l.rawBytes;
    const uint64_t budget = forceRaw ? 0 : (l.rawBytes - fixed - 1) / kEscapeBytes;
    sTile = TileParams{in, frame, l, budget, codebook};
    sFinish = FrameFinish{in, frame, l, kType, budget, forceRaw, codebook, used};
    sTotal = 0;
  }
  __syncthreads();
  if (!sFinish.forceRaw) {
    BlockTiles sched{&sTotal};
    encodeTiles<kType, kAligned>(sTile, sTile.l.numGroups, sched);
  }
  __syncthreads();
  const uint64_t esc = sTotal;
  uint64_t bytes = finishFrame<kAligned>(sFinish, esc, threadIdx.x, kEncodeThreads);
  *raw = sFinish.forceRaw || esc > sFinish.budget;
  *escapes = *raw ? 0 : esc;
  __syncthreads();  // sTile and sFinish are rewritten by the next frame
  return bytes;
}

}  // namespace sz
