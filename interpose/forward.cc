// The rest of NCCL's host API (nccl.h), forwarded untouched to the real NCCL (real_nccl.h), so
// that the interposer is a complete NCCL for programs that load it as their NCCL with dlopen
// (vLLM's pynccl through VLLM_NCCL_SO_PATH, cupy, nccl4py) and resolve every function they call
// in it. The collectives on an interposed communicator run in NCCL as they would without the
// interposer (the communicator handle is NCCL's own); inside a group they join NCCL's group,
// which ends at the interposer's ncclGroupEnd. Communicators made by ncclCommInitRankScalable and
// ncclCommShrink are NCCL's alone: their sends and receives are forwarded too. NCCL's device API
// (nccl_device.h) is not exported: a program using it links NCCL itself.

#include "interpose/exports.h"
#include "interpose/group_state.h"
#include "interpose/real_nccl.h"

using namespace szi;

namespace {

// A forwarded call's result; a failure clears the thread's SplitZip message, so that
// ncclGetLastError names NCCL's newest failure (exports.h).
ncclResult_t forwarded(ncclResult_t r) {
  if (r != ncclSuccess) threadSzError().clear();
  return r;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) { return forwarded(SZI_REAL(ncclGetVersion, version)); }
const char* ncclGetErrorString(ncclResult_t result) {
  return realNccl().ncclGetErrorString ? realNccl().ncclGetErrorString(result) : "unknown NCCL error (no NCCL found)";
}
ncclResult_t ncclMemAlloc(void** ptr, size_t size) { return forwarded(SZI_REAL(ncclMemAlloc, ptr, size)); }
ncclResult_t ncclMemFree(void* ptr) { return forwarded(SZI_REAL(ncclMemFree, ptr)); }

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  return forwarded(SZI_REAL(ncclCommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config));
}
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  return forwarded(
      SZI_REAL(ncclCommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags));
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return forwarded(SZI_REAL(ncclCommCount, comm, count));
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return forwarded(SZI_REAL(ncclCommCuDevice, comm, device));
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return forwarded(SZI_REAL(ncclCommUserRank, comm, rank));
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return forwarded(SZI_REAL(ncclCommRegister, comm, buff, size, handle));
}
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return forwarded(SZI_REAL(ncclCommDeregister, comm, handle));
}
#if SZI_HAVE_WINDOWS
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  return forwarded(SZI_REAL(ncclCommWindowRegister, comm, buff, size, win, winFlags));
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return forwarded(SZI_REAL(ncclCommWindowDeregister, comm, win));
}
#endif

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return forwarded(SZI_REAL(ncclRedOpCreatePreMulSum, op, scalar, datatype, residence, comm));
}
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return forwarded(SZI_REAL(ncclRedOpDestroy, op, comm));
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclBcast, buff, count, datatype, root, comm, stream));
}
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream));
}
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream));
}
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream));
}
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclAlltoAll, sendbuff, recvbuff, count, datatype, comm, stream));
}
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclGather, sendbuff, recvbuff, count, datatype, root, comm, stream));
}
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return forwarded(SZI_REAL(ncclScatter, sendbuff, recvbuff, count, datatype, root, comm, stream));
}

#if SZI_HAVE_SIM_INFO
// Ends NCCL's group as a simulation. Inside a group the interposer tracks (the interposer on), its
// own group would stay open with SplitZip's operations in it: refused, and the group stays open
// for the ncclGroupEnd that follows.
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  if (!on() || threadGroup().depth() == 0) return forwarded(SZI_REAL(ncclGroupSimulateEnd, simInfo));
  threadSzError() = "ncclGroupSimulateEnd inside a group is not supported with the SplitZip interposer on (end "
                    "the group with ncclGroupEnd, or set SZ_INTERPOSE=0)";
  return ncclInvalidUsage;
}
#endif

}  // extern "C"
