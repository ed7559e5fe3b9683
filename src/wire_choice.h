// The wire of every pair of ranks (no szConfig_t.wire, no SZ_WIRE), chosen at init from where
// the ranks are, the same on every rank, as NCCL picks a transport per peer: each rank tells the
// others its node, process and GPU (RankPlacement) and which GPUs of its node it reaches
// peer-to-peer; then, for each pair, the first of:
//   tcp   either rank has no GPU; or the two are processes sharing one GPU (NCCL refuses them,
//         and their kernels time-slice: a flag round trip between two processes' kernels takes
//         ~4.5 ms);
//   ipc   one node, and one GPU shared by threads of one process or two GPUs reaching each other
//         peer-to-peer (NVLink or PCIe);
//   nccl  any other pair, where NCCL can serve the communicator (every rank has a GPU of its own);
//   tcp   otherwise.
// A decode rank that receives from a prefill rank of its node and one of another node then
// takes ipc for the first and nccl for the second. SZ_WIRE / szConfig_t.wire names one wire for
// every pair. Host buffers take tcp on every pair but ib's, which carries them in host slots of
// its own (docs/PIPELINE.md). The ib wire is taken only when named (it has not yet run on RDMA
// hardware).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "splitzip.h"

struct szBootstrap;

namespace sz {

struct RankPlacement {
  uint64_t host = 0;   // szHostHash()
  int32_t pid = 0;
  int32_t hasGpu = 0;  // a CUDA device is current
  char gpu[32] = {0};  // its PCI bus id ("0000:1b:00.0"), the GPU's identity on the node
};

struct Placements {
  std::vector<RankPlacement> ranks;  // by rank
  // reach[a * n + b]: rank a's GPU stores into rank b's peer-to-peer (same node, or same GPU).
  std::vector<uint8_t> reach;
  bool reaches(int a, int b) const { return reach[size_t(a) * ranks.size() + size_t(b)] != 0; }
};

// The wires of a communicator: `wires` are the distinct ones its pairs use (every rank connects
// each, as connecting is collective), `pair[a * n + b]` the index of the wire of ranks a and b
// (-1 for a == b).
struct WirePlan {
  std::vector<std::string> wires;
  std::vector<int> pair;
  int of(int a, int b, int nranks) const { return pair[size_t(a) * size_t(nranks) + size_t(b)]; }
  // The wires joined by '+' (the configuration check and messages): "ipc", "ipc+nccl".
  std::string name() const;
};

// The plan for placements that every rank sees alike; `forced` (non-empty: SZ_WIRE) for every pair.
WirePlan planWires(const Placements& p, const std::string& forced);

// Collective over the bootstrap: gathers every rank's placement (this rank's from its current
// CUDA device) and which GPUs of its node each rank reaches.
szResult_t gatherPlacements(szBootstrap* bootstrap, Placements* out);

}  // namespace sz
