// Issue 11, item 6: a receive that posts more elements than the send (codec off, tcp wire, two
// ranks as threads) is szInvalidUsage on both sides on every run, whichever side tears its
// communicator down first: the receiver aborts the moment its szRecv returns (closing sockets
// that still hold unread slices, which resets them under the sender), or the sender does.
// 20 repetitions of each order, bounded by the communicator's timeout.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "splitzip.h"

namespace {

constexpr int kTimeoutMs = 10000;
constexpr int kRepetitions = 20;

void mismatchOnce(bool receiverClosesFirst, size_t count, szResult_t results[2], std::string errors[2]) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; rank++)
    ranks.emplace_back([&, rank] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      cfg.codec = SZ_CODEC_OFF;
      cfg.timeoutMs = kTimeoutMs;
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      std::vector<uint16_t> buf(count + 1000, uint16_t(0x3F80));
      results[rank] = rank == 0 ? szSend(buf.data(), count, szBfloat16, 1, comm, nullptr)
                                : szRecv(buf.data(), count + 1000, szBfloat16, 0, comm, nullptr);
      errors[rank] = szGetLastError(comm);
      bool closesFirst = (rank == 1) == receiverClosesFirst;
      if (!closesFirst) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      szCommAbort(comm);
    });
  for (std::thread& t : ranks) t.join();
}

TEST(CommMismatch, LargerReceiveIsInvalidUsageOnBothSidesEveryRun) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  for (bool receiverClosesFirst : {true, false})
    for (size_t count : {size_t(1000), size_t(4) << 20}) {  // one slice; more than the socket buffers
      int wrong = 0;
      for (int run = 0; run < kRepetitions; run++) {
        szResult_t results[2] = {szInternalError, szInternalError};
        std::string errors[2];
        mismatchOnce(receiverClosesFirst, count, results, errors);
        wrong += results[0] != szInvalidUsage || results[1] != szInvalidUsage;
        EXPECT_EQ(results[0], szInvalidUsage) << "run " << run << ", sender: " << errors[0];
        EXPECT_EQ(results[1], szInvalidUsage) << "run " << run << ", receiver: " << errors[1];
      }
      EXPECT_EQ(wrong, 0) << (receiverClosesFirst ? "receiver" : "sender") << " closes first, " << count
                          << " elements: " << wrong << " of " << kRepetitions << " runs had another result";
    }
}

}  // namespace
