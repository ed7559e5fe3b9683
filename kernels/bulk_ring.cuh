// A warp's ring of shared-memory stages filled by bulk asynchronous copies: cp.async.bulk from
// global memory, the 1-D form of the Hopper TMA (no tensor map), one mbarrier per stage. Lane 0
// arms a stage's barrier with the bytes it expects and issues the copies; all lanes wait for the
// stage's phase, read it into registers, fence and meet at __syncwarp; then lane 0 refills the
// stage with the item kStages ahead. A warp so keeps kStages items' loads in flight without
// holding them in registers (the grid codec at 64 registers holds one chunk: codec_notes.md v4,
// v5).
// The grid encoder streams aligned BF16 whole chunks through it (kernels/encode.cu): 3 stages of
// 2 KiB a warp at 4 blocks per SM, 1998-2021 GB/s against 1928-1951 with one chunk ahead in
// registers at 2 blocks; the decoder and E5M2 measured slower with it (codec_notes.md, v6).
// The PTX memory model asks for release's proxy fence between the lanes' reads of a stage
// (generic proxy) and the refill's writes (async proxy).
// Bulk copies need a 16-byte aligned source and destination and a multiple of 16 bytes: the
// callers stage only whole chunks of 16-byte aligned buffers. sm_90 and later: device passes for
// older architectures compile the register paths (SZ_BULK_DEVICE 0).
#pragma once

#include <cstdint>

// The host pass counts as able: it sizes launches for the sm_90 code.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define SZ_BULK_DEVICE 0
#else
#define SZ_BULK_DEVICE 1
#endif

namespace sz {

constexpr uint32_t kRingBytes = 6144;  // a warp's stages
constexpr uint32_t kRingMaxStages = 8;
// A warp's part of its block's dynamic shared memory: its barriers, then its stages.
constexpr uint32_t kRingWarpBytes = 8 * kRingMaxStages + kRingBytes;
static_assert(kRingBytes % 16 == 0, "stages start 16-byte aligned");

// Dynamic shared memory of a block of `warps` ring warps.
__host__ __device__ constexpr uint32_t ringSharedBytes(uint32_t warps) { return warps * kRingWarpBytes; }

// Blocks of `warps` ring warps, with at most `staticBytes` of shared memory of their own, that
// fit the 228 KiB of an sm_90 / sm_100 multiprocessor (1 KiB of it reserved per block); at most
// `most`. The launcher asks for the largest shared-memory carveout (allowKernelShared).
__host__ __device__ constexpr uint32_t ringBlocksPerSm(uint32_t most, uint32_t warps, uint32_t staticBytes) {
  const uint32_t fit = (228u << 10) / (ringSharedBytes(warps) + staticBytes + 1024);
  return fit < most ? fit : most;
}

// The stages a type's items of `itemBytes` get from kRingBytes.
__host__ __device__ constexpr uint32_t ringStages(uint32_t itemBytes) {
  return kRingBytes / itemBytes < kRingMaxStages ? kRingBytes / itemBytes : kRingMaxStages;
}

// The calling warp's part of the block's dynamic shared memory (warp order).
__device__ __forceinline__ uint8_t* warpRingSpace() {
  extern __shared__ __align__(16) uint8_t szRingShared[];
  return szRingShared + (threadIdx.x / 32) * kRingWarpBytes;
}

// One warp's ring at `space` (warpRingSpace): kStages stages of kStageBytes, stage s holding the
// warp's items s, s + kStages, ... Every lane keeps the same `stage` and `phase`: the stage of
// the item it consumes next and that stage's phase parity (it flips each time the ring wraps).
// Warp-synchronous; every issued item must be waited for before the warp exits: a copy must not
// land in shared memory that a later block owns.
template <uint32_t kStages, uint32_t kStageBytes>
struct BulkRing {
  static_assert(kStages >= 2 && kStages <= kRingMaxStages, "a ring of 2 to 8 stages");
  static_assert(kStageBytes % 16 == 0 && kStages * kStageBytes <= kRingBytes, "whole 16-byte stages in the ring");
  static constexpr uint32_t kNumStages = kStages;
  uint32_t bars, data;  // shared-window addresses of barrier 0 and stage 0
  const uint8_t* base;  // stage 0, for the lanes' reads
  uint32_t stage = 0, phase = 0;

  // Lane 0 initializes the barriers (one arrival a phase: its arm); the fences make them visible
  // to the other lanes and to the copies' completions (the async proxy).
  __device__ __forceinline__ BulkRing(uint8_t* space, uint32_t lane)
      : bars(uint32_t(__cvta_generic_to_shared(space))),
        data(bars + 8 * kRingMaxStages),
        base(space + 8 * kRingMaxStages) {
#if SZ_BULK_DEVICE
    if (lane == 0) {
#pragma unroll
      for (uint32_t s = 0; s < kStages; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bars + 8 * s) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
#endif
    __syncwarp();
  }

  // Lane 0: stage s's next phase completes when `bytes` have landed in it.
  __device__ __forceinline__ void arm(uint32_t s, uint32_t bytes) const {
#if SZ_BULK_DEVICE
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bars + 8 * s), "r"(bytes) : "memory");
#endif
  }

  // Lane 0: copies `bytes` from global `src` into stage s, counted on its barrier.
  __device__ __forceinline__ void copy(uint32_t s, const void* src, uint32_t bytes) const {
#if SZ_BULK_DEVICE
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(data + s * kStageBytes), "l"(__cvta_generic_to_global(src)), "r"(bytes),
                 "r"(bars + 8 * s)
                 : "memory");
#endif
  }

  // All lanes: until the current stage's item has landed (acquire: its bytes are visible).
  __device__ __forceinline__ void wait() const {
#if SZ_BULK_DEVICE
    uint32_t done;
    do {
      asm volatile(
          "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.b32 %0, 1, 0, p;\n\t}"
          : "=r"(done)
          : "r"(bars + 8 * stage), "r"(phase)
          : "memory");
    } while (!done);
#endif
  }

  __device__ __forceinline__ const uint8_t* current() const { return base + stage * kStageBytes; }

  // All lanes, after reading the current stage: their reads (generic proxy) are ordered before the
  // refill's writes (async proxy), and lane 0 may then refill it.
  __device__ __forceinline__ void release() const {
#if SZ_BULK_DEVICE
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    __syncwarp();
  }

  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

}  // namespace sz
