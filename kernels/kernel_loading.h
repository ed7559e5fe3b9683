// Loading every kernel of the library into the current device's context ahead of use.
// With lazy loading (the CUDA default since 12.2) a kernel is loaded at its first launch, and
// loading synchronizes the context. The communicator holds the user's stream on a completion
// flag that its progress thread releases after launching codec kernels: a first launch there
// would wait for the user's stream, which waits for the progress thread (a deadlock). So a
// device context loads the kernels when it is created (cudaFuncGetAttributes loads a kernel).
#pragma once

#include "splitzip.h"

namespace sz {

// Each loads its file's kernels into the current device's context.
szResult_t loadEncodeKernels();
szResult_t loadDecodeKernels();
szResult_t loadHistogramKernels();  // calibrate.cu: histogram and codebook selection
szResult_t loadCopyKernels();
szResult_t loadSlotKernels();

}  // namespace sz
