// Which slot kernel a launch takes (kernels/slot_kernels.cu picks; the kernels are one template
// in kernels/slot_ops.cuh, instantiated in four files that compile side by side).
#pragma once

#include "slot_kernels.h"

namespace sz {

using SlotKernel = void (*)(SlotLaunch);

// A kernel's type parameter beside the compressible types: no codec path (groups of raw
// operations), format version 1's types dispatched at run time (groups mixing them), or also
// FP16 and E4M3 (format version 2: groups mixing their frames with another type's).
constexpr int kSlotRawOnly = -1, kSlotAnyType = szNumTypes, kSlotAllTypes = szNumTypes + 1;

// A kernel's direction parameter: the launch's operations are sends and receives, sends only
// (a prefill worker's group) or receives only (a decode worker's).
enum SlotDirection { kSlotBoth = 0, kSlotSendsOnly = 1, kSlotRecvsOnly = 2 };

// The kernels of one compressible type: kind 0 BF16, 1 FP32, 2 FP8 E5M2, 3 FP16, 4 FP8 E4M3
// (slotTypedKind).
constexpr int kSlotTypedKinds = 5;
constexpr int slotTypedKind(int type) {
  return type == szBfloat16     ? 0
         : type == szFloat32    ? 1
         : type == szFloat8e5m2 ? 2
         : type == szFloat16    ? 3
         : type == szFloat8e4m3 ? 4
                                : -1;
}
SlotKernel slotSendKernel(int kind, bool aligned);  // kernels/slot_send_kernels.cu
SlotKernel slotRecvKernel(int kind, bool aligned);  // kernels/slot_recv_kernels.cu
// The kernel of groups mixing FP16's or E4M3's frames with another type's (kSlotAllTypes;
// kernels/slot_all_kernels.cu): one, for sends and receives and any alignment, as it checks each
// buffer's at run time.
SlotKernel slotAllTypesKernel();

}  // namespace sz
