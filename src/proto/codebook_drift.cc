// Drift detection and recalibration of codebooks (see codebook_drift.h).
#include "src/proto/codebook_drift.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/checks.h"
#include "codec/code_bits.h"
#include "codec/dtype.h"

namespace sz {
namespace {

// Escapes per element of the data of histogram `counts` under `cb` (0 for no data).
double escapeRate(const unsigned long long* counts, uint32_t range, const szCodebook_t& cb) {
  unsigned long long total = 0;
  for (uint32_t e = 0; e < range; ++e) total += counts[e];
  return total ? double(total - codedBy(counts, range, cb)) / double(total) : 0.0;
}

// What `cb` costs per element on the data of histogram `counts` of `type` beyond sign and mantissa,
// in escapes (3 bytes each). BF16, FP32 and E5M2 have one code width: their escapes alone (as
// before FP16 and E4M3 had frames). FP16 and E4M3 have two (calibration picks one:
// szCodebookFromHistogram): the escapes and the code width, at most what a raw frame costs, so a
// 3-bit and a 4-bit codebook compare by the ratio they give, as the CPU codec's calibration
// compares them, and two that both leave the data raw not at all (E4M3's 4-bit codes always do:
// a switch to them "gained" escapes and sent every later slice raw).
double costOf(const unsigned long long* counts, szDataType_t type, const szCodebook_t& cb) {
  const TypeTraits t = typeTraits(type);
  const double escapes = escapeRate(counts, 1u << t.expBits, cb);
  if (deviceCodecType(type)) return escapes;
  return std::min(escapes + double(codebookBits(cb)) / (8 * kEscapeBytes), double(t.expBits) / (8 * kEscapeBytes));
}

// Whether a switch from `from` to `to` gains what one must on the data of histogram `counts`:
// half the trigger, in cost (costOf).
bool gainsEnough(const unsigned long long* counts, szDataType_t type, const szCodebook_t& from, const szCodebook_t& to) {
  return costOf(counts, type, from) - costOf(counts, type, to) >=
         CodebookDrift::triggerMargin(type, int(codebookBits(from))) / 2;
}

// A frame this small may be raw for its header's sake alone: it says nothing about escapes.
constexpr uint64_t kMinRawEvidence = kChunkElems;

}  // namespace

CodebookDrift::CodebookDrift(bool follow, const szCodebook_t* initial, uint64_t windowElems)
    : follow_(follow), window_(windowElems ? windowElems : 1) {
  if (initial != nullptr) {
    initial_ = *initial;
    haveInitial_ = true;
  }
}

double CodebookDrift::triggerMargin(szDataType_t type, int codeBits) {
  const TypeTraits t = typeTraits(type);
  const double compressedBytes = double(t.smBits + uint32_t(codeBits)) / 8;  // sign-mantissa + code
  return kTriggerRatioLoss * compressedBytes / kEscapeBytes;
}

CodebookDrift::State& CodebookDrift::find(int peer, szDataType_t type, int group) {
  auto [it, fresh] = states_.try_emplace(std::make_tuple(peer, int(type), group));
  if (fresh) {
    if (haveInitial_ && initial_.type == type) it->second.codebook = initial_;
    else szCodebookDefault(type, &it->second.codebook);  // a compressible type: cannot fail
  }
  return it->second;
}

CodebookDrift::Plan CodebookDrift::plan(int peer, szDataType_t type, int group) {
  std::lock_guard<std::mutex> lock(mu_);
  State& s = find(peer, type, group);
  const bool first = !s.evidence;  // nothing known of the data but the slice itself
  Plan p{s.codebook, follow_ && (first || s.drifted || s.probes > 0) && !s.pending};
  if (p.calibrate) {
    s.pending = true;
    s.drifted = false;
    s.firstOut = first;
  }
  return p;
}

szCodebook_t CodebookDrift::current(int peer, szDataType_t type, int group) {
  std::lock_guard<std::mutex> lock(mu_);
  return find(peer, type, group).codebook;
}

szCodebook_t CodebookDrift::calibrated(int peer, szDataType_t type, const unsigned long long* counts, int group) {
  std::lock_guard<std::mutex> lock(mu_);
  State& s = find(peer, type, group);
  s.pending = false;
  s.evidence = true;
  ++histograms_;
  const bool first = s.firstOut;  // the data's own top-16 or the default, at once
  s.firstOut = false;
  const uint32_t range = 1u << typeTraits(type).expBits;
  for (uint32_t e = 0; e < range; ++e) s.probe[e] += counts[e];
  ++s.probes;
  szHistogram_t hist;
  szHistogramInit(&hist, type);
  // Soon after a switch, the data that made it and this data together: alternating data then
  // gets one codebook for both instead of switching at every window.
  // Not for a raw slice's calibration (aloneOut): merged with the data of a switch that chance
  // drifts of steady E4M3 made, a shifted slice's histogram gave a 4-bit codebook no better than
  // raw, and the slice and the sends after it stayed raw.
  const bool merge = s.lastSwitched && s.sinceCalibration < kRecentWindows && !s.aloneOut;
  s.aloneOut = false;
  for (uint32_t e = 0; e < range; ++e) hist.counts[e] = s.probe[e] + (merge ? s.madeFrom[e] : 0);
  szCodebook_t fresh;
  szCodebookFromHistogram(&hist, &fresh);
  const bool gains = gainsEnough(hist.counts, type, s.codebook, fresh);
  const double now = escapeRate(hist.counts, range, s.codebook), then = escapeRate(hist.counts, range, fresh);
  if (!gains && !first && s.probes < kProbeSlices) return s.codebook;  // the drift may be in the next slices
  if (!first && s.sinceCalibration < kRecentWindows) {  // calibrations close together: wait longer each time
    s.backoff = std::min(s.backoff ? 2 * s.backoff : 1, kMaxHold);
    s.hold = s.backoff;
  }
  s.sinceCalibration = 0;
  s.expected = gains ? then : now;
  s.lastSwitched = gains;
  s.probes = 0;
  memset(s.probe, 0, sizeof(s.probe));
  if (gains) {
    s.codebook = fresh;
    memcpy(s.madeFrom, hist.counts, sizeof(s.madeFrom));
    ++recalibrations_;
  }
  return s.codebook;
}

szCodebook_t CodebookDrift::calibrateHost(int peer, szDataType_t type, const void* data, uint64_t count,
                                          int group) {
  szHistogram_t hist;  // outside the lock: the histogram is the cost, other senders go on meanwhile
  szHistogramInit(&hist, type);
  szHistogramAccumulate(&hist, data, count);
  return calibrated(peer, type, hist.counts, group);
}

CodebookDrift::Retry CodebookDrift::retry(int peer, const szFrameInfo_t& frame, const szCodebook_t& encodedWith,
                                          szCodebook_t* current, int group) {
  if (!follow_ || !frame.raw || frame.count < kMinRawEvidence || !szTypeIsCompressible(frame.type)) return kNoRetry;
  std::lock_guard<std::mutex> lock(mu_);
  State& s = find(peer, frame.type, group);
  *current = s.codebook;
  // A calibration of another slice came back meanwhile: the codebook it gave, whatever the holds
  // (they pace histograms, and this takes none; a slice raw beside its sibling's switch, held
  // off by the hold that switch set, made a one-slice-shift send 1.24 instead of 1.33, 2 runs in
  // 200 on two cores).
  if (memcmp(encodedWith.exponents, s.codebook.exponents, sizeof(s.codebook.exponents)) != 0) return kWithCurrent;
  // A raw frame is no marginal drift: the holds that pace calibrations of those do not keep it
  // raw (one left a shifted E4M3 raw for two sends after steady data's chance drifts set it),
  // only kRetryHold (data that stayed raw when encoded again) does.
  if (s.retryHold > 0) return kNoRetry;
  if (s.pending) return kOwnTop16;  // one is out: it, not this slice, updates the state
  s.pending = true;
  s.drifted = false;  // this calibration answers a drift marked before it, as a planned one does
  // Calibrated on its own data, not together with the slices a marginal drift probed before it
  // (their histogram and the raw one's gave a 4-bit E4M3 codebook no better than raw, and the
  // slice stayed raw).
  s.probes = 0;
  memset(s.probe, 0, sizeof(s.probe));
  s.aloneOut = true;
  return kCalibrate;
}

void CodebookDrift::retried(int peer, szDataType_t type, bool stillRaw, int group) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stillRaw) find(peer, type, group).retryHold = kRetryHold;
}

