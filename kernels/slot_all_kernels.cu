// The slot kernel of launches with FP16 or E4M3 frames (kernels/slot_kernel_table.h): every
// compressible type's paths, format version 2's included, dispatched at run time. In a file of
// its own, so it compiles beside the others.
#include "slot_ops.cuh"

namespace sz {

SlotKernel slotAllTypesKernel() { return slotOpsKernel<kSlotAllTypes, false, kSlotBoth>; }

}  // namespace sz
