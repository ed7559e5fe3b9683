// CUDA errors enter SplitZip's one error path here: CUDACHECK maps them to szUnhandledCudaError
// with the CUDA error string as the thread's last message.
#pragma once

#include <cuda_runtime.h>

#include "base/checks.h"

#define CUDACHECK(call)                                                                  \
  do {                                                                                   \
    cudaError_t sz_cuda_err_ = (call);                                                   \
    if (sz_cuda_err_ != cudaSuccess)                                                     \
      return szSetError(szUnhandledCudaError, "%s:%d CUDA error %d '%s' in %s", __FILE__, \
                        __LINE__, (int)sz_cuda_err_, cudaGetErrorString(sz_cuda_err_), #call); \
  } while (0)
