// Pinned host memory without an implicit synchronization (kernels/pinned_host.h).
#include "kernels/pinned_host.h"

#if SZ_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "base/debug.h"
#include "base/param.h"
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

// What vmmAlloc mapped: base address -> bytes and device, so that freeing and device addresses
// need no driver query (which would need a current context on the caller's thread).
struct Mapping {
  size_t bytes;
  int device;
};
std::mutex gMu;
std::map<uintptr_t, Mapping> gMappings;

// Maps `bytes` (rounded up to the granularity) of a host NUMA node's memory for the current
// device and the host; CUDA_SUCCESS or the failing call's result (nothing left allocated).
CUresult vmmMap(const Vmm& v, size_t bytes, void** host, size_t* mapped, int* deviceOut) {
  int device = -1, numa = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return CUDA_ERROR_INVALID_CONTEXT;
  }
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
  CUresult r = v.granularity(&grain, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (r != CUDA_SUCCESS || grain == 0) return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
  const size_t size = (bytes + grain - 1) / grain * grain;
  CUmemGenericAllocationHandle handle{};
  if ((r = v.create(&handle, size, &prop, 0)) != CUDA_SUCCESS) return r;
  CUdeviceptr va = 0;
  if ((r = v.reserve(&va, size, grain, 0, 0)) != CUDA_SUCCESS) {
    v.release(handle);
    return r;
  }
  r = v.map(va, size, 0, handle, 0);
  v.release(handle);  // the mapping holds the memory from here on; unmapping frees it
  CUmemAccessDesc access[2]{};
  access[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access[0].location.id = device;
  access[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  access[1].location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
  access[1].location.id = numa;
  access[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (r == CUDA_SUCCESS) r = v.setAccess(va, size, &access[0], 1);
  if (r == CUDA_SUCCESS) r = v.setAccess(va, size, &access[1], 1);
  if (r != CUDA_SUCCESS) {
    v.unmap(va, size);
    v.addressFree(va, size);
    return r;
  }
  *host = reinterpret_cast<void*>(va);
  *mapped = size;
  *deviceOut = device;
  return CUDA_SUCCESS;
}

void vmmUnmap(const Vmm& v, void* p, const Mapping& m) {
  int saved = -1;  // the calls act in the device's context: made current on this thread for them
  const bool switched = cudaGetDevice(&saved) == cudaSuccess && saved != m.device;
  if (switched || saved < 0) cudaSetDevice(m.device);
  v.unmap(CUdeviceptr(p), m.bytes);
  v.addressFree(CUdeviceptr(p), m.bytes);
  if (switched) cudaSetDevice(saved);
  cudaGetLastError();
}

// The calls, and whether this process uses them: SZ_CUMEM_HOST=0 (drivers whose cuMemCreate on a
// host NUMA node misbehaves) or a first allocation of one granule that fails turns them off.
const Vmm& vmm() {
  static const Vmm v = [] {
    Vmm r;
    if (szParamCumemHost() == 0) return r;
    const bool found = entry("cuMemCreate", &r.create) && entry("cuMemRelease", &r.release) &&
                       entry("cuMemAddressReserve", &r.reserve) && entry("cuMemAddressFree", &r.addressFree) &&
                       entry("cuMemMap", &r.map) && entry("cuMemUnmap", &r.unmap) &&
                       entry("cuMemSetAccess", &r.setAccess) && entry("cuMemGetAllocationGranularity", &r.granularity);
    void* probe = nullptr;
    size_t bytes = 0;
    int device = -1;
    const CUresult res = found ? vmmMap(r, 1, &probe, &bytes, &device) : CUDA_ERROR_NOT_FOUND;
    if (res == CUDA_SUCCESS) {
      vmmUnmap(r, probe, Mapping{bytes, device});
      r.usable = true;
    } else {
      INFO(SZ_INIT, "pinned host memory: the driver's virtual memory calls %s (CUresult %d): cudaHostAlloc "
                    "instead, which waits for this process's running kernels on the device (a pair's first "
                    "operation then waits for them; SZ_RUNTIME_CONNECT=0 connects every pair at init)",
           found ? "failed" : "are missing", int(res));
    }
    return r;
  }();
  return v;
}

// The mapping that holds `p` (any address inside it), or gMappings.end().
std::map<uintptr_t, Mapping>::const_iterator mappingOf(const void* p) {
  const uintptr_t a = uintptr_t(p);
  auto it = gMappings.upper_bound(a);
  if (it == gMappings.begin()) return gMappings.end();
  --it;
  return a < it->first + it->second.bytes ? it : gMappings.end();
}

}  // namespace

namespace sz {

szResult_t allocPinnedHost(size_t bytes, void** host) {
  *host = nullptr;
  const Vmm& v = vmm();
  size_t mapped = 0;
  int device = -1;
  CUresult r = v.usable ? vmmMap(v, bytes, host, &mapped, &device) : CUDA_ERROR_NOT_SUPPORTED;
  if (r == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(gMu);
    gMappings[uintptr_t(*host)] = Mapping{mapped, device};
  } else {
    cudaGetLastError();
    if (v.usable)
      INFO(SZ_INIT, "pinned host memory: mapping %zu bytes failed (CUresult %d): cudaHostAlloc instead", bytes, int(r));
    CUDACHECK(cudaHostAlloc(host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  }
  memset(*host, 0, bytes);
  return szSuccess;
}

void* pinnedDeviceAddress(void* host) {
  if (host == nullptr) return nullptr;
  {
    std::lock_guard<std::mutex> lock(gMu);
    if (mappingOf(host) != gMappings.end()) return host;  // one address for the host and the device
  }
  void* d = nullptr;
  if (cudaHostGetDevicePointer(&d, host, 0) == cudaSuccess) return d;
  cudaGetLastError();
  return nullptr;
}

void freePinnedHost(void* host) {
  if (host == nullptr) return;
  Mapping m{0, -1};
  {
    std::lock_guard<std::mutex> lock(gMu);
    auto it = gMappings.find(uintptr_t(host));
    if (it != gMappings.end()) {
      m = it->second;
      gMappings.erase(it);
    }
  }
  if (m.bytes > 0) vmmUnmap(vmm(), host, m);
  else cudaFreeHost(host);
  cudaGetLastError();
}

}  // namespace sz
#endif  // SZ_HAVE_CUDA
