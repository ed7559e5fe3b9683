// One block copies one contiguous piece (the slot kernels' raw slices and buffer-list pieces;
// perf/copy_perf.cu measures it standalone against cudaMemcpyAsync). All kThreads threads of
// the block take part; nothing is synchronized: the caller orders the bytes with its barrier.
#pragma once

#include <cstdint>

namespace sz {

// Four 16-byte loads in flight per thread: one block alone must keep enough bytes moving to
// approach its share of the memory bandwidth (a slice is one block's work). Eight measured
// slower on H200 (raw 1 GiB 404 against 421 GB/s). Plain loads and stores: standalone
// (perf/copy_perf.cu, 4 x 1 GiB in 256 KiB pieces) they reach 0.949 of cudaMemcpyAsync where
// streaming loads with L2-only stores (__ldcs/__stcg) reached 0.917, software pipelining the
// next four loads 0.917 and TMA bulk copies through shared memory 0.930 (2026-12-01, H200).
constexpr uint32_t kCopyUnroll = 4;

template <uint32_t kThreads>
__device__ __forceinline__ void blockCopy(uint8_t* dst, const uint8_t* src, uint64_t n) {
  const uint32_t tid = threadIdx.x;
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
    const uint64_t nvec = n / 16;
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (uint64_t base = tid; base < nvec; base += kCopyUnroll * kThreads) {
      uint4 v[kCopyUnroll];
#pragma unroll
      for (uint32_t u = 0; u < kCopyUnroll; ++u)
        if (base + u * kThreads < nvec) v[u] = s[base + u * kThreads];
#pragma unroll
      for (uint32_t u = 0; u < kCopyUnroll; ++u)
        if (base + u * kThreads < nvec) d[base + u * kThreads] = v[u];
    }
    for (uint64_t b = nvec * 16 + tid; b < n; b += kThreads) dst[b] = src[b];
  } else {
    for (uint64_t b = tid; b < n; b += kThreads) dst[b] = src[b];
  }
}

}  // namespace sz
