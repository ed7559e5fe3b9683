// Caches cudaDevAttrMultiProcessorCount per device, and kernels' shared-memory attributes.
#include "device_props.h"

#include <mutex>
#include <vector>

#include "cuda_check.h"

namespace sz {

szResult_t currentDeviceSms(int* sms) {
  constexpr int kMaxDevices = 64;
  static int cached[kMaxDevices] = {};
  static std::mutex mu;
  int dev;
  CUDACHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= kMaxDevices) return szSetError(szInternalError, "device %d out of range", dev);
  std::lock_guard<std::mutex> lock(mu);
  if (cached[dev] == 0) CUDACHECK(cudaDeviceGetAttribute(&cached[dev], cudaDevAttrMultiProcessorCount, dev));
  *sms = cached[dev];
  return szSuccess;
}

szResult_t currentDeviceDramBps(double* bps) {
  int dev, kHz = 0, bits = 0;
  CUDACHECK(cudaGetDevice(&dev));
  CUDACHECK(cudaDeviceGetAttribute(&kHz, cudaDevAttrMemoryClockRate, dev));
  CUDACHECK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  *bps = double(kHz) * 1e3 * 2 * double(bits) / 8;
  return szSuccess;
}

szResult_t allowKernelShared(const void* kernel, uint32_t bytes) {
  struct Done {
    const void* kernel;
    int dev;
    uint32_t bytes;
  };
  static std::vector<Done> done;
  static std::mutex mu;
  int dev;
  CUDACHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  for (const Done& d : done)
    if (d.kernel == kernel && d.dev == dev && d.bytes == bytes) return szSuccess;
  CUDACHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  CUDACHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  done.push_back({kernel, dev, bytes});
  return szSuccess;
}

}  // namespace sz
