// Versions that meet (the one-protocol issue, item 7): the slot protocol's version is the first
// collective of every init. A rank of another version (here a stand-in that joins the bootstrap
// and says version 1, the slice pipeline's) makes szCommInitRank fail with szInvalidUsage and one
// message naming both versions, at once rather than at the timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/bootstrap.h"
#include "kernels/slot_format.h"
#include "splitzip.h"

namespace {

TEST(CommVersion, ARankOfAnotherProtocolVersionFailsInitNamingBoth) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  szResult_t res = szInternalError;
  std::string why;
  double seconds = 0;
  std::thread real([&] {
    szConfig_t cfg = SZ_CONFIG_INITIALIZER;
    cfg.wire = "tcp";
    cfg.timeoutMs = 20000;
    szComm_t comm = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    res = szCommInitRankConfig(&comm, 2, id, 0, &cfg);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    why = szGetLastError(nullptr);
    if (comm) szCommDestroy(comm);
  });
  szBootstrap* b = nullptr;
  ASSERT_EQ(szBootstrapInit(id, 1, 2, 20000, &b), szSuccess) << szGetLastError(nullptr);
  uint32_t versions[2] = {0, sz::kSlotProtocolVersion - 1};
  EXPECT_EQ(szBootstrapAllGather(b, versions, sizeof(uint32_t)), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(versions[0], sz::kSlotProtocolVersion) << "the real rank's version, as it told it";
  real.join();
  szBootstrapClose(b);
  EXPECT_EQ(res, szInvalidUsage);
  const std::string mine = "version " + std::to_string(sz::kSlotProtocolVersion);
  const std::string theirs = "version " + std::to_string(sz::kSlotProtocolVersion - 1);
  EXPECT_NE(why.find(mine), std::string::npos) << why;
  EXPECT_NE(why.find(theirs), std::string::npos) << why;
  EXPECT_LT(seconds, 10.0) << "the mismatch waited for a timeout";
}

}  // namespace
