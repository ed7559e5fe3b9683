// NCCL's header with the calls newer than the oldest release SplitZip builds against (2.19).
// The interposer exports and forwards them whatever header it is compiled with, and the real
// NCCL is resolved at run time (real_nccl.h), so each such call whose types every release has is
// declared here too: a header that has it sees an identical redeclaration, one that lacks it (the
// H200 image's 2.28.3 has no ncclCommRevoke) gets it from here. Calls with newer types
// (ncclWindow_t 2.27, ncclSimInfo_t 2.22) are exported only when the header has them
// (SZI_HAVE_WINDOWS, SZI_HAVE_SIM_INFO).
#pragma once

#include <nccl.h>

#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
#define SZI_HAVE_WINDOWS 1
#else
#define SZI_HAVE_WINDOWS 0
#endif
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 22, 0)
#define SZI_HAVE_SIM_INFO 1
#else
#define SZI_HAVE_SIM_INFO 0
#endif

extern "C" {
// NCCL 2.23: a communicator from several unique ids.
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config);
// NCCL 2.27: a communicator without the excluded ranks.
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags);
// NCCL 2.28: the all-to-all, gather and scatter collectives.
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream);
// NCCL 2.28.x: stops a communicator's operations in flight; revokeFlags must be 0.
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
}
