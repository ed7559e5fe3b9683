// The drift policy of SZ_CODEBOOK=auto (src/proto/codebook_drift.h) on simulated senders: each
// slice is a histogram of exponents, encoded with the codebook the policy plans (after its
// calibration when it asks for one), its escapes reported back as a frame header would.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "codec/code_bits.h"
#include "codec/dtype.h"
#include "src/proto/codebook_drift.h"

namespace {

using sz::CodebookDrift;

constexpr uint64_t kSliceElems = 1 << 16;

// A KV-like BF16 exponent distribution: geometric on both sides of `centre` (about 1.5 % of
// elements beyond 16 exponents of the centre).
std::vector<double> kvWeights(int centre) {
  std::vector<double> w(256, 0.0);
  for (int d = -20; d <= 3; ++d) w[size_t(centre + d)] = d <= 0 ? std::pow(0.55, -d) : std::pow(0.3, d);
  return w;
}

// One slice drawn from `weights` (multinomial: the noise of real slices).
std::vector<unsigned long long> draw(const std::vector<double>& weights, std::mt19937& rng, uint64_t n = kSliceElems) {
  std::discrete_distribution<int> d(weights.begin(), weights.end());
  std::vector<unsigned long long> h(256, 0);
  for (uint64_t i = 0; i < n; ++i) h[size_t(d(rng))]++;
  return h;
}

uint64_t escapesUnder(const std::vector<unsigned long long>& h, const szCodebook_t& cb) {
  uint64_t total = 0, covered = 0;
  for (auto c : h) total += c;
  for (uint8_t e : cb.exponents) covered += h[e];
  return total - covered;
}

// Sends one slice of histogram `h` to `peer`; returns its escapes and counts the calibrations.
struct Sender {
  CodebookDrift& drift;
  int group = 0;  // the segment group its slices belong to
  int calibrations = 0;
  szDataType_t type = szBfloat16;
  uint64_t send(const std::vector<unsigned long long>& h, int peer = 1) {
    CodebookDrift::Plan p = drift.plan(peer, type, group);
    szCodebook_t cb = p.codebook;
    if (p.calibrate) {
      ++calibrations;
      cb = drift.calibrated(peer, type, h.data(), group);
    }
    szFrameInfo_t f{};
    f.type = type;
    f.count = 0;
    for (auto c : h) f.count += c;
    f.escapeCount = escapesUnder(h, cb);
    const sz::TypeTraits t = sz::typeTraits(type);  // about where the encoder stores a frame raw
    f.raw = f.escapeCount * 8 * sz::kEscapeBytes + f.count * (t.smBits + sz::codebookBits(cb)) >= f.count * t.elemBits();
    f.codebook = cb;
    if (f.raw) f.escapeCount = 0;
    drift.sent(peer, f, cb, group);
    return escapesUnder(h, cb);
  }
};

TEST(CodebookDrift, TriggerMarginIsTenthOfAPercentOfTheRatio) {
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szBfloat16), 0.001 * 1.5 / 3);
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szFloat32), 0.001 * 3.5 / 3);
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szFloat8e5m2), 0.001 * 0.875 / 3);
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szFloat16), 0.001 * 1.875 / 3);
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szFloat16, 3), 0.001 * 1.75 / 3);
  EXPECT_DOUBLE_EQ(CodebookDrift::triggerMargin(szFloat8e4m3, 3), 0.001 * 0.875 / 3);
}

