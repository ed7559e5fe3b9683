// The block encoder's tile loop and frame finalization as device functions (paper §3, App. A).
// One block encodes a whole frame (kernels/encode_block.cuh: tiles in order, escapes placed by
// a running count; the slot kernels use it). A tile is one escape group
// of 32 chunks; each thread encodes 16 elements per step, the block scans the escape counts,
// writes the chunk counts, the group offset and the tile's escapes. finishFrame (the header, or
// the raw copy) also ends szEncodeAsync's grid encoder (kernels/encode.cu) and the batched
// calls' warp encoder (kernels/encode_warp.cuh).
#pragma once

#include <cstdint>

#include "codec/frame.h"
#include "thread_elems.cuh"

namespace sz {

constexpr uint32_t kEncodeThreads = 512;
constexpr uint32_t kEncodeWarps = kEncodeThreads / 32;
// Registers of input a thread loads ahead of use: what the register budget above leaves.
template <int kType>
__host__ __device__ constexpr uint32_t aheadWords() { return kType == szBfloat16 ? 8 : 16; }
constexpr uint32_t kEncodeStepElems = kEncodeThreads * kThreadElems;  // 8192 = 8 chunks
constexpr uint32_t kEncodeSteps = kGroupElems / kEncodeStepElems;    // 4 steps per tile
static_assert(kEncodeSteps * kEncodeStepElems == kGroupElems, "a tile is one escape group");
static_assert(kEncodeSteps * 8 == kChunksPerGroup, "warp 0's lanes cover the tile's chunks");

// What the tile loop reads: the input, the frame being written, its layout, the escape budget
// (most escapes that keep the frame smaller than raw) and the codebook (device-readable).
struct TileParams {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  uint64_t budget;
  const uint8_t* codebook;
};

// Loads steps [s0, s0 + kAhead) of a tile: the thread's 16 elements of each.
template <int kType, bool kAligned, uint32_t kAhead>
__device__ __forceinline__ void loadSteps(const TileParams& p, uint64_t tile, uint32_t s0,
                                          ThreadElems<kType> (&e)[kAhead], uint32_t (&n)[kAhead]) {
  constexpr uint32_t eb = ThreadElems<kType>::T.elemBytes;
#pragma unroll
  for (uint32_t a = 0; a < kAhead; ++a) {
    uint64_t first = tile * kGroupElems + (s0 + a) * kEncodeStepElems + threadIdx.x * kThreadElems;
    n[a] = first >= p.l.count ? 0 : uint32_t(p.l.count - first < kThreadElems ? p.l.count - first : kThreadElems);
    if (n[a] == kThreadElems) e[a].template load<kAligned>(p.in + first * eb, n[a]);
    else if (n[a] > 0) e[a].template load<false>(p.in + first * eb, n[a]);
  }
}

// Encodes the tiles `sched` hands out. The scheduler (a per-thread object):
//   uint64_t ticket()   thread 0: the next tile to encode (>= numTiles: none left)
//   uint64_t prefix(tile, tileEscapes, lane)   warp 0: escapes of all tiles before `tile`
//   void last(total)    lane 0 of warp 0 after the frame's last tile: its total escapes
// Ends with a block barrier: every byte the block wrote is then visible to the whole block.
template <int kType, bool kAligned, class Sched>
__device__ __forceinline__ void encodeTiles(const TileParams& p, uint64_t numTiles, Sched& sched) {
  using E = ThreadElems<kType>;
  constexpr TypeTraits T = E::T;
  constexpr uint32_t kSteps = kEncodeSteps;
  // Steps loaded ahead of use, as many as fit aheadWords() registers (at least one). The next
  // tile's first loads are issued before this tile's scan and placement, so memory stays
  // busy while the block waits at its barriers.
  constexpr uint32_t kAheadSteps = aheadWords<kType>() / E::kInWords;
  constexpr uint32_t kAhead = kAheadSteps >= kSteps ? kSteps : kAheadSteps < 1 ? 1 : kAheadSteps;
  __shared__ uint8_t sCode[256];
  __shared__ unsigned long long sWarp[kEncodeWarps], sWarpExcl[kEncodeWarps];
  __shared__ uint64_t sPrefix, sStepBase[kSteps];
  __shared__ uint64_t sTile;
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const FrameLayout& l = p.l;
  for (uint32_t i = tid; i < 256; i += kEncodeThreads) sCode[i] = kDeviceEscape;
  if (tid == 0) sTile = sched.ticket();
  __syncthreads();
  if (tid < kCodebookSize) sCode[p.codebook[tid]] = uint8_t(tid);
  uint64_t tile = sTile;
  E e[kAhead];
  uint32_t n[kAhead];
  if (tile < numTiles) loadSteps<kType, kAligned, kAhead>(p, tile, 0, e, n);
  __syncthreads();

  while (tile < numTiles) {
    uint64_t nextTicket = 0;
    if (tid == 0) nextTicket = sched.ticket();  // its latency hides behind this tile
    const uint64_t tileBase = tile * kGroupElems;
    uint32_t mask[kSteps];
    unsigned long long packed = 0;  // escapes of each step in a 16-bit field
#pragma unroll
    for (uint32_t s0 = 0; s0 < kSteps; s0 += kAhead) {
      if (s0 > 0) loadSteps<kType, kAligned, kAhead>(p, tile, s0, e, n);
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        const uint32_t s = s0 + a;
        mask[s] = 0;
        if (n[a] == 0) continue;
        uint64_t first = tileBase + s * kEncodeStepElems + tid * kThreadElems;
        SmPack<kType> sm;
        uint64_t codes;
        if (encodeSixteen<kType>(e[a], n[a], sCode, sm, codes) & kDeviceEscape)
          mask[s] = escapeMask<kType>(e[a], n[a], sCode);
        uint8_t* smDst = p.out + l.smOff + first * T.smBits / 8;
        uint8_t* codeDst = p.out + l.codeOff + first / 2;
        if (n[a] == kThreadElems) {
          sm.template store<kAligned>(smDst, n[a]);
          storeCodes<kAligned>(codeDst, codes, n[a]);
        } else {
          sm.template store<false>(smDst, n[a]);
          storeCodes<false>(codeDst, codes, n[a]);
        }
        packed |= (unsigned long long)__popc(mask[s]) << (16 * s);
      }
    }

    // Block-wide exclusive scan of the packed counts, in element order (step, thread).
    unsigned long long incl = packed;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
      unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
      if (int(lane) >= off) incl += t;
    }
    if (lane == 31) sWarp[warp] = incl;
    if (tid == 0) sTile = nextTicket;
    __syncthreads();
    const uint64_t nextTile = sTile;
    if (nextTile < numTiles) loadSteps<kType, kAligned, kAhead>(p, nextTile, 0, e, n);
    if (warp == 0) {
      unsigned long long v = lane < kEncodeWarps ? sWarp[lane] : 0, wIncl = v;
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, wIncl, off);
        if (int(lane) >= off) wIncl += t;
      }
      if (lane < kEncodeWarps) sWarpExcl[lane] = wIncl - v;
      unsigned long long total = __shfl_sync(0xFFFFFFFFu, wIncl, kEncodeWarps - 1);
      // Chunk (s, j) of the tile is warps 2j and 2j+1 of step s; lane = 8s + j.
      uint32_t s = lane / 8, j = lane % 8;
      uint64_t chunk = tile * kChunksPerGroup + lane;
      if (chunk < l.numChunks) {
        uint32_t c = uint32_t((sWarp[2 * j] >> (16 * s)) & 0xFFFF) + uint32_t((sWarp[2 * j + 1] >> (16 * s)) & 0xFFFF);
        storeLe16(p.out + l.countsOff + 2 * chunk, uint16_t(c));
      }
      uint64_t tileTotal = 0;
