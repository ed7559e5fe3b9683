// Which slot kernel a launch takes (kernels/slot_kernels.cu picks; the kernels are one template
// in kernels/slot_ops.cuh, instantiated in three files that compile side by side).
#pragma once

#include "slot_kernels.h"

namespace sz {

using SlotKernel = void (*)(SlotLaunch);

// A kernel's type parameter beside the compressible types: no codec path (groups of raw
// operations), or every type dispatched at run time (groups mixing types).
constexpr int kSlotRawOnly = -1, kSlotAnyType = szNumTypes;

// A kernel's direction parameter: the launch's operations are sends and receives, sends only
// (a prefill worker's group) or receives only (a decode worker's).
enum SlotDirection { kSlotBoth = 0, kSlotSendsOnly = 1, kSlotRecvsOnly = 2 };

// The one-direction kernels of one compressible type: kind 0 BF16, 1 FP32, 2 FP8 E5M2.
constexpr int kSlotTypedKinds = 3;
SlotKernel slotSendKernel(int kind, bool aligned);  // kernels/slot_send_kernels.cu
SlotKernel slotRecvKernel(int kind, bool aligned);  // kernels/slot_recv_kernels.cu

}  // namespace sz
