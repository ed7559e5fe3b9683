// Pinned host memory that the GPU maps, allocated without waiting for the GPU's running work.
//
// cudaHostAlloc is one of CUDA's implicit synchronizations: it returns only once the device's
// running kernels finish. A pair's slot rings are made at its first operation (lazy
// connections), when another rank of this process may already be running a receive kernel on
// the same GPU that waits for this very rank's send: the allocation then waits for the kernel
// and the kernel for the allocation (Wires/CommGpuWire.CopyQueuedBehindAHeldReceive/tcp timed out
// on one H100 at 5006098). The driver's virtual memory calls (cuMemCreate on a host NUMA node,
// cuMemMap, cuMemSetAccess) make the same kind of memory without that wait, as NCCL does for its
// host buffers. Where they are missing (a driver before CUDA 12.2, or a container that refuses
// NUMA binding) it falls back to cudaHostAlloc and says so once.
#pragma once

#include <cstddef>

#include "splitzip.h"

namespace sz {

// Allocates at least `bytes` of zeroed pinned host memory that the current device reads and
// writes at the same address as the host (pinnedDeviceAddress). Errors: szUnhandledCudaError.
szResult_t allocPinnedHost(size_t bytes, void** host);

// The address at which the current device reaches `host` (any address inside memory from
// allocPinnedHost), or nullptr.
void* pinnedDeviceAddress(void* host);

// Frees memory from allocPinnedHost (nullptr: nothing).
void freePinnedHost(void* host);

}  // namespace sz
