// Pinned host memory without an implicit synchronization (kernels/pinned_host.h).
#include "kernels/pinned_host.h"

#if SZ_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>

#include "base/debug.h"
#include "kernels/cuda_check.h"

namespace {

// The driver's virtual memory calls, found at run time (the library links the runtime only).
struct Vmm {
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) addressFree = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) setAccess = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemRetainAllocationHandle) retain = nullptr;
  decltype(&cuMemGetAddressRange) range = nullptr;
  bool usable = false;
};

template <class F>
bool entry(const char* name, F* f) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12020, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || p == nullptr) {
    cudaGetLastError();
    return false;
  }
  *f = reinterpret_cast<F>(p);
  return true;
}

const Vmm& vmm() {
  static const Vmm v = [] {
    Vmm r;
    r.usable = entry("cuMemCreate", &r.create) && entry("cuMemRelease", &r.release) &&
               entry("cuMemAddressReserve", &r.reserve) && entry("cuMemAddressFree", &r.addressFree) &&
               entry("cuMemMap", &r.map) && entry("cuMemUnmap", &r.unmap) && entry("cuMemSetAccess", &r.setAccess) &&
               entry("cuMemGetAllocationGranularity", &r.granularity) &&
               entry("cuMemRetainAllocationHandle", &r.retain) && entry("cuMemGetAddressRange", &r.range);
    return r;
  }();
  return v;
}

// Maps `bytes` of a host NUMA node's memory for the current device and the host; false (nothing
// left allocated) where any step is refused.
bool vmmAlloc(size_t bytes, void** host) {
  const Vmm& v = vmm();
  int device = -1, numa = -1;
  if (!v.usable || cudaGetDevice(&device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, device) != cudaSuccess || numa < 0) {
    cudaGetLastError();
    numa = 0;  // one NUMA node, or a driver that does not say
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  prop.location.id = numa;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  size_t grain = 0;
  if (v.granularity(&grain, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || grain == 0) return false;
  const size_t size = (bytes + grain - 1) / grain * grain;
  CUmemGenericAllocationHandle handle{};
  if (v.create(&handle, size, &prop, 0) != CUDA_SUCCESS) return false;
  CUdeviceptr va = 0;
  if (v.reserve(&va, size, grain, 0, 0) != CUDA_SUCCESS) {
    v.release(handle);
    return false;
  }
  bool ok = v.map(va, size, 0, handle, 0) == CUDA_SUCCESS;
  v.release(handle);  // the mapping holds the memory from here on; unmapping frees it
  CUmemAccessDesc access[2]{};
  access[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access[0].location.id = device;
  access[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  access[1].location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  access[1].location.id = numa;
  access[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (ok) ok = v.setAccess(va, size, &access[0], 1) == CUDA_SUCCESS && v.setAccess(va, size, &access[1], 1) == CUDA_SUCCESS;
  if (!ok) {
    v.unmap(va, size);
    v.addressFree(va, size);
    return false;
  }
  *host = reinterpret_cast<void*>(va);
  return true;
}

// Whether `p` lies in a range mapped by the driver's virtual memory calls (any address in it).
bool vmmMapped(void* p) {
  const Vmm& v = vmm();
  CUmemGenericAllocationHandle h{};
  if (!v.usable || v.retain(&h, p) != CUDA_SUCCESS) {
    cudaGetLastError();
    return false;
  }
  v.release(h);
  return true;
}

}  // namespace

namespace sz {

szResult_t allocPinnedHost(size_t bytes, void** host) {
  *host = nullptr;
  if (!vmmAlloc(bytes, host)) {
    cudaGetLastError();
    static std::once_flag said;
    std::call_once(said, [] {
      INFO(SZ_INIT, "pinned host memory: the driver's virtual memory calls are unavailable here; cudaHostAlloc "
                    "instead, which waits for this process's running kernels on the device (a pair's first "
                    "operation then waits for them; SZ_RUNTIME_CONNECT=0 connects every pair at init)");
    });
    CUDACHECK(cudaHostAlloc(host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  }
  memset(*host, 0, bytes);
  return szSuccess;
}

void* pinnedDeviceAddress(void* host) {
  if (host == nullptr) return nullptr;
  if (vmmMapped(host)) return host;  // one address for the host and the device
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, host, 0) == cudaSuccess) return d;
  cudaGetLastError();
  return nullptr;
}

void freePinnedHost(void* host) {
  size_t size = 0;
  CUdeviceptr base = 0;
  if (host == nullptr) return;
  if (vmmMapped(host) && vmm().range(&base, &size, CUdeviceptr(host)) == CUDA_SUCCESS && base == CUdeviceptr(host)) {
    vmm().unmap(CUdeviceptr(host), size);
    vmm().addressFree(CUdeviceptr(host), size);
  } else {
    cudaFreeHost(host);
  }
  cudaGetLastError();
}

}  // namespace sz
#endif  // SZ_HAVE_CUDA
