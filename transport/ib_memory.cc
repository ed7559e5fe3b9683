// Registered memory of the ib wire (ib_memory.h).
#include "transport/ib_memory.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/checks.h"
#include "kernels/cuda_check.h"
#include "kernels/zero_fill.h"

namespace {

constexpr size_t kGpuPage = 2u << 20;  // dma-buf ranges are whole pages; cudaMalloc aligns to 2 MiB

using GetHandleFn = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);

GetHandleFn getHandleFn() {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &p, 11070, cudaEnableDefault, &q) !=
          cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<GetHandleFn>(p);
}

// Registers `b` in GPU memory through a dma-buf on every port; false (nothing registered) if any
// step is unsupported.
bool registerGpu(const szIbVerbs* v, const std::vector<szIbPort>& ports, size_t registered, int access,
                 szIbBuffer* b) {
  static const GetHandleFn getHandle = getHandleFn();
  int fd = -1;
  if (v->regDmabufMr == nullptr || getHandle == nullptr ||
      getHandle(&fd, CUdeviceptr(b->addr), b->bytes, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) != CUDA_SUCCESS)
    return false;
  for (const szIbPort& p : ports) {
    ibv_mr* mr = v->regDmabufMr(p.pd, 0, registered, uint64_t(b->addr), fd, access | IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr) break;
    b->mrs.push_back(mr);
  }
  close(fd);
  if (b->mrs.size() == ports.size()) return true;
  for (ibv_mr* mr : b->mrs) v->deregMr(mr);
  b->mrs.clear();
  return false;
}

}  // namespace

bool szIbGpuDirectUsable(bool* needFlush) {
  int device = 0, supported = 0, ordering = 0, flush = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&supported, cudaDevAttrGPUDirectRDMASupported, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&flush, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *needFlush = ordering < cudaGPUDirectRDMAWritesOrderingOwner;
  return supported && (!*needFlush || (flush & cudaFlushGPUDirectRDMAWritesOptionHost));
}

void szIbFlushGpuWrites() {
  cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
                                     cudaFlushGPUDirectRDMAWritesToOwner);
}

namespace {

// Registers the first `registered` bytes of `b` on every port.
szResult_t registerHost(const szIbVerbs* v, const std::vector<szIbPort>& ports, size_t registered, int access,
                        szIbBuffer* b) {
  for (const szIbPort& port : ports) {
    ibv_mr* mr = v->regMr(port.pd, b->addr, registered, access | IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr)
      return szSetError(szSystemError, "ib wire: %s: ibv_reg_mr of %zu bytes failed: %s (the locked-memory limit, "
                        "ulimit -l?)", port.name.c_str(), registered, strerror(errno));
    b->mrs.push_back(mr);
  }
  return szSuccess;
}

}  // namespace

szResult_t szIbAlloc(const szIbVerbs* v, const std::vector<szIbPort>& ports, size_t bytes, size_t registered,
                     szIbMemory memory, int access, szIbBuffer* b) {
  *b = szIbBuffer{};
  if (registered == 0) registered = bytes;
  if (memory == szIbMemory::kHost) {
    b->bytes = (bytes + 4095) / 4096 * 4096;
    b->addr = b->kernel = static_cast<uint8_t*>(aligned_alloc(4096, b->bytes));
    if (b->addr == nullptr) return szSetError(szSystemError, "ib wire: cannot allocate %zu bytes of host slots", bytes);
    b->host = true;
    memset(b->addr, 0, b->bytes);
    return registerHost(v, ports, registered, access, b);
  }
  if (memory == szIbMemory::kGpu) {
    b->bytes = (bytes + kGpuPage - 1) / kGpuPage * kGpuPage;
    void* p = nullptr;
    CUDACHECK(cudaMalloc(&p, b->bytes));
    b->addr = b->kernel = static_cast<uint8_t*>(p);
    b->gpu = true;
    SZCHECK(sz::zeroDeviceMemory(p, b->bytes));
    if (registerGpu(v, ports, registered, access, b)) return szSuccess;
    INFO(SZ_INIT | SZ_NET, "ib wire: GPUDirect RDMA registration unsupported here: slot rings in pinned host memory");
    cudaFree(p);
    *b = szIbBuffer{};
  }
  b->bytes = bytes;
  void* p = nullptr;
  CUDACHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(p, 0, bytes);
  b->addr = static_cast<uint8_t*>(p);
  void* d = nullptr;
  CUDACHECK(cudaHostGetDevicePointer(&d, p, 0));
  b->kernel = static_cast<uint8_t*>(d);
  return registerHost(v, ports, registered, access, b);
}

void szIbFree(const szIbVerbs* v, szIbBuffer* b) {
  for (ibv_mr* mr : b->mrs) v->deregMr(mr);
  if (b->addr && b->gpu) cudaFree(b->addr);
  else if (b->addr && b->host) free(b->addr);
  else if (b->addr) cudaFreeHost(b->addr);
  if (!b->host) cudaGetLastError();
  *b = szIbBuffer{};
}
