// Send/receive to self (peer == own rank), as NCCL allows them: matched within a group, copied
// in memory; a send to self without its receive, or of another count or type, is
// szInvalidUsage and copies nothing. Host buffers on the tcp wire.
#include <gtest/gtest.h>

#include <numeric>
#include <thread>
#include <vector>

#include "splitzip.h"

namespace {

// A communicator of `nranks` ranks, one thread each, on the tcp wire; runs body(comm, rank).
template <typename Body>
void withRanks(int nranks, Body body) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < nranks; ++rank)
    ranks.emplace_back([&, rank] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "tcp";
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, nranks, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      body(comm, rank);
      EXPECT_EQ(szCommDestroy(comm), szSuccess);
    });
  for (std::thread& t : ranks) t.join();
}

std::vector<uint16_t> values(size_t n, uint16_t first) {
  std::vector<uint16_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(CommSelf, RoundTripInOneGroup) {
  withRanks(1, [](szComm_t comm, int rank) {
    std::vector<uint16_t> send = values(100000, 7), recv(send.size(), 0);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(send.data(), send.size(), szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(recv.data(), recv.size(), szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(recv, send);
    szStats_t st;
    ASSERT_EQ(szCommGetStats(comm, &st), szSuccess);
    EXPECT_EQ(st.rawBytes, 0u) << "a send to self is a copy: nothing on the wire";
  });
}

TEST(CommSelf, VectorsSplitDifferentlyAndInPlace) {
  withRanks(1, [](szComm_t comm, int rank) {
    std::vector<uint16_t> a = values(300, 1), b = values(700, 301), x(600, 0), y(400, 0);
    const void* sends[] = {a.data(), b.data()};
    void* recvs[] = {x.data(), y.data()};
    size_t sendCounts[] = {a.size(), b.size()}, recvCounts[] = {x.size(), y.size()};
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSendv(sends, sendCounts, 2, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecvv(recvs, recvCounts, 2, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
    std::vector<uint16_t> got(x), want(a);
    got.insert(got.end(), y.begin(), y.end());
    want.insert(want.end(), b.begin(), b.end());
    EXPECT_EQ(got, want);
    ASSERT_EQ(szGroupStart(), szSuccess);  // in place: the same buffer both ways
    ASSERT_EQ(szSend(a.data(), a.size(), szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(a.data(), a.size(), szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(a, values(300, 1));
  });
}

// All-to-all: every rank sends to every rank, itself included, in one group.
TEST(CommSelf, AllToAllWithPeers) {
  const int n = 3;
  const size_t count = 5000;
  withRanks(n, [&](szComm_t comm, int rank) {
    std::vector<std::vector<uint16_t>> send(n), recv(n, std::vector<uint16_t>(count, 0));
    for (int peer = 0; peer < n; ++peer) send[size_t(peer)] = values(count, uint16_t(rank * 100 + peer));
    ASSERT_EQ(szGroupStart(), szSuccess);
    for (int peer = 0; peer < n; ++peer) {
      ASSERT_EQ(szSend(send[size_t(peer)].data(), count, szBfloat16, peer, comm, nullptr), szSuccess);
      ASSERT_EQ(szRecv(recv[size_t(peer)].data(), count, szBfloat16, peer, comm, nullptr), szSuccess);
    }
    ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
    for (int peer = 0; peer < n; ++peer)
      EXPECT_EQ(recv[size_t(peer)], values(count, uint16_t(peer * 100 + rank))) << "from rank " << peer;
  });
}

TEST(CommSelf, UnmatchedOrMismatchedIsInvalidUsage) {
  withRanks(1, [](szComm_t comm, int rank) {
    std::vector<uint16_t> send = values(64, 1), recv(64, 0);
    EXPECT_EQ(szSend(send.data(), 64, szBfloat16, rank, comm, nullptr), szInvalidUsage)
        << "outside a group a send to self has no receive";
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("same group"), std::string::npos) << szGetLastError(nullptr);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(send.data(), 64, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(recv.data(), 32, szBfloat16, rank, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidUsage);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("bf16"), std::string::npos) << szGetLastError(nullptr);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(send.data(), 64, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(recv.data(), 64, szFloat16, rank, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidUsage);
    EXPECT_EQ(recv, std::vector<uint16_t>(64, 0)) << "nothing is copied when the pair does not match";
    EXPECT_EQ(szRecv(recv.data(), 64, szBfloat16, 1, comm, nullptr), szInvalidArgument) << "peer out of range";
  });
}

// nccl-tests' in-place sendrecv: receiving into the buffer the group sends to another rank is
// refused (decoding would race the send); with nothing run, the buffers are untouched.
TEST(CommSelf, InPlaceWithAPeerIsRefused) {
  withRanks(2, [](szComm_t comm, int rank) {
    std::vector<uint16_t> buf = values(4096, 5);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(buf.data(), buf.size(), szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(buf.data() + 1024, 1024, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidArgument);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("in place"), std::string::npos) << szGetLastError(nullptr);
    EXPECT_EQ(buf, values(4096, 5));
  });
}

// Receives whose buffers overlap are refused: two operations of a group (at szGroupEnd) and the
// buffers of one szRecvv (at the call); sends may share buffers. Nothing is touched.
TEST(CommSelf, OverlappingReceivesAreRefused) {
  withRanks(2, [](szComm_t comm, int rank) {
    std::vector<uint16_t> buf = values(4096, 7);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szRecv(buf.data(), 1024, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(buf.data() + 1023, 1024, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidArgument);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("receive buffers of two operations overlap"), std::string::npos)
        << szGetLastError(nullptr);
    void* bufs[3] = {buf.data(), buf.data() + 2048, buf.data() + 2047};
    size_t counts[3] = {1024, 1024, 2};
    EXPECT_EQ(szRecvv(bufs, counts, 3, szBfloat16, 1 - rank, comm, nullptr), szInvalidArgument);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("receive buffers overlap"), std::string::npos)
        << szGetLastError(nullptr);
    EXPECT_EQ(buf, values(4096, 7));
    // Receives that only touch, and two sends of one buffer, run.
    std::vector<uint16_t> got(4096, 0);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(buf.data(), 2048, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szSend(buf.data(), 2048, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(got.data(), 2048, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(got.data() + 2048, 2048, szBfloat16, 1 - rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
    std::vector<uint16_t> want(buf.begin(), buf.begin() + 2048);
    want.insert(want.end(), buf.begin(), buf.begin() + 2048);
    EXPECT_EQ(got, want);
  });
}

// Only a send to self and a receive from self may share a buffer (a memmove): a receive from a
// peer into what a send to self reads, and a receive from self into what goes to a peer, would
// race the copy, and are refused.
TEST(CommSelf, SelfCopiesSharingBuffersWithPeerTrafficAreRefused) {
  withRanks(2, [](szComm_t comm, int rank) {
    const int peer = 1 - rank;
    std::vector<uint16_t> buf = values(4096, 9), other(4096, 0), out = values(1024, 3);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(buf.data(), 1024, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(other.data(), 1024, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szSend(out.data(), 1024, szBfloat16, peer, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(buf.data() + 512, 1024, szBfloat16, peer, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidArgument);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("in place"), std::string::npos) << szGetLastError(nullptr);
    ASSERT_EQ(szGroupStart(), szSuccess);
    ASSERT_EQ(szSend(buf.data(), 1024, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(out.data() + 100, 1024, szBfloat16, rank, comm, nullptr), szSuccess);
    ASSERT_EQ(szSend(out.data(), 512, szBfloat16, peer, comm, nullptr), szSuccess);
    ASSERT_EQ(szRecv(other.data(), 512, szBfloat16, peer, comm, nullptr), szSuccess);
    EXPECT_EQ(szGroupEnd(), szInvalidArgument);
    EXPECT_EQ(buf, values(4096, 9));
    EXPECT_EQ(other, std::vector<uint16_t>(4096, 0));
    EXPECT_EQ(out, values(1024, 3));
  });
}

}  // namespace
