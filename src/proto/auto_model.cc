#include "src/proto/auto_model.h"

namespace sz {

AutoModel::SizeClass& AutoModel::find(int peer, uint64_t bytes) {
  int log2 = 0;
  while (log2 < 63 && (uint64_t(1) << (log2 + 1)) <= bytes) ++log2;
  return classes_[std::make_pair(peer, log2)];
}

bool AutoModel::useFrames(int peer, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  SizeClass& c = find(peer, bytes);
  if (c.framesBps == 0) return true;  // first measure both modes
  if (c.rawBps == 0) return false;
  bool frames = c.preferFrames();
  if (!c.exploring && ++c.since >= c.period) {
    c.since = 0;
    c.exploring = true;
    return !frames;
  }
  return frames;
}

void AutoModel::record(int peer, uint64_t bytes, bool frames, double seconds) {
  if (seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  SizeClass& c = find(peer, bytes);
  bool before = c.preferFrames();
  bool explored = c.exploring && frames != before && c.framesBps > 0 && c.rawBps > 0;
  double& bps = frames ? c.framesBps : c.rawBps;
  double now = double(bytes) / seconds;
  bps = bps == 0 ? now : 0.5 * bps + 0.5 * now;
  if (!explored) return;
  c.exploring = false;
  c.period = c.preferFrames() == before ? (c.period * 2 < kMaxPeriod ? c.period * 2 : kMaxPeriod) : kMinPeriod;
}

}  // namespace sz
