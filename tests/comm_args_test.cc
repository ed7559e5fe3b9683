// Communicator calls with bad arguments, in one process: each fails with the documented code
// and never touches the network.
#include <gtest/gtest.h>

#include "splitzip.h"

namespace {

TEST(CommArgs, InitRejectsBadRanksAndConfig) {
  szUniqueId id{};
  szComm_t comm = reinterpret_cast<szComm_t>(0x1);
  EXPECT_EQ(szCommInitRank(&comm, 2, id, 2), szInvalidArgument);
  EXPECT_EQ(comm, nullptr) << "a failed init leaves no communicator";
  EXPECT_EQ(szCommInitRank(&comm, 0, id, 0), szInvalidArgument);
  EXPECT_EQ(szCommInitRank(&comm, 268435456, id, 0), szInvalidArgument) << "more ranks than the library allows";
  EXPECT_EQ(szCommInitRank(nullptr, 2, id, 0), szInvalidArgument);
  szConfig_t bad = SZ_CONFIG_INITIALIZER;
  bad.magic = 0;
  EXPECT_EQ(szCommInitRankConfig(&comm, 1, id, 0, &bad), szInvalidArgument);
  szConfig_t newer = SZ_CONFIG_INITIALIZER;
  newer.version = SZ_VERSION_CODE + 1;
  EXPECT_EQ(szCommInitRankConfig(&comm, 1, id, 0, &newer), szInvalidArgument);
  szConfig_t depth = SZ_CONFIG_INITIALIZER;
  depth.pipelineDepth = 1000;
  EXPECT_EQ(szCommInitRankConfig(&comm, 1, id, 0, &depth), szInvalidArgument);
  // Slices whose slots would overflow the ring's size (2^60 x 16 slots wrapped to 4 KiB, and a
  // slice that rounds up to 0, crashed a review build) are refused before anything is allocated.
  for (size_t slice : {size_t(1) << 60, ~size_t(0) - 600, (size_t(1) << 30) + 1}) {
    szConfig_t huge = SZ_CONFIG_INITIALIZER;
    huge.sliceBytes = slice;
    EXPECT_EQ(szCommInitRankConfig(&comm, 1, id, 0, &huge), szInvalidArgument) << slice;
  }
}

TEST(CommArgs, InitFromNcclRejectsNull) {
  szComm_t comm = nullptr;
  szResult_t res = szCommInitFromNccl(&comm, nullptr, nullptr);
  EXPECT_TRUE(res == szInvalidArgument || res == szUnhandledCudaError) << szGetErrorString(res);
  EXPECT_NE(std::string(szGetLastError(nullptr)), "");
}

TEST(CommArgs, CallsWithoutCommunicator) {
  char buf[16] = {};
  EXPECT_EQ(szSend(buf, 4, szBfloat16, 1, nullptr, nullptr), szInvalidArgument);
  EXPECT_EQ(szRecv(buf, 4, szBfloat16, 1, nullptr, nullptr), szInvalidArgument);
  EXPECT_EQ(szGroupEnd(), szInvalidUsage) << "szGroupEnd without szGroupStart";
  int n = 0;
  EXPECT_EQ(szCommCount(nullptr, &n), szInvalidArgument);
  EXPECT_EQ(szCommAbort(nullptr), szSuccess);
  // An invalid call inside a group fails the group at szGroupEnd too.
  EXPECT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(buf, 4, szBfloat16, 1, nullptr, nullptr), szInvalidArgument);
  EXPECT_EQ(szGroupEnd(), szInvalidArgument);
}

}  // namespace