#pragma unroll
      for (uint32_t t = 0; t < kSteps; ++t) {
        if (lane == 0) sStepBase[t] = tileTotal;
        tileTotal += (total >> (16 * t)) & 0xFFFF;
      }
      uint64_t prefix = sched.prefix(tile, tileTotal, lane);
      if (lane == 0) {
        sPrefix = prefix;
        storeLe64(p.out + l.indexOff + 8 * tile, prefix);
        if (tile == numTiles - 1) sched.last(prefix + tileTotal);
      }
    }
    __syncthreads();

    unsigned long long excl = sWarpExcl[warp] + incl - packed;
#pragma unroll
    for (uint32_t s = 0; s < kSteps; ++s) {
      if (mask[s] == 0) continue;
      uint64_t idx = sPrefix + sStepBase[s] + ((excl >> (16 * s)) & 0xFFFF);
      const uint32_t posBase = (tid % (kChunkElems / kThreadElems)) * kThreadElems;
      const uint8_t* src = p.in + (tileBase + s * kEncodeStepElems + tid * kThreadElems) * T.elemBytes;
      for (uint32_t m = mask[s]; m != 0 && idx < p.budget; m &= m - 1, ++idx) {
        // Past the budget the frame goes raw: escapes there are never written.
        uint32_t k = __ffs(m) - 1, w = 0;
        for (uint32_t b = 0; b < T.elemBytes; ++b) w |= uint32_t(src[k * T.elemBytes + b]) << (8 * b);
        uint8_t* rec = p.out + l.escOff + idx * kEscapeBytes;
        rec[0] = uint8_t(posBase + k);
        rec[1] = uint8_t((posBase + k) >> 8);
        rec[2] = uint8_t(T.exponent(w));
      }
    }
    __syncthreads();  // the scan arrays and sTile are reused by the next tile
    tile = nextTile;
  }
}

