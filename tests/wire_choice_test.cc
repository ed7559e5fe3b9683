// The default wire (src/wire_choice.h) from synthetic placements: every case NCCL users meet on
// one machine or several, with and without GPUs, and the ones NCCL itself refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "src/wire_choice.h"

namespace {

sz::RankPlacement at(uint64_t host, int pid, const char* gpu, bool reaches = true) {
  sz::RankPlacement r;
  r.host = host;
  r.pid = pid;
  r.hasGpu = gpu != nullptr;
  if (gpu) strncpy(r.gpu, gpu, sizeof(r.gpu) - 1);
  r.reachesNode = gpu != nullptr && reaches;
  return r;
}

std::string choose(const std::vector<sz::RankPlacement>& ranks) { return sz::defaultWire(ranks); }

const char* kGpu0 = "0000:1b:00.0";
const char* kGpu1 = "0000:43:00.0";

TEST(WireChoice, RanksWithoutGpusTakeTcp) {
  EXPECT_EQ(choose({at(1, 10, nullptr)}), "tcp");
  EXPECT_EQ(choose({at(1, 10, nullptr), at(1, 11, nullptr)}), "tcp");
  EXPECT_EQ(choose({at(1, 10, nullptr), at(2, 11, nullptr)}), "tcp");
  // One rank without a GPU among GPU ranks: only tcp serves it.
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 10, nullptr)}), "tcp");
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(2, 11, nullptr)}), "tcp");
}

TEST(WireChoice, ThreadsSharingOneGpuTakeIpc) {
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 10, kGpu0)}), "ipc");
  EXPECT_EQ(choose({at(1, 10, kGpu0)}), "ipc");  // a rank alone
}

TEST(WireChoice, ProcessesSharingOneGpuTakeTcp) {
  // NCCL refuses two ranks on one GPU, and the kernels of two processes time-slice.
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 11, kGpu0)}), "tcp");
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 11, kGpu1), at(1, 12, kGpu1)}), "tcp");
  // Also when the rest of the communicator spans nodes.
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 11, kGpu0), at(2, 12, kGpu0)}), "tcp");
  // The same bus id on two nodes is two GPUs.
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(2, 10, kGpu0)}), "nccl");
}

TEST(WireChoice, GpusOfOneNodeTakeIpcWhenPeerToPeer) {
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 11, kGpu1)}), "ipc");
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 10, kGpu1)}), "ipc");
  // A GPU that cannot reach another one peer-to-peer (PCIe without P2P, or hidden from the
  // process by CUDA_VISIBLE_DEVICES): NCCL finds its own way.
  EXPECT_EQ(choose({at(1, 10, kGpu0, false), at(1, 11, kGpu1)}), "nccl");
}

TEST(WireChoice, GpusOfSeveralNodesTakeNccl) {
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(2, 11, kGpu0)}), "nccl");
  EXPECT_EQ(choose({at(1, 10, kGpu0), at(1, 11, kGpu1), at(2, 12, kGpu0), at(2, 13, kGpu1)}), "nccl");
}

}  // namespace
