// Per-device facts the launchers size their grids with, read once per device.
#pragma once

#include "splitzip.h"

namespace sz {

// Multiprocessor count of the current device.
szResult_t currentDeviceSms(int* sms);

// The current device's peak DRAM bandwidth in bytes per second (memory clock x 2 x bus width),
// the scale of the auto mode's priors (src/proto/auto_model.h).
szResult_t currentDeviceDramBps(double* bps);

// Lets `kernel` (a __global__ function) launch on the current device with `bytes` of dynamic
// shared memory, more than the 48 KiB a launch gets unasked, and prefer the largest
// shared-memory carveout; once per kernel, device and size. The bulk-copy rings
// (kernels/bulk_ring.cuh).
szResult_t allowKernelShared(const void* kernel, uint32_t bytes);

}  // namespace sz
