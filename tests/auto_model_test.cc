// SZ_CODEC=auto's model (src/proto/auto_model.h) driven with synthetic send times: it settles on the
// faster mode, its exploration cost falls below 1%, it follows a change of the link, and
// peers and message sizes keep separate measurements.
#include <gtest/gtest.h>

#include "src/proto/auto_model.h"

namespace {

// Runs `sends` sends of `bytes` to `peer` where frames take framesSec and raw rawSec each;
// returns how many went as frames.
int drive(sz::AutoModel& m, int peer, uint64_t bytes, int sends, double framesSec, double rawSec) {
  int frames = 0;
  for (int i = 0; i < sends; ++i) {
    bool f = m.useFrames(peer, bytes);
    frames += f;
    m.record(peer, bytes, f, f ? framesSec : rawSec);
  }
  return frames;
}

TEST(AutoModel, SettlesOnTheFasterModeAndExploresRarely) {
  sz::AutoModel m;
  // Raw twice as fast (NVLink): after settling, frames only as re-measurements.
  drive(m, 1, 64 << 20, 200, 2.0, 1.0);
  int frames = drive(m, 1, 64 << 20, 4096, 2.0, 1.0);
  EXPECT_GT(frames, 0);          // it still re-measures
  EXPECT_LE(frames, 4096 / 512);  // period has grown to at least 512
  // Frames 1.3x faster (a slow network): mostly frames.
  sz::AutoModel n;
  int f2 = drive(n, 1, 64 << 20, 4096, 1.0, 1.3);
  EXPECT_GE(f2, 4096 - 4096 / 16);
}

TEST(AutoModel, FollowsAChangeOfTheLink) {
  sz::AutoModel m;
  drive(m, 0, 1 << 20, 3000, 2.0, 1.0);  // settled on raw, long period
  EXPECT_FALSE(m.useFrames(0, 1 << 20));
  // The link slows down: frames become 2x faster; within two periods the model switches.
  drive(m, 0, 1 << 20, 2 * sz::AutoModel::kMaxPeriod + 8, 1.0, 4.0);
  int frames = drive(m, 0, 1 << 20, 100, 1.0, 4.0);
  EXPECT_GE(frames, 95);
}

TEST(AutoModel, PeersAndSizeClassesAreSeparate) {
  sz::AutoModel m;
  drive(m, 0, 1 << 20, 500, 2.0, 1.0);  // peer 0: raw faster
  drive(m, 1, 1 << 20, 500, 1.0, 2.0);  // peer 1: frames faster
  drive(m, 0, 1 << 28, 500, 1.0, 2.0);  // peer 0, large messages: frames faster
  EXPECT_LE(drive(m, 0, 1 << 20, 100, 2.0, 1.0), 2);
  EXPECT_GE(drive(m, 1, 1 << 20, 100, 1.0, 2.0), 98);
  EXPECT_GE(drive(m, 0, (1 << 28) + 5, 100, 1.0, 2.0), 98);
}

}  // namespace
