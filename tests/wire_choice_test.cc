// The wire of every pair of ranks (src/wire_choice.h) from synthetic placements: every case NCCL
// users meet on one machine or several, with and without GPUs, the ones NCCL itself refuses, and
// communicators whose pairs take different wires (a decode rank with a prefill rank on its node
// and one on another node).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "src/wire_choice.h"

namespace {

struct Rank {
  uint64_t host;
  int pid;
  const char* gpu;       // null: no GPU
  bool reaches = true;   // its GPU reaches every other GPU of its node peer-to-peer
};

sz::Placements placed(const std::vector<Rank>& ranks) {
  sz::Placements p;
  const size_t n = ranks.size();
  for (const Rank& r : ranks) {
    sz::RankPlacement x;
    x.host = r.host;
    x.pid = r.pid;
    x.hasGpu = r.gpu != nullptr;
    if (r.gpu) strncpy(x.gpu, r.gpu, sizeof(x.gpu) - 1);
    p.ranks.push_back(x);
  }
  p.reach.assign(n * n, 0);
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b)
      p.reach[a * n + b] = ranks[a].gpu && ranks[b].gpu && ranks[a].host == ranks[b].host &&
                           (ranks[a].reaches || strcmp(ranks[a].gpu, ranks[b].gpu) == 0);
  return p;
}

// The communicator's wires ("ipc+nccl"), after checking that every pair sees its wire alike.
std::string choose(const std::vector<Rank>& ranks, const std::string& forced = "") {
  const sz::WirePlan plan = sz::planWires(placed(ranks), forced);
  const int n = int(ranks.size());
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      EXPECT_EQ(plan.of(a, b, n), plan.of(b, a, n)) << a << " and " << b;
      if (a == b) EXPECT_EQ(plan.of(a, b, n), -1);
      else EXPECT_GE(plan.of(a, b, n), 0);
    }
  return plan.name();
}

// The wire of ranks a and b.
std::string pair(const std::vector<Rank>& ranks, int a, int b) {
  const sz::WirePlan plan = sz::planWires(placed(ranks), "");
  return plan.wires[size_t(plan.of(a, b, int(ranks.size())))];
}

const char* kGpu0 = "0000:1b:00.0";
const char* kGpu1 = "0000:43:00.0";

TEST(WireChoice, RanksWithoutGpusTakeTcp) {
  EXPECT_EQ(choose({{1, 10, nullptr}}), "tcp");
  EXPECT_EQ(choose({{1, 10, nullptr}, {1, 11, nullptr}}), "tcp");
  EXPECT_EQ(choose({{1, 10, nullptr}, {2, 11, nullptr}}), "tcp");
  EXPECT_EQ(choose({{1, 10, kGpu0}, {2, 11, nullptr}}), "tcp");
}

TEST(WireChoice, ThreadsSharingOneGpuTakeIpc) {
  EXPECT_EQ(choose({{1, 10, kGpu0}, {1, 10, kGpu0}}), "ipc");
  EXPECT_EQ(choose({{1, 10, kGpu0}}), "ipc");  // a rank alone
}

TEST(WireChoice, ProcessesSharingOneGpuTakeTcp) {
  // NCCL refuses two ranks on one GPU, and the kernels of two processes time-slice.
  EXPECT_EQ(choose({{1, 10, kGpu0}, {1, 11, kGpu0}}), "tcp");
  // The same bus id on two nodes is two GPUs.
  EXPECT_EQ(choose({{1, 10, kGpu0}, {2, 10, kGpu0}}), "nccl");
}

TEST(WireChoice, GpusOfOneNodeTakeIpcWhenPeerToPeer) {
  EXPECT_EQ(choose({{1, 10, kGpu0}, {1, 11, kGpu1}}), "ipc");
  EXPECT_EQ(choose({{1, 10, kGpu0}, {1, 10, kGpu1}}), "ipc");
  // A GPU that cannot reach the other one peer-to-peer (PCIe without P2P, or hidden from the
  // process by CUDA_VISIBLE_DEVICES): NCCL finds its own way.
  EXPECT_EQ(choose({{1, 10, kGpu0, false}, {1, 11, kGpu1}}), "nccl");
}

TEST(WireChoice, GpusOfSeveralNodesTakeNccl) {
  EXPECT_EQ(choose({{1, 10, kGpu0}, {2, 11, kGpu0}}), "nccl");
}

TEST(WireChoice, EachPairTakesItsOwnWire) {
  // Two nodes of two GPUs: NVLink within a node, NCCL between them.
  const std::vector<Rank> nodes = {{1, 10, kGpu0}, {1, 11, kGpu1}, {2, 12, kGpu0}, {2, 13, kGpu1}};
  EXPECT_EQ(choose(nodes), "ipc+nccl");
  EXPECT_EQ(pair(nodes, 0, 1), "ipc");
  EXPECT_EQ(pair(nodes, 2, 3), "ipc");
  EXPECT_EQ(pair(nodes, 0, 2), "nccl");
  EXPECT_EQ(pair(nodes, 1, 3), "nccl");
  // Threads of one process on one GPU, and another process on that GPU: ipc between the
  // threads, tcp with the process.
  const std::vector<Rank> shared = {{1, 10, kGpu0}, {1, 10, kGpu0}, {1, 11, kGpu0}};
  EXPECT_EQ(choose(shared), "ipc+tcp");
  EXPECT_EQ(pair(shared, 0, 1), "ipc");
  EXPECT_EQ(pair(shared, 0, 2), "tcp");
  EXPECT_EQ(pair(shared, 1, 2), "tcp");
  // A CPU rank beside two GPUs of one node: ipc between the GPUs, tcp with the CPU rank.
  const std::vector<Rank> cpu = {{1, 10, kGpu0}, {1, 11, kGpu1}, {1, 12, nullptr}};
  EXPECT_EQ(choose(cpu), "ipc+tcp");
  EXPECT_EQ(pair(cpu, 0, 1), "ipc");
  EXPECT_EQ(pair(cpu, 0, 2), "tcp");
}

TEST(WireChoice, PairsNcclCannotServeTakeTcp) {
  // NCCL needs every rank of the communicator on a GPU of its own: with a CPU rank, or two
  // processes sharing a GPU anywhere, the pairs between nodes take tcp.
  const std::vector<Rank> cpu = {{1, 10, kGpu0}, {2, 11, kGpu0}, {2, 12, nullptr}};
  EXPECT_EQ(pair(cpu, 0, 1), "tcp");
  const std::vector<Rank> shared = {{1, 10, kGpu0}, {1, 10, kGpu0}, {2, 12, kGpu0}};
  EXPECT_EQ(choose(shared), "ipc+tcp");
  EXPECT_EQ(pair(shared, 0, 2), "tcp");
}

TEST(WireChoice, ANamedWireServesEveryPair) {
  const std::vector<Rank> nodes = {{1, 10, kGpu0}, {1, 11, kGpu1}, {2, 12, kGpu0}};
  EXPECT_EQ(choose(nodes, "tcp"), "tcp");
  EXPECT_EQ(choose(nodes, "ib"), "ib");
  EXPECT_EQ(choose({{1, 10, kGpu0}}, "nccl"), "nccl");
}

}  // namespace
