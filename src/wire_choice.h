// The default wire (no szConfig_t.wire, no SZ_WIRE): chosen at init from where the ranks are,
// the same on every rank, in the order NCCL picks its transports. Each rank tells the others its
// node, process and GPU (RankPlacement); then:
//   tcp   a rank without a GPU; or two processes on one GPU (NCCL refuses them, and their
//         kernels time-slice: a flag round trip between two processes' kernels takes ~4.5 ms);
//   ipc   every rank on one node, each GPU reaching every other one peer-to-peer (NVLink or
//         PCIe), or one GPU shared by threads of one process;
//   nccl  GPUs on several nodes.
// Host buffers travel on every wire (docs/PIPELINE.md). The ib wire is taken only when named.
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip.h"

struct szBootstrap;

namespace sz {

struct RankPlacement {
  uint64_t host = 0;     // szHostHash()
  int32_t pid = 0;
  int32_t hasGpu = 0;    // a CUDA device is current
  char gpu[32] = {0};    // its PCI bus id ("0000:1b:00.0"), the GPU's identity on the node
  int32_t reachesNode = 0;  // this rank's GPU reaches every other GPU of its node's ranks peer-to-peer
};

// The choice for placements that every rank sees alike: "tcp", "ipc" or "nccl".
const char* defaultWire(const std::vector<RankPlacement>& ranks);

// Collective over the bootstrap: gathers every rank's placement (this rank's from its current
// CUDA device), indexed by rank.
szResult_t gatherPlacements(szBootstrap* bootstrap, std::vector<RankPlacement>* ranks);

}  // namespace sz
