// Zeroing and writing device memory at init or connect without waiting for anyone else's work. A legacy-stream
// cudaMemset waits for every blocking stream of the context, and cudaDeviceSynchronize for every
// stream: with two ranks as threads on one GPU, a rank still in init would wait for the other
// rank's send kernel, which waits for this rank's receive (a stall until the sender's timeout,
// SlotIpc.OneWayEveryTypeIsBitExact on one H200). A private non-blocking stream waits for nothing.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda_check.h"

namespace sz {

// Zeroes `bytes` at device pointer `p`; returns once they are zero. Errors: szUnhandledCudaError.
inline szResult_t zeroDeviceMemory(void* p, size_t bytes) {
  cudaStream_t s = nullptr;
  CUDACHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaError_t e = cudaMemsetAsync(p, 0, bytes, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  CUDACHECK(e);
  return szSuccess;
}

// Copies `bytes` from host memory `src` to device pointer `dst`; returns once they are there.
// Errors: szUnhandledCudaError.
inline szResult_t copyToDeviceMemory(void* dst, const void* src, size_t bytes) {
  cudaStream_t s = nullptr;
  CUDACHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  CUDACHECK(e);
  return szSuccess;
}

}  // namespace sz
