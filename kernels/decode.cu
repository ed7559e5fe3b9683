// szDecodeAsync: the GPU decoder (kernels/decode_frame.cuh) as one grid over a frame, a warp
// per chunk, after a status reset it overlaps (programmatic dependent launch); a frame of under
// 8 KiB is one block and one launch.
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "decode_frame.cuh"
#include "dependent_launch.cuh"
#include "device_props.h"
#include "sm_copy.h"

namespace sz {
namespace {

// 4 blocks of 256 threads per multiprocessor at 64 registers (32 warps): 2 or 4 blocks of 512
// were no faster, 3-6 blocks spill (perf/results/codec_notes.md, v4).
constexpr uint32_t kGridThreads = 256, kBlocksPerSm = 4;

template <bool kAligned>
__global__ void __launch_bounds__(kGridThreads, kBlocksPerSm) decodeKernel(DecodeParams p) {
  const uint64_t gtid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  decodeFramePart<kAligned, kDecodeAll>(p, gtid, uint64_t(gridDim.x) * blockDim.x, blockIdx.x == 0);
}

// A frame of under 8 KiB in one launch of one block: the verdict gathers in shared memory and
// thread 0 writes it, so the status word needs no reset launch. The header's barrier in
// decodeFramePart orders sStatus's initialisation before any report.
template <bool kAligned>
__global__ void __launch_bounds__(kGridThreads) decodeSoloKernel(const __grid_constant__ DecodeParams p) {
  __shared__ int sStatus;
  if (threadIdx.x == 0) sStatus = szSuccess;
  DecodeParams q = p;
  q.status = &sStatus;
  const int err = decodeFramePart<kAligned, kDecodeAll>(q, threadIdx.x, blockDim.x, false);
  __syncthreads();
  if (threadIdx.x == 0) *p.status = err != szSuccess ? err : sStatus;
}

}  // namespace

}  // namespace sz

using namespace sz;

extern "C" szResult_t szDecodeAsync(const void* d_frame, size_t frameBytes, void* d_out,
                                    size_t outCapacity, int* status, cudaStream_t stream) {
  if (d_frame == nullptr || status == nullptr || (d_out == nullptr && outCapacity > 0))
    return szSetError(szInvalidArgument, "szDecodeAsync: NULL frame, out or status");
  DecodeParams p{static_cast<const uint8_t*>(d_frame), frameBytes, static_cast<uint8_t*>(d_out),
                 outCapacity, status, -1, 0};
  bool aligned = ((reinterpret_cast<uintptr_t>(d_frame) | reinterpret_cast<uintptr_t>(d_out)) & 15) == 0;
  // A block per 8 KiB of frame at most (a 1024-element frame is one block), the resident
  // blocks at most: each block checks the header before its first chunk. A frame that fits the
  // output is at most its raw form (the header and outCapacity bytes); a larger `frameBytes`
  // (a buffer's capacity) does not widen the grid. The grid's size is only speed: any grid
  // decodes any frame.
  const uint64_t fit = outCapacity > ~uint64_t(0) - kHeaderBytes ? ~uint64_t(0) : kHeaderBytes + outCapacity;
  const uint64_t span = frameBytes < fit ? frameBytes : fit;
  const uint64_t need = span / 8192 + 1;
  if (need == 1) {
    if (aligned) decodeSoloKernel<true><<<1, kGridThreads, 0, stream>>>(p);
    else decodeSoloKernel<false><<<1, kGridThreads, 0, stream>>>(p);
    CUDACHECK(cudaGetLastError());
    return szSuccess;
  }
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  SZCHECK(smCopyAsync(status, nullptr, sizeof(int), stream));
  const uint64_t resident = uint64_t(sms) * kBlocksPerSm;
  // Launched as a programmatic dependent of the status reset: the decoder starts as the reset
  // starts, and only a report of an error waits for it (reportStatus, waitForPrimary).
  const dim3 grid(unsigned(need < resident ? need : resident));
  CUDACHECK(launchMaybeDependent(true, grid, dim3(kGridThreads), stream,
                                 aligned ? decodeKernel<true> : decodeKernel<false>, p));
  return szSuccess;
}
