// The slot kernels for launches of receives only, one per compressible type and
// alignment (kernels/slot_kernel_table.h).
#include "slot_ops.cuh"

namespace sz {

SlotKernel slotRecvKernel(int kind, bool aligned) {
  static constexpr SlotKernel kKernels[kSlotTypedKinds][2] = {
      {slotOpsKernel<szBfloat16, false, kSlotRecvsOnly>, slotOpsKernel<szBfloat16, true, kSlotRecvsOnly>},
      {slotOpsKernel<szFloat32, false, kSlotRecvsOnly>, slotOpsKernel<szFloat32, true, kSlotRecvsOnly>},
      {slotOpsKernel<szFloat8e5m2, false, kSlotRecvsOnly>, slotOpsKernel<szFloat8e5m2, true, kSlotRecvsOnly>},
      {slotOpsKernel<szFloat16, false, kSlotRecvsOnly>, slotOpsKernel<szFloat16, true, kSlotRecvsOnly>},
      {slotOpsKernel<szFloat8e4m3, false, kSlotRecvsOnly>, slotOpsKernel<szFloat8e4m3, true, kSlotRecvsOnly>},
  };
  return kKernels[kind][aligned];
}

}  // namespace sz
