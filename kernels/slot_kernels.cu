// The slot kernels (kernels/slot_kernels.h): device operations as stream-ordered kernels that
// talk to the peer's kernels through slot and credit flags (kernels/slot_format.h). The device
// code is kernels/slot_ops.cuh; this file holds the kernels for sends and receives together and
// picks each launch's kernel.
#include "cuda_check.h"
#include "kernel_loading.h"
#include "slot_ops.cuh"

namespace sz {
namespace {

// [kind][aligned]: kind 0..4 one type (slotTypedKind), 5 raw only, 6 format version 1's types.
constexpr int kRawKind = kSlotTypedKinds, kAnyKind = kSlotTypedKinds + 1;
constexpr SlotKernel kSlotKernels[kSlotTypedKinds + 2][2] = {
    {slotOpsKernel<szBfloat16, false, kSlotBoth>, slotOpsKernel<szBfloat16, true, kSlotBoth>},
    {slotOpsKernel<szFloat32, false, kSlotBoth>, slotOpsKernel<szFloat32, true, kSlotBoth>},
    {slotOpsKernel<szFloat8e5m2, false, kSlotBoth>, slotOpsKernel<szFloat8e5m2, true, kSlotBoth>},
    {slotOpsKernel<szFloat16, false, kSlotBoth>, slotOpsKernel<szFloat16, true, kSlotBoth>},
    {slotOpsKernel<szFloat8e4m3, false, kSlotBoth>, slotOpsKernel<szFloat8e4m3, true, kSlotBoth>},
    {slotOpsKernel<kSlotRawOnly, false, kSlotBoth>, slotOpsKernel<kSlotRawOnly, true, kSlotBoth>},
    {slotOpsKernel<kSlotAnyType, false, kSlotBoth>, slotOpsKernel<kSlotAnyType, true, kSlotBoth>},
};

// The kernel for a launch: the one compressible type its operations may encode or decode,
// whether every buffer is 16-byte aligned, and for one type, whether all of its operations go
// one way. A group mixing FP16 or E4M3 frames with another type's takes the kernel of all types
// (format version 2's paths beside version 1's); one mixing version 1's types, the any-type
// kernel, which keeps version 1's registers.
SlotKernel pickKernel(const SlotLaunch& L) {
  int type = -1;
  bool mixed = false, narrow = false, aligned = true, sends = false, recvs = false;
  for (uint32_t k = 0; k < L.nops; ++k) {
    const SlotOp& op = slotOpAt(L, k);
    if (gpuCodecType(op.type) && (op.compress || !op.send)) {
      mixed |= type >= 0 && type != op.type;
      narrow |= !deviceCodecType(op.type);
      type = op.type;
    }
    aligned &= op.nsegs > 1 || (reinterpret_cast<uintptr_t>(op.seg0.ptr) & 15) == 0;  // lists go through scratch
    sends |= op.send != 0;
    recvs |= op.send == 0;
  }
  if (narrow && mixed) return slotAllTypesKernel();
  const int kind = mixed ? kAnyKind : type < 0 ? kRawKind : slotTypedKind(type);
  if (kind < kSlotTypedKinds && !recvs) return slotSendKernel(kind, aligned);
  if (kind < kSlotTypedKinds && !sends) return slotRecvKernel(kind, aligned);
  return kSlotKernels[kind][aligned];
}

}  // namespace

szResult_t launchSlotOps(const SlotLaunch& launch, uint32_t blocks, cudaStream_t stream) {
  pickKernel(launch)<<<blocks, kSlotThreads, 0, stream>>>(launch);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t loadSlotKernels() {
  cudaFuncAttributes a;
  for (const auto& byAlignment : kSlotKernels)
    for (SlotKernel k : byAlignment) CUDACHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k)));
  CUDACHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(slotAllTypesKernel())));
  for (int kind = 0; kind < kSlotTypedKinds; ++kind)
    for (bool aligned : {false, true})
      for (SlotKernel k : {slotSendKernel(kind, aligned), slotRecvKernel(kind, aligned)})
        CUDACHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(k)));
  return szSuccess;
}

}  // namespace sz
