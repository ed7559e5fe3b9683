// SZ_CODEC=auto's online model (docs/PIPELINE.md): for each peer and message-size class (powers
// of two), an exponential average of the end-to-end throughput of sends with SplitZip frames and
// with raw slices. A send takes the faster mode; the other one is re-measured every `period`
// sends, and the period doubles (16 up to 1024) each time the re-measurement confirms the
// choice, so once settled the exploration costs well under 1% (at 1024, a mode twice as slow
// costs 0.1%). A re-measurement that changes the choice resets the period to 16.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace sz {

class AutoModel {
 public:
  static constexpr int kMinPeriod = 16, kMaxPeriod = 1024;

  // Whether the next send of `bytes` to `peer` travels as frames.
  bool useFrames(int peer, uint64_t bytes);
  // A completed send: `bytes` uncompressed bytes in `seconds`, with frames or raw.
  void record(int peer, uint64_t bytes, bool frames, double seconds);

 private:
  struct SizeClass {
    double framesBps = 0, rawBps = 0;  // uncompressed bytes per second
    int since = 0, period = kMinPeriod;
    bool exploring = false;  // a send of the slower mode is out
    bool preferFrames() const { return framesBps >= rawBps; }
  };
  SizeClass& find(int peer, uint64_t bytes);

  std::mutex mu_;
  std::map<std::pair<int, int>, SizeClass> classes_;
};

}  // namespace sz
