// The slot kernel of groups mixing FP16's or E4M3's frames with another type's
// (kernels/slot_kernel_table.h): every compressible type's paths, format version 2's included,
// dispatched at run time. In a file of its own, so it compiles beside the others.
#include "slot_ops.cuh"

namespace sz {

SlotKernel slotAllTypesKernel() { return slotOpsKernel<kSlotAllTypes, false, kSlotBoth>; }

}  // namespace sz
