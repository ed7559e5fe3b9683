// A peer's slot channels are connected at the first operations with it (src/proto/peer_channels.h):
// nothing at init, each fresh peer once, every fresh peer of one call in one source call (so a
// wire can exchange with all of them before waiting for any), and a failure leaves them unconnected.
#include <gtest/gtest.h>

#include <vector>

#include "src/proto/peer_channels.h"

namespace {

using sz::PeerChannels;
using sz::SlotChannel;

struct FakeSource {
  std::vector<std::vector<int>> calls;
  szResult_t fail = szSuccess;
  size_t extra = 0;  // channels handed out beyond 2 per peer
  std::vector<uint8_t> rings = std::vector<uint8_t>(64);
  sz::ChannelSource source() {
    return [this](const std::vector<int>& peers, std::vector<SlotChannel>* channels) {
      calls.push_back(peers);
      if (fail != szSuccess) return szSetError(fail, "fake source fails");
      channels->assign(2 * peers.size() + extra, SlotChannel{});
      for (size_t i = 0; i < peers.size(); ++i) {
        (*channels)[2 * i].ring = &rings[size_t(2 * peers[i])];      // sends
        (*channels)[2 * i + 1].ring = &rings[size_t(2 * peers[i] + 1)];  // receives
        (*channels)[2 * i].sliceBytes = (*channels)[2 * i + 1].sliceBytes = 4096;
      }
      return szSuccess;
    };
  }
};

TEST(PeerChannels, EachPeerIsConnectedOnceAtItsFirstOperation) {
  FakeSource f;
  PeerChannels ch;
  // Rank 1 of 5; rank 3 has no channel (e.g. no GPU).
  ch.init(f.source(), 1, {8192, 0, 8192, 0, 8192});
  EXPECT_TRUE(f.calls.empty());  // nothing at init
  EXPECT_TRUE(ch.reaches(0));
  EXPECT_FALSE(ch.reaches(1));
  EXPECT_FALSE(ch.reaches(3));
  EXPECT_FALSE(ch.reaches(7));
  EXPECT_EQ(ch.sliceBytes(4), 8192u);
  EXPECT_FALSE(ch.connected(0));
  // Duplicates, itself and a peer without channels are left out; one call for both fresh peers.
  ASSERT_EQ(ch.connect({4, 0, 4, 1, 3}), szSuccess) << szGetLastError(nullptr);
  ASSERT_EQ(f.calls.size(), 1u);
  EXPECT_EQ(f.calls[0], (std::vector<int>{4, 0}));
  EXPECT_TRUE(ch.connected(4));
  EXPECT_TRUE(ch.connected(0));
  EXPECT_FALSE(ch.connected(2));
  EXPECT_EQ(ch.channel(true, 4).ring, &f.rings[8]);
  EXPECT_EQ(ch.channel(false, 4).ring, &f.rings[9]);
  EXPECT_EQ(ch.channel(false, 0).ring, &f.rings[1]);
  // Connected peers are not connected again; only the fresh one goes to the source.
  ASSERT_EQ(ch.connect({0, 4}), szSuccess);
  EXPECT_EQ(f.calls.size(), 1u);
  ASSERT_EQ(ch.connect({2, 0}), szSuccess);
  ASSERT_EQ(f.calls.size(), 2u);
  EXPECT_EQ(f.calls[1], (std::vector<int>{2}));
  // Steps count per peer and direction from 0, whenever the peer connected.
  EXPECT_EQ(ch.takeSteps(true, 2, 3), 0u);
  EXPECT_EQ(ch.takeSteps(true, 2, 1), 3u);
  EXPECT_EQ(ch.takeSteps(false, 2, 1), 0u);
}

TEST(PeerChannels, AFailedConnectLeavesThePeersUnconnected) {
  FakeSource f;
  PeerChannels ch;
  ch.init(f.source(), 0, {0, 4096, 4096});
  f.fail = szTimeout;
  EXPECT_EQ(ch.connect({1, 2}), szTimeout);
  EXPECT_FALSE(ch.connected(1));
  EXPECT_FALSE(ch.connected(2));
  f.fail = szSuccess;
  f.extra = 1;  // a source that hands out the wrong number of channels is an internal error
  EXPECT_EQ(ch.connect({1}), szInternalError);
  EXPECT_FALSE(ch.connected(1));
  f.extra = 0;
  ASSERT_EQ(ch.connect({2, 1}), szSuccess);
  EXPECT_EQ(f.calls.back(), (std::vector<int>{2, 1}));
  EXPECT_TRUE(ch.connected(1));
}

}  // namespace
