// The channel steps of a slot launch's operations (src/proto/slot_steps.h).
#include <gtest/gtest.h>

#include "src/proto/slot_steps.h"

namespace {

TEST(SlotSteps, OneChannelTakesConsecutiveStepsInCallOrder) {
  std::vector<uint64_t> offset, advance;
  sz::planLaunchSteps({3, 3, 3}, {4, 1, 2}, &offset, &advance);
  EXPECT_EQ(offset, (std::vector<uint64_t>{0, 4, 5}));
  EXPECT_EQ(advance, (std::vector<uint64_t>{0, 0, 7}));  // once, on the channel's last operation
}

TEST(SlotSteps, ChannelsCountApart) {
  // A send and a receive with one peer, and a send to another, interleaved.
  const int send1 = sz::stepChannel(1, true), recv1 = sz::stepChannel(1, false), send2 = sz::stepChannel(2, true);
  EXPECT_NE(send1, recv1);
  EXPECT_NE(send1, send2);
  std::vector<uint64_t> offset, advance;
  sz::planLaunchSteps({send1, recv1, send2, send1, recv1}, {2, 3, 5, 7, 1}, &offset, &advance);
  EXPECT_EQ(offset, (std::vector<uint64_t>{0, 0, 0, 2, 3}));
  EXPECT_EQ(advance, (std::vector<uint64_t>{0, 0, 5, 9, 4}));
}

TEST(SlotSteps, EveryStepOfTheLaunchIsTakenOnceAndTheWordMovesPastThem) {
  // Seeded launches: per channel, the operations' steps tile [0, advance) with no gap or overlap.
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int trial = 0; trial < 500; ++trial) {
    const size_t n = 1 + next() % 32;
    std::vector<int> chan(n);
    std::vector<uint64_t> slices(n);
    for (size_t k = 0; k < n; ++k) {
      chan[k] = int(next() % 6);
      slices[k] = 1 + next() % 9;
    }
    std::vector<uint64_t> offset, advance;
    sz::planLaunchSteps(chan, slices, &offset, &advance);
    for (int c = 0; c < 6; ++c) {
      uint64_t expect = 0, advanced = 0;
      int advances = 0;
      for (size_t k = 0; k < n; ++k) {
        if (chan[k] != c) continue;
        EXPECT_EQ(offset[k], expect);
        expect += slices[k];
        if (advance[k]) {
          advanced = advance[k];
          ++advances;
        }
      }
      EXPECT_EQ(advanced, expect);
      EXPECT_EQ(advances, expect ? 1 : 0);
    }
  }
}

}  // namespace
