// Codebooks that follow the data (SZ_CODEBOOK=auto; paper §3.3 calibration, done online): per
// (peer, type, segment group) the codebook a sender encodes with, and the escape rate of the
// frames it sent. Segment groups (segment_groups.h) are positions in a szSendv buffer list; each
// follows its own data, so a group's codebook parts from another's only where its own escapes
// cost more than 0.1 % of ratio (the trigger below).
// A state with no evidence yet (no frame counted, no calibration back) calibrates the first
// slice it plans, and takes the data's own top-16 when that saves half the trigger on it, else
// keeps the default: nothing else is known of a new model's KV, and a send of one slice has no
// later slice to recover in. That first calibration never probes further slices nor counts
// towards the backoff below: one histogram per state, paid once.
// When a window of frames escapes more than the codebook gave on the data it was calibrated on,
// by more than costs 0.1 % of ratio, the next slice is calibrated (the caller takes a histogram
// of the data being sent and hands it back) and the codebook switches when the data's own
// top-16 saves at least half that on it; if it does not, up to kProbeSlices slices are taken
// together (the drift may be in every other slice). Frames carry their codebook: the receiver needs
// nothing. In steady state a sender only counts escapes (from the frame headers it sends); a
// histogram is taken only on drift.
// Data that shifts within a send of one slice would still go raw: on the host path a slice that
// came out raw with a codebook not calibrated on it is encoded again, once (retry, encodeHost),
// with the codebook a switch since its plan gave (the second slice of a first send, planned while
// the first slice's calibration was out) or calibrated on the slice itself: on its own data, not
// merged with earlier probes or a recent switch's data, and whatever the holds below (a raw slice
// is no marginal drift). A re-encode that stays raw (incompressible data) stops re-encodes for
// kRetryHold windows, so random bytes cost one extra encode per kRetryHold windows at most; a
// slice the codec stored raw still counts towards the windows (all escapes), so the drift
// catches data after it.
//
// FP16 and FP8 E4M3 (host and device buffers) have 3- or 4-bit codes:
// a calibration picks the width as the CPU codec's does (szCodebookFromHistogram: the one
// predicting the better ratio), so a group may go from E4M3's 3-bit default to a 4-bit top-16 and
// back; a switch then must gain in ratio (codes and escapes together), not in escapes alone, and
// "top-16" above reads "top-8" for 3-bit codes. BF16, FP32 and E5M2 keep 4-bit codes (the
// device path's width).
//
// Hysteresis, so data at the boundary does not flap: the trigger (0.1 % of ratio above the
// expected rate, and beyond the window's sampling noise: kTriggerSigmas) is above what a switch
// must gain (half that); after a calibration the expected rate is what the codebook then held gave on the data (the top-16's when it switched, the kept
// codebook's when not: the top-16's lower rate would leave the kept one under half a trigger of
// margin, which noise crosses), so data that no codebook fits better stops triggering; a drift soon after a switch is calibrated on the data of both
// (the histogram that made the codebook and the new one), and calibrations that follow each
// other closely wait twice as many windows each time (up to kMaxHold), so alternating data
// costs few histograms.
//
// Thread-safe: the host path (src/proto/host_slots.cc: encodeHost, CPU histogram) and the device path
// (src/group.cc plans, src/comm.cc hands back each group's frames and its kernels/calibrate.h
// histogram) share it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "splitzip.h"

namespace sz {

class CodebookDrift {
 public:
  static constexpr uint64_t kDefaultWindowElems = uint64_t(1) << 18;
  static constexpr double kTriggerRatioLoss = 0.001;  // escapes above expected that cost 0.1 % of ratio
  // A window's escape count is a sample: the trigger also clears this many standard deviations
  // of it (binomial, at the expected rate). KV under 3-bit codes escapes ~2 % (FP16, E4M3), where
  // one deviation of a 2^18-element window (0.026 %) is as large as E4M3's margin (0.029 %), and
  // without it chance windows kept calibrating (26 histograms in 60 slices of steady E4M3) and the
  // holds they earned left a real shift raw for several sends; BF16's ~0.01 % barely moves it.
  static constexpr double kTriggerSigmas = 3;
  static constexpr int kRecentWindows = 8;            // a drift this soon after a switch merges
  static constexpr int kMaxHold = 64;                 // windows
  static constexpr int kProbeSlices = 4;  // slices calibrated on, together, before giving up a drift
  static constexpr int kRetryHold = 4 * kMaxHold;  // windows without re-encodes after one stayed raw

  // follow = false: every type keeps `initial` (its type) or its default, never calibrating.
  // `windowElems`: elements of frames judged together (at least one frame).
  explicit CodebookDrift(bool follow = true, const szCodebook_t* initial = nullptr,
                         uint64_t windowElems = kDefaultWindowElems);