// What finishing a frame needs beyond the tile loop's output.
struct FrameFinish {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  int type;
  uint64_t budget;
  bool forceRaw;  // the frame is raw whatever the escapes (type, size)
  const uint8_t* codebook;
  int used;
};

// Writes the header of a frame holding `escapes` escapes (thread `gtid` 0 of the threads
// taking part), or, when the frame must be raw, copies the input behind a raw header (all
// `stride` threads). Returns the frame size. kVersion2: a compressed frame is format version 2
// (FP16, E4M3; l.codeBits wide codes: a 3-bit codebook's entries 8..15 go out as 0); otherwise
// version 1.
template <bool kAligned, bool kVersion2 = false>
__device__ __forceinline__ uint64_t finishFrame(const FrameFinish& p, uint64_t escapes, uint64_t gtid,
                                                uint64_t stride) {
  const FrameLayout& l = p.l;
  bool raw = p.forceRaw || escapes > p.budget;
  FrameHeader h{};
  h.version = kFrameVersion;
  h.chunkElems = kChunkElems;
  h.type = uint8_t(p.type);
  h.count = l.count;
  if (!raw) {
    h.escapeBytes = escapes * kEscapeBytes;
    if (gtid != 0) return l.escOff + h.escapeBytes;
    h.codebookUsed = uint8_t(p.used);
    if constexpr (kVersion2) {
      h.version = kFrameVersion2;
      h.codeBits = uint8_t(l.codeBits);
      for (uint32_t i = 0; i < kCodebookSize; ++i) h.codebook[i] = i < (1u << l.codeBits) ? p.codebook[i] : 0;
    } else {
      for (uint32_t i = 0; i < kCodebookSize; ++i) h.codebook[i] = p.codebook[i];
    }
    h.escapeCount = escapes;
    h.smBytes = l.smBytes;
    h.codeBytes = l.codeBytes;
    h.indexBytes = l.indexBytes;
    writeHeader(h, p.out);
    for (uint64_t b = l.smOff + l.smBytes; b < l.codeOff; ++b) p.out[b] = 0;
    for (uint64_t b = l.codeOff + l.codeBytes; b < l.indexOff; ++b) p.out[b] = 0;
    for (uint64_t b = l.indexOff + l.indexBytes; b < l.escOff; ++b) p.out[b] = 0;
    return l.escOff + h.escapeBytes;
  }
  uint8_t* dst = p.out + kHeaderBytes;
  if (kAligned) {
    for (uint64_t i = gtid; i < l.rawBytes / 16; i += stride)
      __stcs(reinterpret_cast<uint4*>(dst) + i, __ldcs(reinterpret_cast<const uint4*>(p.in) + i));
    for (uint64_t b = l.rawBytes / 16 * 16 + gtid; b < l.rawBytes; b += stride) dst[b] = p.in[b];
  } else {
    for (uint64_t b = gtid; b < l.rawBytes; b += stride) dst[b] = p.in[b];
  }
  if (gtid == 0) {
    h.flags = kFlagRaw;
    writeHeader(h, p.out);
  }
  return kHeaderBytes + l.rawBytes;
}

}  // namespace sz
