// Relaxes this thread's CUDA stream-capture mode for a scope, as NCCL does around its own CUDA
// calls: a group called while this thread or another captures a stream in
// cudaStreamCaptureModeGlobal may then allocate memory, query events and connect peers without
// invalidating that capture (the calls that would are refused only in global and thread-local
// modes).
#pragma once

#include <cuda_runtime.h>

namespace sz {

class CaptureModeRelaxed {
 public:
  CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  CaptureModeRelaxed(const CaptureModeRelaxed&) = delete;
  CaptureModeRelaxed& operator=(const CaptureModeRelaxed&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace sz