// FP16 and E4M3 (host buffers) have 3- or 4-bit codes, the width calibration picks. FP16 KV on 8
// exponents takes a 3-bit top-8 at its first slice although that escapes more than the 4-bit
// default (a bit an element saved for 0.003 % more escapes: an escape-only comparison kept the
// default); data that then spreads over 14 exponents escapes 43 % under it, drifts and gets a
// 4-bit top-16, once. The narrow data coming back stays on the 4-bit codebook (it escapes
// nothing, so nothing drifts: the bit is not won back). E4M3 follows a step with 3-bit codes,
// its 4-bit codes never gaining.
TEST(CodebookDrift, Fp16AndE4m3FollowTheirDataAcrossCodeWidths) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  Sender s{drift, 0, 0, szFloat16};
  std::mt19937 rng(7);
  std::vector<double> narrow(256, 0.0), wide(256, 0.0);
  for (int e = 10; e <= 17; ++e) narrow[size_t(e)] = double(e - 9);
  narrow[5] = 0.001;
  for (int e = 4; e <= 17; ++e) wide[size_t(e)] = 1.0;
  auto bits = [&] { return sz::codebookBits(drift.current(1, szFloat16)); };
  for (int i = 0; i < 20; ++i) s.send(draw(narrow, rng));
  EXPECT_EQ(bits(), 3u);
  EXPECT_EQ(drift.recalibrations(), 1u);
  std::vector<uint64_t> escapes;
  for (int i = 0; i < 40; ++i) escapes.push_back(s.send(draw(wide, rng)));
  EXPECT_GT(escapes[0], kSliceElems / 3);
  for (size_t i = 1; i < escapes.size(); ++i) EXPECT_EQ(escapes[i], 0u) << "slice " << i;
  EXPECT_EQ(bits(), 4u);
  EXPECT_EQ(drift.recalibrations(), 2u);
  for (int i = 0; i < 40; ++i) EXPECT_LT(s.send(draw(narrow, rng)), kSliceElems / 1000);
  EXPECT_EQ(drift.recalibrations(), 2u);
  EXPECT_EQ(s.calibrations, 2);

  Sender e4m3{drift, 0, 0, szFloat8e4m3};
  std::vector<double> before(256, 0.0), after(256, 0.0);
  for (int d = 0; d < 8; ++d) {
    before[size_t(13 - d)] = std::pow(0.55, d);
    after[size_t(7 - d)] = std::pow(0.55, d);
  }
  before[14] = after[8] = 0.5;
  for (int i = 0; i < 20; ++i) e4m3.send(draw(before, rng));
  escapes.clear();
  for (int i = 0; i < 40; ++i) escapes.push_back(e4m3.send(draw(after, rng)));
  EXPECT_GT(escapes[0], kSliceElems / 3);
  for (size_t i = 1; i < escapes.size(); ++i) EXPECT_LT(escapes[i], kSliceElems / 50) << "slice " << i;
  EXPECT_EQ(sz::codebookBits(drift.current(1, szFloat8e4m3)), 3u);
  EXPECT_EQ(e4m3.calibrations, 2);
}

TEST(CodebookDrift, DataTheDefaultFitsIsCalibratedOnlyAsTheFirstSliceAndKeepsTheDefault) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  Sender s{drift};
  std::mt19937 rng(1);
  std::vector<double> w(256, 0.0);  // the default's 16 exponents only, zeros included
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &def), szSuccess);
  for (int i = 0; i < 16; ++i) w[def.exponents[i]] = 1.0 + i;
  w[110] = 0.0003;  // 0.02 % escapes: under the 0.05 % trigger
  for (int i = 0; i < 100; ++i) s.send(draw(w, rng));
  EXPECT_EQ(s.calibrations, 1) << "the first slice's, and none after";
  EXPECT_EQ(drift.recalibrations(), 0u);
  EXPECT_EQ(drift.histograms(), 1u);
  EXPECT_EQ(memcmp(drift.plan(1, szBfloat16).codebook.exponents, def.exponents, 16), 0);
}

// Evidence for (peer, type, group): a frame of the default's data, no escape, counted.
void seen(CodebookDrift& drift, int peer, szDataType_t type, int group = 0) {
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(type, &def), szSuccess);
  szFrameInfo_t f{};
  f.type = type;
  f.count = kSliceElems;
  f.codebook = def;
  drift.sent(peer, f, def, group);
}

TEST(CodebookDrift, StepChangeSwitchesOnceAndTheEscapesRecoverAtTheNextSlice) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  Sender s{drift};
  std::mt19937 rng(2);
  const auto before = kvWeights(127), after = kvWeights(127 + 9);  // the KV scaled by 2^9
  for (int i = 0; i < 20; ++i) s.send(draw(before, rng));
  const int calibrationsBefore = s.calibrations;
  std::vector<uint64_t> escapes;
  for (int i = 0; i < 50; ++i) escapes.push_back(s.send(draw(after, rng)));
  EXPECT_GT(escapes[0], kSliceElems / 10) << "the default misses the shifted exponents";
  // The first shifted slice shows the drift, the second is calibrated on: from then on the
  // escapes are the data's own top-16's (the weights beyond 16 exponents: about 1 %).
  for (size_t i = 1; i < escapes.size(); ++i) EXPECT_LT(escapes[i], kSliceElems / 50) << "slice " << i;
  EXPECT_EQ(s.calibrations - calibrationsBefore, 1);
  EXPECT_LE(drift.recalibrations(), 2u);  // at most once for the first data, once for the step
  EXPECT_GE(drift.recalibrations(), 1u);
}

