// SZ_CODEC=auto's model and its online correction (auto_model.h).
#include "src/proto/auto_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "codec/code_bits.h"
#include "codec/dtype.h"

namespace sz {

double AutoModel::Mode::bps() const {
  const int n = std::min(warm, kWindow);
  if (n <= 0) return 0;
  double v[kWindow];
  std::copy(recent, recent + n, v);
  std::sort(v, v + n);
  return n == 2 ? 0.5 * (v[0] + v[1]) : v[n >= 3 ? n - 2 : 0];
}

void AutoModel::setPriors(const std::vector<AutoPrior>& perPeer, const AutoPrior& others) {
  std::lock_guard<std::mutex> lock(mu_);
  priors_ = perPeer;
  others_ = others;
}

int AutoModel::sizeClass(uint64_t bytes) { return bytes > 1 ? 63 - __builtin_clzll(bytes) : 0; }

AutoModel::SizeClass& AutoModel::find(int peer, szDataType_t type, uint64_t bytes) {
  return classes_[Key(peer, int(type), sizeClass(bytes))];
}

namespace {

// The ratio a size class assumes before its first frames send: a frame keeps sign and mantissa
// and an exponent code per element (paper §3.1), of the width of the type's default codebook
// (3 bits for E4M3, 4 for the others), escapes left out.
double priorRatio(szDataType_t type) {
  const TypeTraits t = typeTraits(type);
  szCodebook_t cb;
  const uint32_t codeBits = szCodebookDefault(type, &cb) == szSuccess ? codebookBits(cb) : 4;
  return double(t.elemBits()) / double(t.smBits + codeBits);
}

}  // namespace

bool AutoModel::prefersFrames(const SizeClass& c, int peer, szDataType_t type, uint64_t bytes) const {
  const AutoPrior& pr = prior(peer);
  constexpr double kUnknown = std::numeric_limits<double>::infinity();
  const double ratio = c.ratio > 0 ? c.ratio : priorRatio(type);
  const double codecBps = pr.codecOf(type), codec = codecBps > 0 ? codecBps : kUnknown;
  const auto known = latency_.find(peer);
  const double latency = known == latency_.end() ? pr.codecLatency : known->second;
  const double s = double(bytes);
  if (c.frames.measured() && !c.raw.measured() && pr.wireBps > 0 && latency > 0) {
    // Raw predicted from the frames send: its overhead beyond the latency and its wire time.
    const double framesSec = s / c.frames.bps();
    const double rest = std::min(std::max(0.0, framesSec - latency - s / std::min(codec, ratio * pr.wireBps)), 2 * latency);
    return rest + s / pr.wireBps >= (1 + kMargin) * framesSec;
  }
  const double raw = c.raw.measured() ? c.raw.bps() : pr.wireBps;
  // An unknown wire: measured by raw sends first where the codec's rate is known (compressing on a
  // wire faster than the codec costs more than sending raw on a slow one), else taken as slower
  // than the codec.
  if (raw <= 0) return codecBps <= 0;
  double frames = c.frames.bps();
  if (!c.frames.measured()) {  // seconds per byte: the raw send's on the wire and the rest
    const double wire = pr.wireBps > raw ? 1 / pr.wireBps : 1 / raw, rest = 1 / raw - wire;
    frames = 1 / (rest + latency / s + 1 / std::min(codec, ratio / wire));
  }
  return frames >= (1 + kMargin) * raw;
}

void AutoModel::learnLatency(const SizeClass& c, int peer, szDataType_t type, uint64_t bytes) {
  const AutoPrior& pr = prior(peer);
  if (!c.frames.measured() || !c.raw.measured() || pr.wireBps <= 0) return;
  const double ratio = c.ratio > 0 ? c.ratio : priorRatio(type);
  const double wire = std::max(pr.wireBps, c.raw.bps()), s = double(bytes);
  const double codec = pr.codecOf(type) > 0 ? pr.codecOf(type) : std::numeric_limits<double>::infinity();
  const double framesBeyondWire = s / c.frames.bps() - s / std::min(codec, ratio * wire);
  const double rawBeyondWire = s / c.raw.bps() - s / wire;
  const double sample = std::min(std::max(0.0, framesBeyondWire - rawBeyondWire), kMaxLatency);
  auto it = latency_.find(peer);
  if (it == latency_.end()) latency_[peer] = sample;
  else it->second = 0.5 * it->second + 0.5 * sample;
}

bool AutoModel::useFrames(int peer, szDataType_t type, uint64_t bytes, bool mayTry) {
  std::lock_guard<std::mutex> lock(mu_);
  SizeClass& c = find(peer, type, bytes);
  if (!mayTry) return c.follows >= 0 ? c.follows == 1 : prefersFrames(c, peer, type, bytes);
  ++c.sends;
  if (c.follows >= 0) {  // the higher rank of a pair's exchange: the lower one's mode
    c.exploring = false;
    c.explore = 0;
    return c.follows == 1;
  }
  if (c.explore > 0) {
    --c.explore;
    ++c.trySends;
    ++c.tryOut;
    return !c.explorePref;
  }
  const bool pref = prefersFrames(c, peer, type, bytes);
  const Mode& mine = pref ? c.frames : c.raw;
  const Mode& other = pref ? c.raw : c.frames;
  // The other mode is measured now and then; at once where nothing predicts it (frames preferred
  // over a wire of unknown speed that no raw send has measured yet); only after kMaxPeriod sends
  // where a prior predicts it to lose and it was never measured (its first send is cold), unless
  // that prior is a tentative measurement.
  const bool blind = pref && !other.measured() && prior(peer).wireBps <= 0;
  const int period = other.measured() || blind || prior(peer).codecTentative ? c.period : int(kMaxPeriod);
  const uint64_t p = uint64_t(period);
  if (!c.exploring && mine.measured() && (blind || (c.sends % p == 0 && c.sends >= c.tried + p))) {
    c.tried = c.sends;
    c.exploring = true;
    c.explorePref = pref;
    c.explore = other.seen == 0 ? 1 : 0;  // a cold first send does not count
    c.trySends = c.tryOut = 1;
    c.tryCounted = false;
    return !pref;
  }
  return pref;
}

void AutoModel::record(int peer, szDataType_t type, uint64_t bytes, bool frames, double seconds, uint64_t wireBytes,
                       int pairFrames, bool leads) {
  if (seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  SizeClass& c = find(peer, type, bytes);
  bool pair = pairFrames >= 0, skewed = pair && (pairFrames == 1) != frames;
  // A peer that never follows (its send and receive in separate groups, or its message under
  // SZ_AUTO_MIN_BYTES) is no pair: kMaxTrySends skewed sends in a row end the pairing.
  c.skewRun = skewed ? c.skewRun + 1 : 0;
  if (c.skewRun > kMaxTrySends) pair = skewed = false;
  c.leads = pair && leads;
  c.follows = pair && !leads && (c.follows >= 0 || skewed) ? pairFrames : -1;
  Mode& m = frames ? c.frames : c.raw;
  const bool counted = !skewed && m.seen > 0 && !(c.leads && c.pairSeen[frames] == 0);
  const bool explored = c.exploring && frames != c.explorePref;
  // A re-measurement's first counted send replaces what the mode measured before: those sends are
  // a period or more old, and may be the warm-up's (the host path's second frames send of a
  // class took twice a later one's on two cores, and stayed in the window for seven tries).
  if (counted && explored && !c.tryCounted) m.clear();
  if (counted) m.add(double(bytes) / seconds);
  ++m.seen;
  if (pair) ++c.pairSeen[pairFrames];
  if (explored) {
    --c.tryOut;
    c.tryCounted = c.tryCounted || counted;
  }
  if (frames && wireBytes > 0) {
    const double now = double(bytes) / double(wireBytes);
    c.ratio = c.ratio == 0 ? now : 0.5 * c.ratio + 0.5 * now;
  }
  learnLatency(c, peer, type, bytes);
  if (!explored || c.explore > 0 || c.tryOut > 0) return;  // the try's last send decides
  if (!c.tryCounted && c.trySends < kMaxTrySends) {
    c.explore = 1;  // one more send of the mode tried
    return;
  }
  c.exploring = false;
  if (!c.tryCounted) c.period = std::min(2 * c.period, int(kMaxPeriod));  // nothing learned: not soon again
  if (!m.measured()) return;
  if (prefersFrames(c, peer, type, bytes) != c.explorePref) {
    c.period = kMinPeriod;
    return;
  }
  // Confirmed: the next look comes twice as late, and late enough that looking costs at most
  // kExploreBudget of the sends' time (a mode 5x slower, as the CPU codec against loopback on two
  // cores, is tried once in 256 sends, not once in 32).
  // The period stays a power of two, so a peer's larger period is a multiple of this one.
  const Mode& kept = c.explorePref ? c.frames : c.raw;
  const double loss = kept.bps() / m.bps();
  const double byCost = loss > 1 ? double(c.trySends) * (loss - 1) / kExploreBudget : 0;
  int period = 2 * c.period;
  while (period < kMaxPeriod && period < byCost) period *= 2;
  c.period = std::min(period, int(kMaxPeriod));
}

void judgeExchanges(int rank, std::vector<SlotCompletion>& done) {
  for (SlotCompletion& s : done) {
    if (!s.send) continue;
    for (const SlotCompletion& r : done) {
      if (r.send || r.type != s.type || AutoModel::sizeClass(r.bytes) != AutoModel::sizeClass(s.bytes)) continue;
      s.exchangeSeconds = std::max({s.exchangeSeconds, s.seconds, r.seconds});
      if (r.peer != s.peer) continue;
      // Modes as the wire shows them: a frames send whose slices all stayed raw (data that does
      // not compress) looks raw to its peer, as the peer's does to this rank.
      const bool sentFrames = !s.groups.empty(), pairSentFrames = r.compressedSlices > 0;
      s.exchangePairFrames = sentFrames == pairSentFrames ? int(s.frames) : int(!s.frames);
      s.exchangeLeads = rank < s.peer;
    }
  }
}

}  // namespace sz
