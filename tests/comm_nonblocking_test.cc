// Non-blocking init (szConfig_t.blocking = 0), as with NCCL: one thread starts both ranks of a
// communicator, polls szCommGetAsyncError until they are ready, and moves data between them in
// one group spanning both communicators (tcp over loopback, host buffers).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "splitzip.h"

namespace {

szResult_t waitInit(szComm_t comm) {
  szResult_t state = szInProgress;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (szCommGetAsyncError(comm, &state) == szSuccess && state == szInProgress &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return state;
}

TEST(CommNonBlocking, OneThreadStartsBothRanks) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  szConfig_t cfg = SZ_CONFIG_INITIALIZER;
  cfg.wire = "tcp";
  cfg.codec = SZ_CODEC_ON;
  cfg.blocking = 0;
  cfg.timeoutMs = 20000;
  szComm_t comm[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) {
    szResult_t res = szCommInitRankConfig(&comm[r], 2, id, r, &cfg);
    ASSERT_EQ(res, szInProgress) << szGetLastError(nullptr);
    ASSERT_NE(comm[r], nullptr);
  }
  std::vector<uint16_t> sent(100003), got(sent.size(), 0);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = uint16_t(0x3F00 + (i * 7919) % 256);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(waitInit(comm[r]), szSuccess) << szGetLastError(comm[r]);
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(sent.data(), sent.size(), szBfloat16, 1, comm[0], nullptr), szSuccess);
  EXPECT_EQ(szRecv(got.data(), got.size(), szBfloat16, 0, comm[1], nullptr), szSuccess);
  EXPECT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(memcmp(sent.data(), got.data(), sent.size() * 2), 0);
  for (szComm_t c : comm) EXPECT_EQ(szCommDestroy(c), szSuccess);
}

TEST(CommNonBlocking, CallsBeforeTheInitEndsAreRefusedAndAFailedInitKeepsItsMessage) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  szConfig_t cfg = SZ_CONFIG_INITIALIZER;
  cfg.wire = "tcp";
  cfg.blocking = 0;
  cfg.timeoutMs = 1500;
  szComm_t comm = nullptr;
  ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, 0, &cfg), szInProgress);  // rank 1 never comes
  char buf[8] = {};
  EXPECT_EQ(szSend(buf, 4, szBfloat16, 1, comm, nullptr), szInvalidUsage);
  EXPECT_EQ(szCommFinalize(comm), szInProgress);
  EXPECT_EQ(waitInit(comm), szTimeout);
  EXPECT_STRNE(szGetLastError(comm), "");
  EXPECT_EQ(szCommAbort(comm), szSuccess);
}

}  // namespace
