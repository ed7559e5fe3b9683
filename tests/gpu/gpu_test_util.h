// Helpers of the GPU tests: a skip-with-message when no GPU is present, CUDA checks, device
// buffers, and host-side encode/decode through the CPU codec for comparison.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "splitzip.h"

#define CUDA_ASSERT(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(call)

namespace sztest {

inline bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define SKIP_WITHOUT_GPU()                                                   \
  do {                                                                       \
    if (!sztest::haveGpu()) {                                                \
      GTEST_SKIP() << "no CUDA GPU on this machine: GPU test skipped";       \
    }                                                                        \
  } while (0)

// A device allocation with `pad` poisoned guard bytes after the user's `bytes`.
struct DeviceBuffer {
  uint8_t* base = nullptr;
  size_t bytes = 0, offset = 0, pad = 0;
  DeviceBuffer(size_t n, size_t misalign = 0, size_t guard = 64) : bytes(n), offset(misalign), pad(guard) {
    if (cudaMalloc(&base, n + misalign + guard) != cudaSuccess) base = nullptr;
    else cudaMemset(base, 0xA5, n + misalign + guard);
  }
  ~DeviceBuffer() { cudaFree(base); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* ptr() const { return base + offset; }
  std::vector<uint8_t> download(size_t n) const {
    std::vector<uint8_t> h(n);
    cudaMemcpy(h.data(), ptr(), n, cudaMemcpyDeviceToHost);
    return h;
  }
  // True if the `pad` guard bytes after `used` bytes still hold the poison.
  bool guardIntact(size_t used) const {
    std::vector<uint8_t> g(bytes - used + pad);
    cudaMemcpy(g.data(), ptr() + used, g.size(), cudaMemcpyDeviceToHost);
    for (uint8_t b : g)
      if (b != 0xA5) return false;
    return true;
  }
};

inline std::vector<uint8_t> cpuEncode(const void* data, size_t count, szDataType_t type,
                                      const szCodebook_t* cb, int flags = 0) {
  size_t max = 0, bytes = 0;
  szEncodeMaxSize(count, type, &max);
  std::vector<uint8_t> f(max);
  if (szEncode(data, count, type, cb, flags, f.data(), f.size(), &bytes) != szSuccess) return {};
  f.resize(bytes);
  return f;
}

}  // namespace sztest