  struct Plan {
    szCodebook_t codebook;  // encode with this ...
    bool calibrate;         // ... unless set: take the slice's histogram and call calibrated()
  };
  // Before encoding a slice of a compressible `type` to `peer`, of segment group `group` (0 for
  // szSend; the device path plans once per operation and group). One calibration at a time per
  // group once it has evidence: while one is out, the group's other slices encode with its
  // current codebook.
  Plan plan(int peer, szDataType_t type, int group = 0);
  // The group's codebook now, planning nothing: what a send captured into a CUDA graph encodes
  // with at every replay (its frames are still counted: sent()).
  szCodebook_t current(int peer, szDataType_t type, int group = 0);
  // The exponent histogram (2^exponent bits counts) of a slice planned with calibrate: returns
  // the codebook to encode that slice with (the new one when it switched).
  szCodebook_t calibrated(int peer, szDataType_t type, const unsigned long long* counts, int group = 0);
  // calibrated() on the CPU histogram of `count` elements at host pointer `data` (the host path).
  szCodebook_t calibrateHost(int peer, szDataType_t type, const void* data, uint64_t count, int group = 0);
  // A slice planned without calibration, encoded with `encodedWith`, came out as the raw frame
  // `frame`: whether and how to encode it again. kWithCurrent: the group switched since, encode
  // with *current; kCalibrate: calibrate the slice (its histogram handed back as plan's);
  // kOwnTop16: another calibration is out, encode with the slice's own top-16 if it gains what
  // a switch must (the state unchanged). kNoRetry for small frames (raw for their header's sake)
  // and while kRetryHold lasts.
  enum Retry { kNoRetry, kWithCurrent, kCalibrate, kOwnTop16 };
  Retry retry(int peer, const szFrameInfo_t& frame, const szCodebook_t& encodedWith, szCodebook_t* current,
              int group = 0);
  // How the slice retry() allowed came out: `stillRaw` (or not encoded again: the calibration
  // kept the codebook it was raw with) holds off re-encodes of the group for kRetryHold windows.
  void retried(int peer, szDataType_t type, bool stillRaw, int group = 0);
  // The host path's encode of a slice of `count` elements at `data` planned with `plan`
  // (szEncode into `frame`, `cap` bytes; *bytes its size): calibrated first when the plan says
  // so, and encoded again when retry() allows. *encodedWith: the frame's codebook, for sent().
  szResult_t encodeHost(int peer, szDataType_t type, const Plan& plan, const void* data, uint64_t count, void* frame,
                        size_t cap, size_t* bytes, szCodebook_t* encodedWith, int group = 0);
  // A frame was sent to `peer`: its header (szFrameGetInfo) and the codebook it was encoded
  // with (the plan's or calibrated()'s; a raw frame's header has none). A raw frame of a
  // compressible type counts as all escapes (they would not have paid); a frame encoded with
  // another codebook than the current one (in flight across a switch) is not counted.
  void sent(int peer, const szFrameInfo_t& frame, const szCodebook_t& encodedWith, int group = 0);

  uint64_t recalibrations() const;  // codebook switches so far, all groups together
  uint64_t histograms() const;      // calibrations handed back so far, all groups together
  uint64_t reencodes() const;       // slices encoded twice by encodeHost, all groups together
  // Escapes per element above the expected rate that trigger a calibration for `type` with
  // `codeBits`-bit codes: 0.1 % of the compressed size (3 bytes an escape against 1.5 bytes a
  // BF16 element: 0.05 %; 7 bits an E4M3 element with 3-bit codes).
  static double triggerMargin(szDataType_t type, int codeBits = 4);

 private:
  struct State {
    szCodebook_t codebook{};
    double expected = 0;  // escape rate the codebook gave on the data it was calibrated on
    uint64_t windowElems = 0, windowEscapes = 0;
    bool pending = false;   // a planned calibration has not come back yet
    bool drifted = false;   // the last window exceeded the trigger
    bool lastSwitched = false;  // the last calibration switched codebooks
    int hold = 0, backoff = 0;  // windows whose drift is ignored; the next calibration's hold
    int sinceCalibration = kRecentWindows;  // windows
    int probes = 0;  // slices calibrated on since the drift, without a gain yet
    bool evidence = false;  // a frame was counted or a calibration came back
    bool firstOut = false;  // the calibration out was planned without evidence
    bool aloneOut = false;  // the calibration out is a raw slice's (retry): judged on its own data
    int retryHold = 0;      // windows without re-encodes
    unsigned long long probe[256] = {};     // their histogram
    unsigned long long madeFrom[256] = {};  // the histogram the codebook was calibrated on
  };
  State& find(int peer, szDataType_t type, int group);

  const bool follow_;
  const uint64_t window_;
  szCodebook_t initial_{};
  bool haveInitial_ = false;
  mutable std::mutex mu_;
  std::map<std::tuple<int, int, int>, State> states_;  // (peer, type, group)
  uint64_t recalibrations_ = 0, histograms_ = 0, reencodes_ = 0;
};

}  // namespace sz
