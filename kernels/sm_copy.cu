// smCopyAsync and smCopyPiecesAsync (sm_copy.h): a grid-stride copy or zero fill, 16 bytes per
// thread and step where dst and src share their alignment, bytes elsewhere; and a batch of
// pieces, one block per piece.
#include "sm_copy.h"

#include <cstdint>

#include "cuda_check.h"
#include "dependent_launch.cuh"
#include "device_props.h"
#include "kernel_loading.h"

namespace sz {
namespace {

constexpr unsigned kThreads = 256;

// The first `head` bytes and the bytes past the 16-byte body one at a time; the body as uint4.
// kVector false: every byte one at a time (dst and src aligned differently).
template <bool kVector>
__global__ void smCopyKernel(uint8_t* dst, const uint8_t* src, size_t bytes, size_t head) {
  // A programmatic dependent launched after this copy (szDecodeAsync's decoder after its status
  // reset) may start now: it waits with waitForPrimary before it relies on these bytes.
  releaseDependents();
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x, stride = size_t(gridDim.x) * blockDim.x;
  if (!kVector) head = bytes;
  for (size_t i = tid; i < head; i += stride) dst[i] = src ? src[i] : 0;
  if (!kVector) return;
  const size_t words = (bytes - head) / 16;
  uint4* d = reinterpret_cast<uint4*>(dst + head);
  const uint4* s = reinterpret_cast<const uint4*>(src ? src + head : nullptr);
  for (size_t i = tid; i < words; i += stride) d[i] = s ? s[i] : make_uint4(0, 0, 0, 0);
  for (size_t i = head + words * 16 + tid; i < bytes; i += stride) dst[i] = src ? src[i] : 0;
}

// One block per piece at a time: 16-byte moves when the piece allows, else 4, else 1.
__global__ void smCopyPiecesKernel(const SmCopyPiece* pieces, size_t n) {
  for (size_t p = blockIdx.x; p < n; p += gridDim.x) {
    const SmCopyPiece c = pieces[p];
    const uintptr_t align = reinterpret_cast<uintptr_t>(c.dst) | reinterpret_cast<uintptr_t>(c.src) | c.bytes;
    if ((align & 15) == 0) {
      auto* d = reinterpret_cast<uint4*>(c.dst);
      auto* s = reinterpret_cast<const uint4*>(c.src);
      for (size_t i = threadIdx.x; i < c.bytes / 16; i += blockDim.x) d[i] = s[i];
    } else if ((align & 3) == 0) {
      auto* d = reinterpret_cast<uint32_t*>(c.dst);
      auto* s = reinterpret_cast<const uint32_t*>(c.src);
      for (size_t i = threadIdx.x; i < c.bytes / 4; i += blockDim.x) d[i] = s[i];
    } else {
      for (size_t i = threadIdx.x; i < c.bytes; i += blockDim.x) c.dst[i] = c.src[i];
    }
  }
}

}  // namespace

szResult_t smCopyPiecesAsync(const SmCopyPiece* pieces, size_t n, cudaStream_t stream) {
  if (n == 0) return szSuccess;
  if (pieces == nullptr) return szSetError(szInvalidArgument, "smCopyPiecesAsync: NULL pieces");
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  unsigned blocks = unsigned(n < size_t(sms) * 8 ? n : size_t(sms) * 8);
  smCopyPiecesKernel<<<blocks, kThreads, 0, stream>>>(pieces, n);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t smCopyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return szSuccess;
  if (dst == nullptr) return szSetError(szInvalidArgument, "smCopyAsync: NULL destination");
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst), s = reinterpret_cast<uintptr_t>(src);
  const bool vector = src == nullptr || ((d ^ s) & 15) == 0;
  size_t head = (16 - (d & 15)) & 15;
  if (head > bytes) head = bytes;
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  size_t want = (bytes / (vector ? 16 : 1) + kThreads - 1) / kThreads;
  unsigned blocks = unsigned(want < size_t(sms) * 4 ? (want ? want : 1) : size_t(sms) * 4);
  auto* out = static_cast<uint8_t*>(dst);
  auto* in = static_cast<const uint8_t*>(src);
  if (vector) smCopyKernel<true><<<blocks, kThreads, 0, stream>>>(out, in, bytes, head);
  else smCopyKernel<false><<<blocks, kThreads, 0, stream>>>(out, in, bytes, 0);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t loadCopyKernels() {
  cudaFuncAttributes a;
  CUDACHECK(cudaFuncGetAttributes(&a, smCopyKernel<true>));
  CUDACHECK(cudaFuncGetAttributes(&a, smCopyKernel<false>));
  CUDACHECK(cudaFuncGetAttributes(&a, smCopyPiecesKernel));
  return szSuccess;
}

}  // namespace sz
