// The slot kernels for launches of sends only (every operation of the launch a send), one per
// compressible type and alignment (kernels/slot_kernel_table.h).
#include "slot_ops.cuh"

namespace sz {

SlotKernel slotSendKernel(int kind, bool aligned) {
  static constexpr SlotKernel kKernels[kSlotTypedKinds][2] = {
      {slotOpsKernel<szBfloat16, false, kSlotSendsOnly>, slotOpsKernel<szBfloat16, true, kSlotSendsOnly>},
      {slotOpsKernel<szFloat32, false, kSlotSendsOnly>, slotOpsKernel<szFloat32, true, kSlotSendsOnly>},
      {slotOpsKernel<szFloat8e5m2, false, kSlotSendsOnly>, slotOpsKernel<szFloat8e5m2, true, kSlotSendsOnly>},
      {slotOpsKernel<szFloat16, false, kSlotSendsOnly>, slotOpsKernel<szFloat16, true, kSlotSendsOnly>},
      {slotOpsKernel<szFloat8e4m3, false, kSlotSendsOnly>, slotOpsKernel<szFloat8e4m3, true, kSlotSendsOnly>},
  };
  return kKernels[kind][aligned];
}

}  // namespace sz
