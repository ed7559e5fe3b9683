// The wire of every pair of ranks from their placements (wire_choice.h).
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

namespace {

// The wire of ranks a and b (a != b); `ncclServes`: every rank has a GPU of its own.
const char* pairWire(const Placements& p, int a, int b, bool ncclServes) {
  const RankPlacement &x = p.ranks[size_t(a)], &y = p.ranks[size_t(b)];
  if (!x.hasGpu || !y.hasGpu) return "tcp";
  const bool sameGpu = x.host == y.host && strncmp(x.gpu, y.gpu, sizeof(x.gpu)) == 0;
  if (sameGpu) return x.pid == y.pid ? "ipc" : "tcp";
  if (x.host == y.host && p.reaches(a, b) && p.reaches(b, a)) return "ipc";
  return ncclServes ? "nccl" : "tcp";
}

}  // namespace

std::string WirePlan::name() const {
  std::string out;
  for (const std::string& w : wires) out += (out.empty() ? "" : "+") + w;
  return out;
}

WirePlan planWires(const Placements& p, const std::string& forced) {
  const int n = int(p.ranks.size());
  bool ncclServes = true;  // NCCL refuses a communicator with two ranks on one GPU
  for (int a = 0; a < n; ++a) {
    ncclServes = ncclServes && p.ranks[size_t(a)].hasGpu;
    for (int b = 0; b < a; ++b)
      ncclServes = ncclServes && !(p.ranks[size_t(a)].host == p.ranks[size_t(b)].host &&
                                   strncmp(p.ranks[size_t(a)].gpu, p.ranks[size_t(b)].gpu, sizeof(RankPlacement::gpu)) == 0);
  }
  WirePlan plan;
  plan.pair.assign(size_t(n) * size_t(n), -1);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const std::string w = forced.empty() ? pairWire(p, a, b, ncclServes) : forced;
      size_t i = 0;
      while (i < plan.wires.size() && plan.wires[i] != w) ++i;
      if (i == plan.wires.size()) plan.wires.push_back(w);
      plan.pair[size_t(a) * size_t(n) + size_t(b)] = int(i);
    }
  if (plan.wires.empty()) plan.wires.push_back(forced.empty() ? (p.ranks[0].hasGpu ? "ipc" : "tcp") : forced);  // a rank alone
  return plan;
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

szResult_t gatherPlacements(szBootstrap* bootstrap, Placements* out) {
  const int nranks = szBootstrapNranks(bootstrap), rank = szBootstrapRank(bootstrap);
  std::vector<RankPlacement>& all = out->ranks;
  all.assign(static_cast<size_t>(nranks), RankPlacement{});
  RankPlacement& me = all[size_t(rank)];
  me.host = szHostHash();
  me.pid = int32_t(getpid());
#if SZ_HAVE_CUDA
  me.hasGpu = currentGpu(&me);
#endif
  SZCHECK(szBootstrapAllGather(bootstrap, all.data(), sizeof(RankPlacement)));
  // Second round: which GPUs of its node this rank's GPU reaches.
  out->reach.assign(size_t(nranks) * size_t(nranks), 0);
  uint8_t* mine = &out->reach[size_t(rank) * size_t(nranks)];
#if SZ_HAVE_CUDA
  for (int r = 0; r < nranks; ++r) {
    const RankPlacement& o = all[size_t(r)];
    mine[r] = me.hasGpu && o.hasGpu && o.host == me.host && reaches(o.gpu);
  }
#else
  (void)mine;
#endif
  return szBootstrapAllGather(bootstrap, out->reach.data(), size_t(nranks));
}

}  // namespace sz
