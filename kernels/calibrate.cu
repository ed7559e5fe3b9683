// Calibration on the GPU (paper §3.3; calibrate.h): the exponent histogram (shared-memory bins
// per block, one global atomic per bin and block), the top-16 codebook chosen by one thread from
// it, and szHistogramAsync.
#include "calibrate.h"

#include <cuda_runtime.h>

#include "codec/calibrate.h"
#include "codec/dtype.h"
#include "cuda_check.h"
#include "device_props.h"
#include "kernel_loading.h"
#include "sm_copy.h"

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

// 16 passes over at most 256 counters: a few microseconds on one thread.
__global__ void selectCodebookKernel(const unsigned long long* counts, int type, szCodebook_t* out) {
  szCodebook_t cb;
  cb.type = szDataType_t(type);
  cb.used = selectCodebook(counts, typeTraits(type).expBits, cb.exponents);
  *out = cb;
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

szResult_t calibrateAsync(const void* d_data, size_t count, szDataType_t type, unsigned long long* d_counts,
                          szCodebook_t* d_codebook, cudaStream_t stream) {
  if ((d_data == nullptr && count > 0) || d_counts == nullptr || d_codebook == nullptr)
    return szSetError(szInvalidArgument, "calibrateAsync: NULL data, counts or codebook");
  if (!deviceCodecType(type))
    return szSetError(szInvalidArgument, "calibrateAsync: %s is not compressed by the GPU codec", szTypeName(type));
  SZCHECK(smCopyAsync(d_counts, nullptr, kCalibrateCountsBytes, stream));
  SZCHECK(launchHistogram(d_data, count, type, d_counts, stream));
  selectCodebookKernel<<<1, 1, 0, stream>>>(d_counts, type, d_codebook);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t loadHistogramKernels() {
  cudaFuncAttributes a;
  CUDACHECK(cudaFuncGetAttributes(&a, histogramKernel));
  CUDACHECK(cudaFuncGetAttributes(&a, selectCodebookKernel));
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
