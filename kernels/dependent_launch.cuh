// Programmatic dependent launch (PDL, sm_90 and later): a kernel launched as a dependent of the
// kernel before it on its stream may start while that one still runs; it waits for the
// primary's writes only where it needs them. Used by szDecodeAsync (the decoder after its status
// reset) and szEncodeAsync (the place kernel after the chunk kernel). On older architectures
// the device calls are no-ops and the launch is ordinary stream order.
#pragma once

#include <cuda_runtime.h>

namespace sz {

// Device: wait until the primary grid has finished and its writes are visible (returns at once
// in a grid launched the ordinary way).
__device__ __forceinline__ void waitForPrimary() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Device: a dependent launched after this grid may start now.
__device__ __forceinline__ void releaseDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// Host: launches kernel<<<grid, block, 0, stream>>>(args...), as a programmatic dependent of
// the stream's previous kernel when `dependent` is set.
template <class... Params, class... Args>
cudaError_t launchMaybeDependent(bool dependent, dim3 grid, dim3 block, cudaStream_t stream,
                                 void (*kernel)(Params...), Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = dependent;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args&&>(args)...);
}

}  // namespace sz
