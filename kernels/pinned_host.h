// Pinned host memory that the GPU maps, allocated without waiting for the GPU's running work.
//
// cudaHostAlloc is one of CUDA's implicit synchronizations: it returns only once the device's
// running kernels finish. A pair's slot rings are made at its first operation (lazy
// connections), when another rank of this process may already be running a receive kernel on
// the same GPU that waits for this very rank's send: the allocation then waits for the kernel
// and the kernel for the allocation (Wires/CommGpuWire.CopyQueuedBehindAHeldReceive/tcp timed out
// on one H100 at 5006098). The driver's virtual memory calls (cuMemCreate on a host NUMA node,
// cuMemMap, cuMemSetAccess) make the same kind of memory without that wait, as NCCL does for its
// host buffers. Where they are missing or fail (a driver before CUDA 12.2, a container that
// refuses NUMA binding), or SZ_CUMEM_HOST=0 (as NCCL_CUMEM_HOST_ENABLE=0, for drivers whose
// host-NUMA cuMemCreate misbehaves), it falls back to cudaHostAlloc and says so at INFO.
//
// Unlike cudaHostAllocPortable memory, a mapping is reached only by the device current at its
// allocation (the communicator's), and it is rounded up to the driver's granularity: for rings,
// not for small words. Freeing does not wait for kernels: free only what no kernel still uses.
#pragma once

#include <cstddef>

#include "splitzip.h"

namespace sz {

// Allocates at least `bytes` of zeroed pinned host memory that the current device reads and
// writes (at pinnedDeviceAddress: the host's own address for a mapping). Errors:
// szUnhandledCudaError.
szResult_t allocPinnedHost(size_t bytes, void** host);

// The address at which the current device reaches `host` (any address inside memory from
// allocPinnedHost), or nullptr.
void* pinnedDeviceAddress(void* host);

// Frees memory from allocPinnedHost (nullptr: nothing).
void freePinnedHost(void* host);

}  // namespace sz
