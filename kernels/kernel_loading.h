// Loading every kernel of the library into the current device's context ahead of use.
// With lazy loading (the CUDA default since 12.2) a kernel is loaded at its first launch, and
// loading synchronizes the context. A communicator's slot kernels wait for the peer's, and a
// first launch of another kernel while they wait (the peer's, or a copy to self) would wait for
// them: a deadlock. So the slot path loads the kernels it launches when it is created
// (cudaFuncGetAttributes loads a kernel).
#pragma once

#include "splitzip.h"

namespace sz {

// Each loads its file's kernels into the current device's context.
szResult_t loadHistogramKernels();  // calibrate.cu: histogram and codebook selection
szResult_t loadCopyKernels();
szResult_t loadSlotKernels();

}  // namespace sz
