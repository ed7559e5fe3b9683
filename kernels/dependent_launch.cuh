// Programmatic dependent launch (PDL, sm_90 and later): a kernel launched as a dependent of the
// kernel before it on its stream may start while that one still runs; it waits for the
// primary's writes only where it needs them. Used by szDecodeAsync (the decoder after its status
// reset), szEncodeAsync (the place kernel after the chunk kernel) and szDecodeBatchAsync (its
// FP16/E4M3 kernel beside the other). Kernels compiled for older architectures have no device
// calls (they are no-ops there), so they are launched in ordinary stream order, also where a
// newer GPU runs them from JIT-compiled PTX (dependentLaunchOk).
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <utility>
#include <vector>

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

// Host: whether `kernel`, as the current device runs it, was compiled from PTX of sm_90 or
// later, so that its waitForPrimary and releaseDependents exist. A build for older GPUs
// (GPU_ARCH=80, or native on an Ampere host) runs on a Hopper from JIT-compiled compute_80 PTX
// without them: launched as a dependent, its "ends after the primary" and "reports after the
// reset" would silently not hold. Asked once per device and kernel.
inline bool dependentLaunchOk(const void* kernel) {
  static std::mutex mu;
  static std::vector<std::pair<std::pair<int, const void*>, bool>> known;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return false;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& k : known)
    if (k.first.first == device && k.first.second == kernel) return k.second;
  cudaFuncAttributes a{};
  const bool ok = cudaFuncGetAttributes(&a, kernel) == cudaSuccess && a.ptxVersion >= 90;
  known.push_back({{device, kernel}, ok});
  return ok;
}

// Host: launches kernel<<<grid, block, 0, stream>>>(args...), as a programmatic dependent of
// the stream's previous kernel when `dependent` is set and the kernel's code has the device
// calls (dependentLaunchOk).
template <class... Params, class... Args>
cudaError_t launchMaybeDependent(bool dependent, dim3 grid, dim3 block, cudaStream_t stream,
                                 void (*kernel)(Params...), Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed =
      dependent && dependentLaunchOk(reinterpret_cast<const void*>(kernel));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args&&>(args)...);
}

}  // namespace sz
