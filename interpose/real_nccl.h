// The real NCCL under the interposer: a table of its entry points, found at run time in the
// NCCL the program itself loaded, never in this library (so a call through the table cannot
// come back here). The interposer links no libnccl: a DT_NEEDED entry would load the system's
// NCCL at LD_PRELOAD time, and the program (PyTorch with its own libnccl.so.2) would then run
// on that one instead of its own.
#pragma once

#include "interpose/nccl_compat.h"

namespace szi {

// Every function of NCCL's host API (nccl.h): the ones the interposer wraps, the ones it forwards
// untouched (forward.cc) and the ones the SplitZip library inside it calls. A function the loaded
// NCCL lacks (an older release) stays null: the call that needs it fails with ncclInvalidUsage
// and a WARN, it never jumps to null.
#if SZI_HAVE_WINDOWS
#define SZI_REAL_NCCL_WINDOW_FUNCS(X) X(ncclCommWindowRegister) X(ncclCommWindowDeregister)
#else
#define SZI_REAL_NCCL_WINDOW_FUNCS(X)
#endif
#if SZI_HAVE_SIM_INFO
#define SZI_REAL_NCCL_SIM_FUNCS(X) X(ncclGroupSimulateEnd)
#else
#define SZI_REAL_NCCL_SIM_FUNCS(X)
#endif
#define SZI_REAL_NCCL_FUNCS(X)                                                                      \
  X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommInitRankConfig) X(ncclCommInitAll) X(ncclCommSplit) \
  X(ncclCommFinalize) X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommRevoke) X(ncclCommGetAsyncError)   \
  X(ncclGetLastError) X(ncclGetErrorString) X(ncclCommCount) X(ncclCommUserRank) X(ncclCommCuDevice)    \
  X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) X(ncclBroadcast) X(ncclAllReduce)           \
  X(ncclGetVersion) X(ncclMemAlloc) X(ncclMemFree) X(ncclCommInitRankScalable) X(ncclCommShrink)        \
  X(ncclCommRegister) X(ncclCommDeregister) X(ncclRedOpCreatePreMulSum) X(ncclRedOpDestroy)             \
  X(ncclReduce) X(ncclBcast) X(ncclReduceScatter) X(ncclAllGather) X(ncclAlltoAll) X(ncclGather)        \
  X(ncclScatter) SZI_REAL_NCCL_WINDOW_FUNCS(X) SZI_REAL_NCCL_SIM_FUNCS(X)

struct RealNccl {
#define SZI_REAL_MEMBER(f) decltype(&::f) f = nullptr;
  SZI_REAL_NCCL_FUNCS(SZI_REAL_MEMBER)
#undef SZI_REAL_MEMBER
  const char* where = "";  // the file the functions came from, for messages
};

// The table, resolved once, at the first call: from the library SZ_REAL_NCCL names (a path, loaded
// here) when it is set, else dlsym(RTLD_NEXT) (the NCCL after this library in the global search
// order: LD_PRELOAD use), else the libnccl.so.2 already loaded (a program that loaded it
// RTLD_LOCAL, as Python extension modules are: torch's bundled nvidia-nccl once torch is
// imported), else libnccl.so.2 loaded here. Entries that resolve into this library are dropped.
const RealNccl& realNccl();

// For a call whose entry is null: WARNs once per function and returns ncclInvalidUsage.
ncclResult_t missingReal(const char* function);

}  // namespace szi

// Calls the real `fn` with the arguments that follow, or fails as missingReal says.
#define SZI_REAL(fn, ...) \
  (szi::realNccl().fn ? szi::realNccl().fn(__VA_ARGS__) : szi::missingReal(#fn))
