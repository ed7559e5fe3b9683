// Caches cudaDevAttrMultiProcessorCount per device.
#include "device_props.h"

#include <mutex>

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

}  // namespace sz