TEST(CodebookDrift, DataAtTheBoundaryDoesNotFlap) {
  // The default's 16 exponents, but its 16th (0) no more frequent than exponent 100 outside it,
  // each at the trigger's rate: windows cross the trigger about every other time, and a new
  // codebook would only trade one for the other. No flapping: at most one switch, and once the
  // expected rate has been measured, no more histograms. The state starts from evidence (else its
  // first slice is calibrated on and the expected rate measured at once).
  CodebookDrift drift(true, nullptr, kSliceElems);
  seen(drift, 1, szBfloat16);
  Sender s{drift};
  std::mt19937 rng(3);
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &def), szSuccess);
  std::vector<double> w(256, 0.0);
  const double margin = CodebookDrift::triggerMargin(szBfloat16) * 15;  // of 15 unit weights
  for (int i = 0; i < 15; ++i) w[def.exponents[i]] = 1.0;
  w[def.exponents[15]] = margin;
  w[100] = margin;
  for (int i = 0; i < 400; ++i) s.send(draw(w, rng));
  EXPECT_LE(drift.recalibrations(), 1u);
  EXPECT_GE(s.calibrations, 1) << "the windows did cross the trigger";
  EXPECT_LE(s.calibrations, 2 * CodebookDrift::kProbeSlices) << "histograms kept coming";
}

TEST(CodebookDrift, AlternatingDataEndsWithOneCodebookForBoth) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  Sender s{drift};
  std::mt19937 rng(4);
  std::vector<double> a(256, 0.0), b(256, 0.0);
  for (int e = 0; e < 8; ++e) {
    a[size_t(60 + e)] = 1.0 + e;
    b[size_t(200 + e)] = 1.0 + e;
  }
  uint64_t lateEscapes = 0;
  for (int i = 0; i < 300; ++i) {
    uint64_t e = s.send(draw(i % 2 ? b : a, rng));
    if (i >= 100) lateEscapes += e;
  }
  EXPECT_EQ(lateEscapes, 0u) << "the codebook covers both halves";
  EXPECT_LE(drift.recalibrations(), 3u);
  EXPECT_LE(s.calibrations, 6);
}

// Segment groups of one peer and type (szSendv's buffers) follow their own data: slices of two
// groups interleaved, one at the boundary (as DataAtTheBoundaryDoesNotFlap), the other stepping to
// the KV x 2^9. The stepping group switches once and recovers; the boundary group neither flaps
// nor takes the other's codebook.
TEST(CodebookDrift, SegmentGroupsFollowTheirOwnDataWithoutFlapping) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  Sender boundary{drift, 0}, stepping{drift, 5};
  std::mt19937 rng(6);
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &def), szSuccess);
  std::vector<double> w(256, 0.0);
  const double margin = CodebookDrift::triggerMargin(szBfloat16) * 15;
  for (int i = 0; i < 15; ++i) w[def.exponents[i]] = 1.0;
  w[def.exponents[15]] = margin;
  w[100] = margin;
  const auto before = kvWeights(127), after = kvWeights(127 + 9);
  std::vector<uint64_t> steppedEscapes;
  for (int i = 0; i < 400; ++i) {
    boundary.send(draw(w, rng));
    const uint64_t e = stepping.send(draw(i < 20 ? before : after, rng));
    if (i >= 20) steppedEscapes.push_back(e);
  }
  EXPECT_GT(steppedEscapes[0], kSliceElems / 10);
  for (size_t i = 1; i < steppedEscapes.size(); ++i) EXPECT_LT(steppedEscapes[i], kSliceElems / 50) << "slice " << i;
  EXPECT_LE(stepping.calibrations, 2);
  EXPECT_LE(boundary.calibrations, 2 * CodebookDrift::kProbeSlices) << "histograms kept coming";
  EXPECT_LE(drift.recalibrations(), 3u) << "at most one switch at the boundary and two for the step";
  const szCodebook_t mine = drift.plan(1, szBfloat16, 0).codebook, theirs = drift.plan(1, szBfloat16, 5).codebook;
  EXPECT_NE(memcmp(mine.exponents, theirs.exponents, 16), 0) << "one group took the other's codebook";
  const CodebookDrift::Plan fresh = drift.plan(1, szBfloat16, 3);
  EXPECT_TRUE(fresh.calibrate) << "a group not seen yet: its first slice is calibrated on";
  EXPECT_EQ(memcmp(fresh.codebook.exponents, def.exponents, 16), 0);
  EXPECT_FALSE(drift.plan(1, szBfloat16, 3).calibrate) << "one calibration at a time, the first too";
}

