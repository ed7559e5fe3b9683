// SZ_CODEC=auto's decision (docs/PIPELINE.md, "The auto mode"): per peer and message-size class
// (powers of two), frames or raw, from the paper's pipeline model (App. B) and corrected online.
//
// The model: a send of S bytes takes S / B raw and S / min(G, B * R) as frames, where B is the
// wire's bandwidth, G the codec path's throughput (uncompressed bytes) and R the ratio; a raw send
// measured slower than S / B spent the rest off the wire (launches, waiting for the peer), which
// frames spend too. Frames are chosen when they are predicted at least kMargin faster. B and G start from priors the
// communicator knows at init (an emulated link's rate, the device's copy rate, the codec's
// calibrated rate, the CPU codec's measured one for the type sent; 0 where unknown: an unknown
// wire is measured by raw sends first when the codec's rate is known, and taken as slow when both
// are unknown, so the first sends compress), R from the type's exponent width and its default
// codebook's code width (4/3 for BF16, 16/15 for FP16, 8/7 for E4M3's 3-bit codes).
//
// Small messages: a frames send also pays a fixed codec latency (its first slice encoded, its last
// decoded) that a raw send does not. Learned per peer from the first size class that measured both
// modes, it lets a class that measured frames only predict raw: the frames time less that latency
// and its wire time is the overhead a raw send shares (at most twice the latency: more than that
// is taken for a codec slower than its prior, and not credited to raw).
//
// The correction: each completed send's time, measured where the transfer happens (the slot
// kernels' own timestamps on the device path), replaces the prediction of its mode in its size
// class; a class's first send of each mode is cold (calibration, first launches) and not counted.
// A measured mode (the second fastest of its latest warm sends) is compared against the other mode's
// measurement where there is one, else against its prediction, so a wrong prior is undone after
// one warm send. The mode not chosen is
// re-measured on a send whose number in its class is a multiple of `period` (and at least `period`
// after the last re-measurement), a power of two that
// doubles (16 up to 1024) each time the re-measurement confirms the choice, so once settled the
// exploration costs well under 1%. A mode that a prior predicts to lose is first measured at send
// 1024.
//
// Exchanges (host buffers): two ranks that send each other the same sizes count the same sends,
// so they re-measure in step (a larger period, a power of two, is a multiple of the smaller), and
// each judges a send by its exchange's time (judgeExchanges). Two ranks that decide apart (a
// near tie, each rank's own noisy medians) would each measure the other's mode beside its own. So
// in a pair's exchange, once the two sent apart, the higher rank follows the lower one while they
// keep exchanging: its next send takes what the lower one's came in (one exchange later). A send
// beside its pair's other mode (skewed), or the lower rank's beside its pair's first of a mode
// (cold), is not counted; a re-measurement that was not counted goes on for another send
// (kMaxTrySends in all; then the period doubles), and more than kMaxTrySends skewed sends in a
// row end the pairing (a peer that does not follow). A try in a pair costs about three exchanges.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "splitzip.h"
#include "src/proto/slot_completion.h"

namespace sz {

// What a communicator knows of a peer's path before any send (0: unknown).
struct AutoPrior {
  double wireBps = 0;   // the wire's bandwidth per direction, bytes per second
  double codecBps = 0;  // the codec path's throughput, uncompressed bytes per second
  // Per type where it differs (the CPU codec's measured rate of each type it codes): codecOf.
  double typeCodecBps[szNumTypes] = {};
  double codecLatency = 0;  // seconds a frames send spends beyond a raw one apart from its wire time, until learned
  // codecBps is a quick measurement (the CPU codec's, taken once at init), not a device constant:
  // a mode it predicts to lose is first tried after kMinPeriod sends, not kMaxPeriod.
  bool codecTentative = false;

  // The codec path's throughput for `type`: its own rate where known, else codecBps.
  double codecOf(szDataType_t type) const {
    return type >= 0 && type < szNumTypes && typeCodecBps[type] > 0 ? typeCodecBps[type] : codecBps;
  }
};

class AutoModel {
 public:
  static constexpr int kMinPeriod = 16, kMaxPeriod = 1024;
  static constexpr int kMaxTrySends = 4;  // a re-measurement's sends, the uncounted ones included
  static constexpr double kMargin = 0.03;  // frames must be predicted this much faster
  static constexpr double kMaxLatency = 50e-6;  // a larger codec latency sample is a slow codec, not a latency
  static constexpr double kExploreBudget = 0.02;  // the most of a class's time spent trying the losing mode

