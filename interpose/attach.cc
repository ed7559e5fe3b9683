// The collective making of SplitZip communicators (attach.h).
#include "interpose/attach.h"

#include <cuda_runtime.h>

#include <thread>

#include "base/debug.h"
#include "base/checks.h"
#include "interpose/handshake.h"
#include "interpose/real_nccl.h"
#include "interpose/registry.h"

namespace szi {

namespace {

// All ranks of `comm` learn whether every rank's `ok` is true (an NCCL all-reduce, min). False
// when this rank cannot even stage the vote: CUDA is then unusable here, and NCCL with it.
bool everyRank(ncclComm_t comm, bool ok) {
  int* d = nullptr;
  cudaStream_t stream = nullptr;
  int vote = ok ? 1 : 0;
  bool agreed = cudaMalloc(&d, sizeof(int)) == cudaSuccess &&
                cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
                cudaMemcpy(d, &vote, sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess &&
                SZI_REAL(ncclAllReduce, d, d, 1, ncclInt32, ncclMin, comm, stream) == ncclSuccess &&
                cudaStreamSynchronize(stream) == cudaSuccess &&
                cudaMemcpy(&vote, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
  if (!agreed) cudaGetLastError();
  if (stream) cudaStreamDestroy(stream);
  cudaFree(d);
  return agreed && vote == 1;
}

void attachOne(const PendingAttach& p, bool initOk) {
  auto comm = static_cast<ncclComm_t>(p.comm);
  bool allowed = initOk && comm != nullptr;
  if (p.client) {
    bool all = false;
    if (p.client->finish(initOk, &all) != szSuccess)
      WARN("SplitZip interposer: handshake failed (%s): the communicator is forwarded to NCCL", szThreadLastError());
    allowed = allowed && all;
    if (initOk && !all)
      INFO(SZ_INIT, "SplitZip interposer: NCCL communicator %p forwarded: not every rank runs the interposer "
           "with the same SZ_CODEC and SZ_AUTO_MIN_BYTES", p.comm);
  }
  if (!allowed) return;
  int device = -1, rank = 0, nranks = 0, saved = -1;
  SZI_REAL(ncclCommCuDevice, comm, &device);
  SZI_REAL(ncclCommUserRank, comm, &rank);
  SZI_REAL(ncclCommCount, comm, &nranks);
  if (device >= 0 && cudaGetDevice(&saved) == cudaSuccess && saved != device) cudaSetDevice(device);
  szComm_t sz = nullptr;
  szConfig_t config = SZ_CONFIG_INITIALIZER;
  szResult_t res = szCommInitFromNccl(&sz, comm, &config);
  if (res != szSuccess)
    WARN("SplitZip interposer: rank %d/%d: szCommInitFromNccl failed (%s: %s)", rank, nranks, szResultName(res),
         szThreadLastError());
  if (!everyRank(comm, res == szSuccess)) {
    if (sz) szCommAbort(sz);
    INFO(SZ_INIT, "SplitZip interposer: rank %d/%d: NCCL communicator %p forwarded: a rank could not make its "
         "SplitZip communicator", rank, nranks, p.comm);
  } else {
    auto e = std::make_shared<Entry>();
    e->nccl = p.comm;
    e->sz = sz;
    e->rank = rank;
    e->nranks = nranks;
    registryAdd(e);
    INFO(SZ_INIT, "SplitZip interposer: rank %d/%d: NCCL communicator %p interposed (%s): BF16, FP8 E5M2 and "
         "FP32 sends and receives go through SplitZip", rank, nranks, p.comm,
         p.fromSplit ? "split from an interposed one" : p.client ? "every rank registered" : "ncclCommInitAll");
  }
  if (saved >= 0 && saved != device) cudaSetDevice(saved);
}

}  // namespace

void attachAll(const std::vector<PendingAttach>& list, bool initOk) {
  if (list.size() == 1) {
    attachOne(list[0], initOk);
    return;
  }
  std::vector<std::thread> threads;
  for (const PendingAttach& p : list) threads.emplace_back(attachOne, p, initOk);
  for (std::thread& t : threads) t.join();
}

}  // namespace szi
