// Exponent histogram on the GPU (paper §3.3 calibration): shared-memory bins per block, one
// global atomic per bin and block. Also szHistogramAsync.
#include <cuda_runtime.h>

#include "codec/dtype.h"
#include "cuda_check.h"
#include "device_props.h"
#include "kernel_loading.h"

namespace sz {
namespace {

__global__ void histogramKernel(const uint8_t* data, uint64_t count, int type,
                                unsigned long long* counts) {
  __shared__ unsigned int bins[256];
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x) bins[i] = 0;
  __syncthreads();
  const TypeTraits t = typeTraits(type);
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    uint32_t w = 0;
    for (uint32_t b = 0; b < t.elemBytes; ++b) w |= uint32_t(data[i * t.elemBytes + b]) << (8 * b);
    atomicAdd(&bins[t.exponent(w)], 1u);
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < 256; i += blockDim.x)
    if (bins[i]) atomicAdd(&counts[i], (unsigned long long)bins[i]);
}

}  // namespace

szResult_t launchHistogram(const void* d_data, size_t count, int type, unsigned long long* d_counts,
                           cudaStream_t stream) {
  if (count == 0) return szSuccess;
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  uint64_t blocks = count / 256 + 1;
  if (blocks > uint64_t(sms) * 4) blocks = uint64_t(sms) * 4;
  histogramKernel<<<unsigned(blocks), 256, 0, stream>>>(static_cast<const uint8_t*>(d_data), count,
                                                         type, d_counts);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t loadHistogramKernels() {
  cudaFuncAttributes a;
  CUDACHECK(cudaFuncGetAttributes(&a, histogramKernel));
  return szSuccess;
}

}  // namespace sz

extern "C" szResult_t szHistogramAsync(const void* d_data, size_t count, szDataType_t type,
                                       unsigned long long* d_counts, cudaStream_t stream) {
  if ((d_data == nullptr && count > 0) || d_counts == nullptr)
    return szSetError(szInvalidArgument, "szHistogramAsync: NULL data or counts");
  if (!szTypeIsCompressible(type))
    return szSetError(szInvalidArgument, "szHistogramAsync: %s has no exponent", sz::szTypeName(type));
  return sz::launchHistogram(d_data, count, type, d_counts, stream);
}