TEST(CodebookDrift, FixedNeverCalibratesAndStartsFromTheGivenCodebook) {
  szCodebook_t mine{};
  mine.type = szBfloat16;
  mine.used = 16;
  for (int i = 0; i < 16; ++i) mine.exponents[i] = uint8_t(60 + i);
  CodebookDrift drift(false, &mine, kSliceElems);
  Sender s{drift};
  std::mt19937 rng(5);
  for (int i = 0; i < 10; ++i) s.send(draw(kvWeights(127), rng));
  EXPECT_EQ(s.calibrations, 0);
  EXPECT_EQ(memcmp(drift.plan(3, szBfloat16).codebook.exponents, mine.exponents, 16), 0);
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &def), szSuccess);
  EXPECT_EQ(memcmp(drift.plan(3, szFloat8e5m2).codebook.exponents, def.exponents, 16), 0) << "other types: their default";
}

TEST(CodebookDrift, RawFramesAreDriftPeersAreApartAndOneCalibrationAtATime) {
  CodebookDrift drift(true, nullptr, 4096);
  szCodebook_t def;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &def), szSuccess);
  seen(drift, 0, szBfloat16);
  seen(drift, 1, szBfloat16);
  seen(drift, 0, szFloat32);
  szFrameInfo_t raw{};
  raw.type = szBfloat16;
  raw.raw = 1;
  raw.count = 1000;  // too small to tell: a raw frame this size may be raw for its header's sake
  for (int i = 0; i < 5; ++i) drift.sent(0, raw, def);
  EXPECT_FALSE(drift.plan(0, szBfloat16).calibrate);
  raw.count = 8192;
  drift.sent(0, raw, def);
  EXPECT_FALSE(drift.plan(1, szBfloat16).calibrate) << "another peer";
  EXPECT_FALSE(drift.plan(0, szFloat32).calibrate) << "another type";
  EXPECT_TRUE(drift.plan(0, szBfloat16).calibrate);
  EXPECT_FALSE(drift.plan(0, szBfloat16).calibrate) << "the planned calibration has not come back";
  std::vector<unsigned long long> h(256, 0);
  h[90] = 8192;
  szCodebook_t cb = drift.calibrated(0, szBfloat16, h.data());
  EXPECT_EQ(cb.exponents[0], 90);
  EXPECT_EQ(drift.recalibrations(), 1u);
  EXPECT_FALSE(drift.plan(0, szBfloat16).calibrate) << "it gained: no more probing";
  // Frames still encoded with the previous codebook (in flight across the switch) are not held
  // against the new one; the new one's are.
  for (int i = 0; i < 3; ++i) drift.sent(0, raw, def);
  EXPECT_FALSE(drift.plan(0, szBfloat16).calibrate);
  drift.sent(0, raw, cb);
  EXPECT_TRUE(drift.plan(0, szBfloat16).calibrate);
}

// A slice the codebook left raw (the host path encodes it again: retry) is calibrated on its own
// data at once: not held off by the holds that pace marginal drifts, not merged with the data of
// the switch before it. Both kept a shifted FP16 or E4M3 KV raw for sends on end (issue 33,
// tests/comm_host_v2_types_test.cc, 4 runs in 30 before).
TEST(CodebookDrift, ARawSliceIsCalibratedOnItsOwnDataWhateverTheHolds) {
  auto band = [](int lo) {
    std::vector<unsigned long long> h(256, 0);
    for (int e = lo; e < lo + 16; ++e) h[size_t(e)] = 512;  // 8192 elements in 16 exponents
    return h;
  };
  const std::vector<unsigned long long> a = band(110), b = band(104), c = band(40);
  CodebookDrift drift(true, nullptr, 4096);
  Sender s{drift};
  s.send(a);
  s.send(a);
  s.send(b);  // 6 of its 16 exponents escape a's top-16 (a raw frame): drifted
  s.send(b);  // calibrated on it and a's data together (soon after a switch): no gain yet
  // The next slice of b is calibrated with a second one and switches; two switches a few windows
  // apart hold off the next marginal drift. Beside it (another thread of the host path, before
  // that slice's frame is counted), a slice of c came out raw under the new codebook.
  ASSERT_TRUE(drift.plan(1, szBfloat16).calibrate);
  const szCodebook_t now = drift.calibrated(1, szBfloat16, b.data());
  ASSERT_EQ(drift.recalibrations(), 2u);
  szFrameInfo_t raw{};
  raw.type = szBfloat16;
  raw.raw = 1;
  raw.count = 8192;
  szCodebook_t cur;
  ASSERT_EQ(drift.retry(1, raw, now, &cur), CodebookDrift::kCalibrate) << "a raw slice is no marginal drift";
  const szCodebook_t cb = drift.calibrated(1, szBfloat16, c.data());
  EXPECT_EQ(escapesUnder(c, cb), 0u) << "c's own top-16, not one of b's and c's data together";
  EXPECT_EQ(drift.recalibrations(), 3u);
}

}  // namespace
