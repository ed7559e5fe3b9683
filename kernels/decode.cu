// szDecodeAsync: the GPU decoder (kernels/decode_frame.cuh) as one grid over a frame, a warp
// per chunk.
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "decode_frame.cuh"
#include "device_props.h"
#include "sm_copy.h"

namespace sz {
namespace {

// 2 blocks of 512 threads per multiprocessor at 64 registers, no spills: measured fastest
// (perf/results/codec_notes.md, v4); 3 or 4 blocks spill and lose 11-23 %.
constexpr uint32_t kBlocksPerSm = 2;

template <bool kAligned>
__global__ void __launch_bounds__(kDecodeThreads, kBlocksPerSm) decodeKernel(DecodeParams p) {
  const uint64_t gtid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  decodeFramePart<kAligned>(p, gtid, uint64_t(gridDim.x) * blockDim.x, blockIdx.x == 0);
}

}  // namespace

}  // namespace sz

using namespace sz;

extern "C" szResult_t szDecodeAsync(const void* d_frame, size_t frameBytes, void* d_out,
                                    size_t outCapacity, int* status, cudaStream_t stream) {
  if (d_frame == nullptr || status == nullptr || (d_out == nullptr && outCapacity > 0))
    return szSetError(szInvalidArgument, "szDecodeAsync: NULL frame, out or status");
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  SZCHECK(smCopyAsync(status, nullptr, sizeof(int), stream));
  DecodeParams p{static_cast<const uint8_t*>(d_frame), frameBytes, static_cast<uint8_t*>(d_out),
                 outCapacity, status, -1, 0};
  bool aligned = ((reinterpret_cast<uintptr_t>(d_frame) | reinterpret_cast<uintptr_t>(d_out)) & 15) == 0;
  unsigned blocks = unsigned(sms) * kBlocksPerSm;
  if (aligned) decodeKernel<true><<<blocks, kDecodeThreads, 0, stream>>>(p);
  else decodeKernel<false><<<blocks, kDecodeThreads, 0, stream>>>(p);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}
