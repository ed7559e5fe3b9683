// The default wire from the ranks' placements (wire_choice.h).
#include "src/wire_choice.h"

#include <unistd.h>

#include <cstring>

#include "base/bootstrap.h"
#include "base/checks.h"
#include "base/socket.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace sz {

const char* defaultWire(const std::vector<RankPlacement>& ranks) {
  bool oneNode = true, reach = true;
  for (const RankPlacement& r : ranks) {
    if (!r.hasGpu) return "tcp";
    oneNode = oneNode && r.host == ranks[0].host;
    reach = reach && r.reachesNode;
    for (const RankPlacement& o : ranks)
      if (o.host == r.host && o.pid != r.pid && strncmp(o.gpu, r.gpu, sizeof(r.gpu)) == 0) return "tcp";
  }
  return oneNode && reach ? "ipc" : "nccl";
}

namespace {

#if SZ_HAVE_CUDA
// This rank's GPU: its PCI bus id, or false without a current device.
bool currentGpu(RankPlacement* me) {
  int device = -1, count = 0;
  bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && cudaGetDevice(&device) == cudaSuccess &&
            cudaDeviceGetPCIBusId(me->gpu, int(sizeof(me->gpu)) - 1, device) == cudaSuccess;
  cudaGetLastError();  // a machine without a driver leaves an error behind
  return ok;
}

// Whether this rank's GPU can store into `gpu` (another GPU of the node) peer-to-peer: it must be
// visible to this process and peer-capable.
bool reaches(const char* gpu) {
  int mine = -1, theirs = -1, can = 0;
  bool ok = cudaGetDevice(&mine) == cudaSuccess && cudaDeviceGetByPCIBusId(&theirs, gpu) == cudaSuccess &&
            (theirs == mine || (cudaDeviceCanAccessPeer(&can, mine, theirs) == cudaSuccess && can));
  cudaGetLastError();
  return ok;
}
#endif

}  // namespace

szResult_t gatherPlacements(szBootstrap* bootstrap, std::vector<RankPlacement>* ranks) {
  const int nranks = szBootstrapNranks(bootstrap), rank = szBootstrapRank(bootstrap);
  std::vector<RankPlacement>& all = *ranks;
  all.assign(static_cast<size_t>(nranks), RankPlacement{});
  RankPlacement& me = all[size_t(rank)];
  me.host = szHostHash();
  me.pid = int32_t(getpid());
#if SZ_HAVE_CUDA
  me.hasGpu = currentGpu(&me);
#endif
  SZCHECK(szBootstrapAllGather(bootstrap, all.data(), sizeof(RankPlacement)));
  // Second round: whether this rank's GPU reaches the others of its node.
  std::vector<int32_t> verdicts(static_cast<size_t>(nranks));
  int32_t& mine = verdicts[size_t(rank)];
  mine = me.hasGpu;
#if SZ_HAVE_CUDA
  for (const RankPlacement& o : all)
    if (mine && o.hasGpu && o.host == me.host) mine = reaches(o.gpu);
#endif
  SZCHECK(szBootstrapAllGather(bootstrap, verdicts.data(), sizeof(int32_t)));
  for (int r = 0; r < nranks; ++r) all[size_t(r)].reachesNode = verdicts[size_t(r)];
  return szSuccess;
}

}  // namespace sz
