// Two ranks as two threads of one process on the tcp wire, for the CPU tests of the
// communicator's codec paths: each rank gets a communicator (codec on, a 30 s timeout, then
// whatever `configure(cfg)` sets), runs `body(rank, comm)` and destroys it (`abort`: aborts it,
// for a body that fails the communicator). A failed assertion in `body` ends that rank's body;
// its peer then fails on the timeout rather than hanging.
#pragma once

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "splitzip.h"

namespace sztest {

template <class Configure, class Body>
void onTwoRanks(Configure configure, Body body, bool abort = false) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; rank++)
    ranks.emplace_back([&, rank] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      cfg.codec = SZ_CODEC_ON;
      cfg.timeoutMs = 30000;
      configure(cfg);
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      body(rank, comm);
      if (abort) EXPECT_EQ(szCommAbort(comm), szSuccess);
      else EXPECT_EQ(szCommDestroy(comm), szSuccess);
    });
  for (std::thread& t : ranks) t.join();
}

}  // namespace sztest
