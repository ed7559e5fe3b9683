// Channel ends of the slot proxy (src/proto/slot_end.h).
#include "src/proto/slot_end.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda_check.h"
#include "kernels/pinned_host.h"
#include "kernels/zero_fill.h"
#endif

#include <cstdlib>
#include <cstring>

#include "base/checks.h"

namespace sz {

size_t slotEndWordBytes(uint32_t nslots) {
  return size_t(nslots) * (8 + sizeof(SlotSignal) + sizeof(SlotPayload)) + 256;
}

namespace {

szResult_t allocate(SlotMemory memory, bool ring, size_t bytes, void** p) {
  *p = nullptr;
  if (memory == SlotMemory::kHost) {
    // Rings: pages are touched only as slots are used; 4 KiB aligned for the codec's loads.
    *p = ring ? aligned_alloc(4096, (bytes + 4095) / 4096 * 4096) : calloc(1, bytes);
    if (*p == nullptr) return szSetError(szSystemError, "slot proxy: cannot allocate %zu bytes of host slots", bytes);
    return szSuccess;
  }
#if SZ_HAVE_CUDA
  if (memory == SlotMemory::kDevice && ring) {
    CUDACHECK(cudaMalloc(p, bytes));
    SZCHECK(zeroDeviceMemory(*p, bytes));
    return szSuccess;
  }
  if (memory == SlotMemory::kDevice) {  // the words of a channel connected at init (nccl): small
    CUDACHECK(cudaHostAlloc(p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    memset(*p, 0, bytes);
    return szSuccess;
  }
  return allocPinnedHost(bytes, p);  // ring and words in one: no wait for running kernels (a first contact's)
#else
  return szSetError(szUnhandledCudaError, "slot proxy: GPU memory in a build without CUDA");
#endif
}

void release(SlotMemory memory, bool ring, void* p) {
  if (p == nullptr) return;
  if (memory == SlotMemory::kHost) {
    free(p);
    return;
  }
#if SZ_HAVE_CUDA
  if (memory == SlotMemory::kDevice && ring) cudaFree(p);
  else if (memory == SlotMemory::kDevice) cudaFreeHost(p);
  else freePinnedHost(p);
#else
  (void)ring;
#endif
}

szResult_t makeEnd(SlotMemory m, uint64_t stride, uint32_t nslots, SlotEnd* e) {
  size_t ringBytes = 0;
  if (__builtin_mul_overflow(size_t(stride), size_t(nslots), &ringBytes) || ringBytes > (size_t(1) << 40))
    return szSetError(szInvalidArgument, "slot proxy: %u slots of %llu bytes overflow a ring", nslots,
                      (unsigned long long)stride);
  if (m == SlotMemory::kPinned) {  // one mapping for ring and words (a mapping is whole granules)
    SZCHECK(allocate(m, true, ringBytes + slotEndWordBytes(nslots), reinterpret_cast<void**>(&e->ring)));
    e->credits = reinterpret_cast<uint64_t*>(e->ring + ringBytes);  // ringBytes: whole slots of 256-byte multiples
  } else {
    SZCHECK(allocate(m, true, ringBytes, reinterpret_cast<void**>(&e->ring)));
    SZCHECK(allocate(m, false, slotEndWordBytes(nslots), reinterpret_cast<void**>(&e->credits)));
  }
  for (uint32_t j = 0; j < nslots; ++j) e->credits[j] = initialCredit(j);
  e->error = reinterpret_cast<int*>(e->credits + nslots);
  e->peerError = e->error + 16;
  e->signals = reinterpret_cast<SlotSignal*>(e->error + 64);
  if (m == SlotMemory::kHost) e->payloads = reinterpret_cast<SlotPayload*>(e->signals + nslots);
  return szSuccess;
}

}  // namespace

void freeSlotEnd(SlotMemory m, SlotEnd& e) {
  release(m, true, e.ring);
  if (m != SlotMemory::kPinned) release(m, false, e.credits);  // else inside the ring's
  e = SlotEnd{};
}

szResult_t makeSlotEnds(SlotMemory m, uint64_t stride, uint32_t nslots, SlotEnd* send, SlotEnd* recv) {
  *send = SlotEnd{};
  *recv = SlotEnd{};
  szResult_t res = makeEnd(m, stride, nslots, send);
  if (res == szSuccess) res = makeEnd(m, stride, nslots, recv);
  if (res != szSuccess) {
    freeSlotEnd(m, *send);
    freeSlotEnd(m, *recv);
  }
  return res;
}

void* slotUserAddress(SlotMemory m, void* p) {
  if (m == SlotMemory::kHost || p == nullptr) return p;
#if SZ_HAVE_CUDA
  return pinnedDeviceAddress(p);
#else
  return nullptr;
#endif
}

}  // namespace sz
