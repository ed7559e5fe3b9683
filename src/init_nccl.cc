// szCommInitFromNccl's rendezvous: rank 0 of an application's NCCL communicator makes a unique
// id and broadcasts it with NCCL, so wrapping a communicator needs no other rendezvous. It calls
// the public szGetUniqueId, so it lives with the communicator, above the wires.
#include <cuda_runtime.h>
#include <nccl.h>

#include "base/checks.h"
#include "src/comm.h"

namespace sz {

szResult_t ncclShareUniqueId(void* ncclComm, szUniqueId* id, int* rank, int* nranks) {
  auto c = static_cast<ncclComm_t>(ncclComm);
  if (ncclCommUserRank(c, rank) != ncclSuccess || ncclCommCount(c, nranks) != ncclSuccess)
    return szSetError(szInvalidArgument, "szCommInitFromNccl: not a usable NCCL communicator");
  if (*rank == 0) SZCHECK(szGetUniqueId(id));
  void* d = nullptr;
  cudaStream_t stream = nullptr;
  szResult_t res = szSuccess;
  if (cudaMalloc(&d, sizeof(*id)) != cudaSuccess || cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      (*rank == 0 && cudaMemcpy(d, id, sizeof(*id), cudaMemcpyHostToDevice) != cudaSuccess))
    res = szSetError(szUnhandledCudaError, "szCommInitFromNccl: cannot stage the unique id on the device");
  if (res == szSuccess && ncclBroadcast(d, d, sizeof(*id), ncclUint8, 0, c, stream) != ncclSuccess)
    res = szSetError(szSystemError, "szCommInitFromNccl: ncclBroadcast of the unique id failed");
  if (res == szSuccess && (cudaStreamSynchronize(stream) != cudaSuccess ||
                           cudaMemcpy(id, d, sizeof(*id), cudaMemcpyDeviceToHost) != cudaSuccess))
    res = szSetError(szUnhandledCudaError, "szCommInitFromNccl: cannot read the unique id back");
  if (stream) cudaStreamDestroy(stream);
  cudaFree(d);
  return res;
}

}  // namespace sz