szResult_t CodebookDrift::encodeHost(int peer, szDataType_t type, const Plan& plan, const void* data, uint64_t count,
                                     void* frame, size_t cap, size_t* bytes, szCodebook_t* encodedWith, int group) {
  *encodedWith = plan.calibrate ? calibrateHost(peer, type, data, count, group) : plan.codebook;
  SZCHECK(szEncode(data, count, type, encodedWith, 0, frame, cap, bytes));
  szFrameInfo_t info;
  szCodebook_t next;
  if (plan.calibrate || !follow_ || szFrameGetInfo(frame, *bytes, &info) != szSuccess) return szSuccess;
  switch (retry(peer, info, *encodedWith, &next, group)) {
    case kNoRetry: return szSuccess;
    case kWithCurrent: break;
    case kCalibrate: next = calibrateHost(peer, type, data, count, group); break;
    case kOwnTop16: {
      szHistogram_t hist;
      szHistogramInit(&hist, type);
      szHistogramAccumulate(&hist, data, count);
      szCodebookFromHistogram(&hist, &next);
      if (!gainsEnough(hist.counts, type, *encodedWith, next)) next = *encodedWith;
      break;
    }
  }
  bool stillRaw = true;
  if (memcmp(next.exponents, encodedWith->exponents, sizeof(next.exponents)) != 0) {  // else raw again
    *encodedWith = next;
    SZCHECK(szEncode(data, count, type, encodedWith, 0, frame, cap, bytes));
    SZCHECK(szFrameGetInfo(frame, *bytes, &info));
    stillRaw = info.raw != 0;
    std::lock_guard<std::mutex> lock(mu_);
    ++reencodes_;
  }
  retried(peer, type, stillRaw, group);
  return szSuccess;
}

