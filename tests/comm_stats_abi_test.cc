// szStats_t's size field (include/splitzip.h): a caller of this header gets every counter; a
// caller built against 0.1.0 (whose struct began with rawBytes and had no size, magic or
// version) gets its counters at their old places and nothing written past its struct; a sized
// struct smaller than 0.1.0's counters is refused.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "splitzip.h"
#include "two_ranks.h"

namespace {

// szStats_t as SplitZip 0.1.0 declared it, and a guard after it.
struct Stats010 {
  uint64_t rawBytes, wireBytes, escapes, slices, compressedSlices;
  double encodeSeconds, wireSeconds, decodeSeconds;
  uint64_t recvRawBytes, recvWireBytes, recvSlices, recalibrations;
  double escapeRate;
  uint64_t guard;
};

TEST(CommStatsAbi, SizedAndUnsizedCallersReadTheSameCounters) {
  constexpr size_t n = 300000;
  std::vector<uint16_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = uint16_t(0x3C00 + (i * 7919) % 1024);  // exponents 120..127
  sztest::onTwoRanks([](szConfig_t&) {}, [&](int rank, szComm_t comm) {
    std::vector<uint16_t> got(n);
    if (rank == 0) ASSERT_EQ(szSend(data.data(), n, szBfloat16, 1, comm, nullptr), szSuccess) << szGetLastError(comm);
    else ASSERT_EQ(szRecv(got.data(), n, szBfloat16, 0, comm, nullptr), szSuccess) << szGetLastError(comm);
    szStats_t sized;  // C++: size, magic and version already set (C: SZ_STATS_INITIALIZER)
    EXPECT_EQ(sized.size, sizeof(szStats_t));
    EXPECT_EQ(sized.magic, SZ_STATS_MAGIC);
    ASSERT_EQ(szCommGetStats(comm, &sized), szSuccess);
    const szStats_t c = SZ_STATS_INITIALIZER;
    EXPECT_EQ(c.size, sizeof(szStats_t));

    Stats010 old;
    memset(&old, 0xA5, sizeof(old));  // what a 0.1.0 program's stack may hold: no magic
    ASSERT_EQ(szCommGetStats(comm, reinterpret_cast<szStats_t*>(&old)), szSuccess);
    EXPECT_EQ(old.guard, 0xA5A5A5A5A5A5A5A5ull) << "written past a 0.1.0 struct";
    if (rank == 0) {
      EXPECT_EQ(sized.rawBytes, n * 2);
      EXPECT_GT(sized.compressedSlices, 0u);
      EXPECT_LT(sized.wireBytes, n * 2);
    } else {
      EXPECT_EQ(sized.recvRawBytes, n * 2);
      EXPECT_GT(sized.recvSlices, 0u);
    }
    EXPECT_EQ(old.rawBytes, sized.rawBytes);
    EXPECT_EQ(old.wireBytes, sized.wireBytes);
    EXPECT_EQ(old.compressedSlices, sized.compressedSlices);
    EXPECT_EQ(old.recvRawBytes, sized.recvRawBytes);
    EXPECT_EQ(old.recvSlices, sized.recvSlices);
    EXPECT_EQ(old.escapeRate, sized.escapeRate);

    szStats_t small;
    small.size = sizeof(szStats_t) / 2;
    EXPECT_EQ(szCommGetStats(comm, &small), szInvalidArgument);
    EXPECT_NE(strstr(szGetLastError(nullptr), "SZ_STATS_INITIALIZER"), nullptr) << szGetLastError(nullptr);
  });
}

}  // namespace
