// Helpers of the GPU tests: a skip-with-message when no GPU is present, CUDA checks, device
// buffers, host-side encode through the CPU codec for comparison, and szEncodeAsync /
// szDecodeAsync round trips checked against it.
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

// Rank r's GPU among those present: two ranks as threads share one where there is one.
inline void setRankDevice(int r) {
  int devices = 0;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(devices > 0 ? r % devices : 0);
}

// A communicator's configuration on the ipc wire with the codec on and codebook mode `mode`
// (`codebook`: SZ_CODEBOOK_FIXED's).
inline szConfig_t ipcCodecConfig(int mode, const szCodebook_t* codebook = nullptr) {
  szConfig_t cfg = SZ_CONFIG_INITIALIZER;
  cfg.wire = "ipc";
  cfg.codec = SZ_CODEC_ON;
  cfg.codebookMode = mode;
  cfg.codebook = codebook;
  return cfg;
}

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

// The raw frame of `count` elements (docs/FORMAT.md: version 1, flag RAW, the input verbatim).
inline std::vector<uint8_t> rawFrame(const void* data, size_t count, szDataType_t type) {
  std::vector<uint8_t> f(SZ_FRAME_HEADER_BYTES, 0);
  const uint8_t head[] = {'S', 'Z', 'I', 'P', 1, 0, 1, 0, uint8_t(type), 0, 0, 0, 0, 4, 0, 0};  // chunk 1024
  memcpy(f.data(), head, sizeof(head));
  for (int i = 0; i < 8; ++i) f[16 + i] = uint8_t(uint64_t(count) >> (8 * i));
  const uint8_t* p = static_cast<const uint8_t*>(data);
  f.insert(f.end(), p, p + count * szTypeSize(type));
  return f;
}

// The frame the GPU encoder must write: szEncode's, except for FP16 and FP8 E4M3, which the
// CPU codec compresses (format version 2) and the GPU codec stores raw.
inline std::vector<uint8_t> cpuEncode(const void* data, size_t count, szDataType_t type,
                                      const szCodebook_t* cb, int flags = 0) {
  size_t max = 0, bytes = 0;
  szEncodeMaxSize(count, type, &max);
  std::vector<uint8_t> f(max);
  if (szEncode(data, count, type, cb, flags, f.data(), f.size(), &bytes) != szSuccess) return {};
  f.resize(bytes);
  return f;
}

// The first byte at which `a` and `b` differ (the shorter's size if one is a prefix of the other).
inline size_t firstDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

struct GpuResult {
  std::vector<uint8_t> frame;
  bool guardOk = false;
};

// Encodes on the GPU with the given pointer misalignments; returns the frame.
inline GpuResult gpuEncode(const void* host, size_t count, szDataType_t type, const szCodebook_t* cb,
                           int flags = 0, size_t inMis = 0, size_t outMis = 0) {
  GpuResult r;
  size_t raw = count * szTypeSize(type), max = 0, temp = 0;
  EXPECT_EQ(szEncodeMaxSize(count, type, &max), szSuccess);
  EXPECT_EQ(szEncodeTempSize(count, type, &temp), szSuccess);
  DeviceBuffer in(raw, inMis), out(max, outMis), tmp(temp);
  uint64_t* bytes = nullptr;
  EXPECT_EQ(cudaMalloc(&bytes, sizeof(uint64_t)), cudaSuccess);
  cudaMemcpy(in.ptr(), host, raw, cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
  szResult_t res = szEncodeAsync(in.ptr(), count, type, cb, flags, out.ptr(), max, bytes,
                                 tmp.ptr(), temp, s);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  uint64_t n = 0;
  cudaMemcpy(&n, bytes, sizeof(n), cudaMemcpyDeviceToHost);
  EXPECT_LE(n, max);
  r.frame = out.download(n);
  r.guardOk = out.guardIntact(n);
  cudaFree(bytes);
  cudaStreamDestroy(s);
  return r;
}

// Decodes `frame` on the GPU into a poisoned buffer of `capacity` bytes; returns status.
inline int gpuDecode(const std::vector<uint8_t>& frame, size_t capacity, std::vector<uint8_t>* out,
                     bool* guardOk, size_t frameMis = 0, size_t outMis = 0, size_t frameBytes = SIZE_MAX) {
  DeviceBuffer f(frame.size(), frameMis), o(capacity, outMis);
  cudaMemcpy(f.ptr(), frame.data(), frame.size(), cudaMemcpyHostToDevice);
  int* status = nullptr;
  cudaHostAlloc(&status, sizeof(int), cudaHostAllocMapped);
  *status = -1;
  szResult_t res = szDecodeAsync(f.ptr(), frameBytes == SIZE_MAX ? frame.size() : frameBytes,
                                 o.ptr(), capacity, status, nullptr);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int st = *status;
  cudaFreeHost(status);
  *out = o.download(capacity);
  *guardOk = o.guardIntact(capacity);
  return st;
}

// szEncodeAsync's frame of `data` (input and frame offset by inMis / outMis bytes from a
// cudaMalloc'd base) is szEncode's byte for byte, and szDecodeAsync restores every input byte.
inline void expectSame(const void* data, size_t count, szDataType_t type, const szCodebook_t* cb,
                       int flags = 0, size_t inMis = 0, size_t outMis = 0) {
  auto cpu = cpuEncode(data, count, type, cb, flags);
  ASSERT_FALSE(cpu.empty()) << szGetLastError(nullptr);
  auto gpu = gpuEncode(data, count, type, cb, flags, inMis, outMis);
  ASSERT_EQ(gpu.frame.size(), cpu.size()) << "count " << count;
  ASSERT_TRUE(gpu.frame == cpu) << "GPU frame differs from CPU frame, count " << count << ", first at byte "
                                << firstDiff(gpu.frame, cpu);
  ASSERT_TRUE(gpu.guardOk) << "GPU encoder wrote past its frame";
  size_t raw = count * szTypeSize(type);
  std::vector<uint8_t> out;
  bool guard = false;
  ASSERT_EQ(gpuDecode(cpu, raw, &out, &guard, outMis, inMis), szSuccess);
  ASSERT_TRUE(guard) << "GPU decoder wrote past its output";
  ASSERT_EQ(memcmp(out.data(), data, raw), 0) << "GPU decode not bit-exact, count " << count;
}

}  // namespace sztest