void CodebookDrift::sent(int peer, const szFrameInfo_t& frame, const szCodebook_t& encodedWith, int group) {
  if (!follow_ || !szTypeIsCompressible(frame.type)) return;
  std::lock_guard<std::mutex> lock(mu_);
  State& s = find(peer, frame.type, group);
  if (memcmp(encodedWith.exponents, s.codebook.exponents, sizeof(s.codebook.exponents)) != 0)
    return;  // encoded before the last switch: says nothing of the current codebook
  uint64_t escapes = frame.escapeCount;
  if (frame.raw) {
    if (frame.count < kMinRawEvidence) return;
    escapes = frame.count;  // more escapes than a frame can pay for
  }
  s.evidence = true;
  s.windowElems += frame.count;
  s.windowEscapes += escapes;
  if (s.windowElems < window_) return;
  const uint64_t elems = s.windowElems;
  const double rate = double(s.windowEscapes) / double(elems);
  s.windowElems = s.windowEscapes = 0;
  if (s.retryHold > 0) --s.retryHold;
  if (s.sinceCalibration < kMaxHold * 4) ++s.sinceCalibration;
  else s.backoff = 0;  // long calm: a new drift is news again
  if (s.hold > 0) {
    --s.hold;
    s.drifted = false;
  } else {
    const double noise = kTriggerSigmas * std::sqrt(s.expected / double(elems));
    s.drifted = rate > s.expected + triggerMargin(frame.type, int(codebookBits(s.codebook))) + noise;
    if (!s.drifted) s.expected = std::min(s.expected, (7 * s.expected + rate) / 8);  // follows better data down
  }
}

uint64_t CodebookDrift::recalibrations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recalibrations_;
}

uint64_t CodebookDrift::histograms() const {
  std::lock_guard<std::mutex> lock(mu_);
  return histograms_;
}

uint64_t CodebookDrift::reencodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reencodes_;
}

}  // namespace sz