  // The prior of each peer (by rank: its pair's wire, and the device), and of any peer not listed.
  void setPriors(const std::vector<AutoPrior>& perPeer, const AutoPrior& others = AutoPrior{});
  // The size class of a message of `bytes`: log2, rounded down.
  static int sizeClass(uint64_t bytes);
  // Whether the next send of `bytes` of a compressible `type` to `peer` travels as frames.
  // `mayTry` false (a send that is never recorded: a CUDA graph's capture): the choice alone, no
  // re-measurement started or counted.
  bool useFrames(int peer, szDataType_t type, uint64_t bytes, bool mayTry = true);
  // A completed send: `bytes` uncompressed bytes in `seconds`, as frames (`wireBytes` of them on
  // the wire) or raw. In a pair's exchange (SlotCompletion's exchangePairFrames and exchangeLeads):
  // `pairFrames`, the mode the pair's receive came in (1 frames, 0 raw; -1: no pair), and whether
  // this rank leads (else the class's next send takes `pairFrames`).
  void record(int peer, szDataType_t type, uint64_t bytes, bool frames, double seconds, uint64_t wireBytes,
              int pairFrames = -1, bool leads = false);

 private:
  struct Mode {
    static constexpr int kWindow = 7;
    double recent[kWindow] = {};  // uncompressed bytes per second of the latest warm sends, a ring
    int seen = 0;                 // completed sends; the first (cold) is not counted
    int warm = 0;                 // warm sends in `recent`, up to kWindow
    int next = 0;                 // where the next warm send goes in `recent`
    bool measured() const { return warm > 0; }
    void clear() { warm = next = 0; }  // forgets the warm sends (`seen` stays)
    void add(double bps) {
      recent[next] = bps;
      next = (next + 1) % kWindow;
      warm = warm < kWindow ? warm + 1 : kWindow;
    }
    // The second fastest of the latest warm sends (the median of three, the mean of two): sends
    // slowed by something else (the peer's late launch, another kernel, a loopback burst: noise
    // that only slows) do not flip the choice, even a few in a row, and a wire whose rate moves
    // from send to send (tcp over loopback, 12% apart) is not judged by its luckiest send. The
    // median let three slowed sends of seven flip a pair's exchange to the mode 1.3x slower until
    // the next re-measurement (tests/auto_exchange_test.cc).
    double bps() const;
  };
  struct SizeClass {
    // A class's first send of each mode is cold: the frames send calibrates its codebook, and
    // either waits for the first launches (1.8 ms against 0.17 ms measured for 64 MiB raw).
    Mode frames, raw;
    double ratio = 0;  // uncompressed / wire bytes of the frames sends (0: the type's prior)
    // Sends planned in the class: the mode not preferred is tried at a multiple of `period` at
    // least `period` sends after the last try (`tried`).
    uint64_t sends = 0, tried = 0;
    int period = kMinPeriod;
    bool exploring = false;    // sends of the mode not preferred are out or to come
    bool explorePref = false;  // the preferred mode when the exploration began
    int explore = 0;           // exploring sends still to be made
    int trySends = 0;          // sends of the exploration so far
    int tryOut = 0;            // of those, the ones not recorded yet
    bool tryCounted = false;   // one of them was counted
    // A pair's exchange: whether this rank is the lower one, the pair's sends of each mode
    // (raw, frames) seen, and (the higher rank, once the two sent apart) the mode of its next send.
    bool leads = false;
    int pairSeen[2] = {};
    int follows = -1;
    int skewRun = 0;  // skewed sends in a row
  };
  using Key = std::tuple<int, int, int>;  // peer, type, log2(bytes)
  SizeClass& find(int peer, szDataType_t type, uint64_t bytes);
  bool prefersFrames(const SizeClass& c, int peer, szDataType_t type, uint64_t bytes) const;
  // Learns a peer's codec latency from a class with both modes measured.
  void learnLatency(const SizeClass& c, int peer, szDataType_t type, uint64_t bytes);
  const AutoPrior& prior(int peer) const {
    return peer >= 0 && size_t(peer) < priors_.size() ? priors_[size_t(peer)] : others_;
  }

  std::mutex mu_;
  std::vector<AutoPrior> priors_;
  AutoPrior others_;
  // Per peer: the time a frames send spends beyond a raw one apart from its wire bytes (encoding
  // its first slice, decoding its last: ~9-12 us measured on one H100 over an emulated 25 GB/s
  // link), learned from any size class that measured both modes; absent until then.
  std::map<int, double> latency_;
  std::map<Key, SizeClass> classes_;
};

// A host group's completions on rank `rank`, judged for the model: each send with receives of its
// type and size class (from any peer: a ring's ranks decode as an exchange's do) takes the latest
// end of them all as its exchangeSeconds. A frames send ends once its peer decoded its fewer wire
// bytes, while this rank's decode of the peer's frames runs on: judged alone, frames looked faster
// where the exchange was slower. A send with such a receive from its own peer is a pair's
// exchange: it leads or follows (SlotCompletion). Sends without such receives are left as they are.
void judgeExchanges(int rank, std::vector<SlotCompletion>& done);

}  // namespace sz
