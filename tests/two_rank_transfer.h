// Rank 0 sends buffers to rank 1 (sztest::onTwoRanks: two threads on the tcp wire) and the ratio
// each send got, for the tests of the communicator's codebooks (tests/comm_codebook_test.cc,
// tests/comm_host_v2_types_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codec/dtype.h"
#include "splitzip.h"
#include "two_ranks.h"

namespace sztest {

struct Transfer {
  std::vector<double> ratios;  // per send: its raw over its wire bytes
  szStats_t stats{};           // the sender's, after the last send
};

// Rank 0 sends each buffer of `data` as `type` `sends` times to rank 1, which receives each into
// a buffer filled with 0xA5 and checks every byte; `configure(cfg)` sets both ranks' config.
template <class Configure>
Transfer sendEach(szDataType_t type, const std::vector<std::vector<uint8_t>>& data, int sends, Configure configure) {
  Transfer run;
  const size_t elem = szTypeSize(type);
  onTwoRanks(configure, [&](int rank, szComm_t comm) {
    szStats_t last{};
    for (const std::vector<uint8_t>& d : data)
      for (int i = 0; i < sends; ++i) {
        if (rank == 0) {
          ASSERT_EQ(szSend(d.data(), d.size() / elem, type, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
          szStats_t now;
          ASSERT_EQ(szCommGetStats(comm, &now), szSuccess);
          run.ratios.push_back(double(now.rawBytes - last.rawBytes) / double(now.wireBytes - last.wireBytes));
          last = now;
        } else {
          std::vector<uint8_t> got(d.size(), 0xA5);
          ASSERT_EQ(szRecv(got.data(), d.size() / elem, type, 0, comm, nullptr), szSuccess) << szGetLastError(comm);
          ASSERT_TRUE(got == d) << sz::szTypeName(type) << ", " << d.size() / elem << " elements, send " << i
                                << ": received bytes differ";
        }
      }
    if (rank == 0) run.stats = last;
  });
  return run;
}

}  // namespace sztest
