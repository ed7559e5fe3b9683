// The host path's encode under SZ_CODEBOOK=auto (CodebookDrift::encodeHost, what src/proto/host_slots.cc's
// encode tasks run) on real frames: a slice that comes out raw with a codebook not calibrated on it
// is encoded again, once, and incompressible data stops the re-encodes (counted, not timed).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kv_samples.h"
#include "splitzip.h"
#include "src/proto/codebook_drift.h"

namespace {

using sz::CodebookDrift;

constexpr size_t kSliceElems = 1 << 16;

struct Encoded {
  std::vector<uint8_t> frame;
  szCodebook_t codebook{};
  szFrameInfo_t info{};
};

// Encodes the BF16 slice `data` planned with `plan`, reports the frame to the policy as
// postSend does, and checks that the frame decodes to the slice.
Encoded encode(CodebookDrift& drift, const CodebookDrift::Plan& plan, const uint8_t* data, size_t count) {
  Encoded e;
  size_t cap = 0, bytes = 0;
  EXPECT_EQ(szEncodeMaxSize(count, szBfloat16, &cap), szSuccess);
  e.frame.resize(cap);
  EXPECT_EQ(drift.encodeHost(1, szBfloat16, plan, data, count, e.frame.data(), cap, &bytes, &e.codebook), szSuccess)
      << szGetLastError(nullptr);
  e.frame.resize(bytes);
  EXPECT_EQ(szFrameGetInfo(e.frame.data(), bytes, &e.info), szSuccess);
  std::vector<uint8_t> back(count * 2);
  EXPECT_EQ(szDecode(e.frame.data(), bytes, back.data(), back.size(), nullptr, nullptr), szSuccess);
  EXPECT_EQ(memcmp(back.data(), data, back.size()), 0) << "the frame does not decode to its slice";
  drift.sent(1, e.info, e.codebook);
  return e;
}

// The KV sample's first `count` elements, times 2^shift.
std::vector<uint8_t> kv(size_t count, int shift) {
  std::vector<uint8_t> v = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  EXPECT_GE(v.size(), count * 2);
  v.resize(count * 2);
  return shift ? sztest::scaledBf16(v, shift) : v;
}

double ratio(const Encoded& e) { return double(e.info.count * 2) / double(e.frame.size()); }

TEST(CodebookReencode, ASliceThatShiftedSinceThePlanIsCalibratedOnItselfAndEncodedAgain) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  const std::vector<uint8_t> before = kv(kSliceElems, 0), after = kv(kSliceElems, 9);
  const CodebookDrift::Plan first = drift.plan(1, szBfloat16);
  ASSERT_TRUE(first.calibrate) << "a new state's first slice";
  EXPECT_FALSE(encode(drift, first, before.data(), kSliceElems).info.raw);
  const uint64_t switches = drift.recalibrations();
  const CodebookDrift::Plan plan = drift.plan(1, szBfloat16);
  ASSERT_FALSE(plan.calibrate) << "no drift seen: the shift is news to the policy";
  const Encoded e = encode(drift, plan, after.data(), kSliceElems);
  EXPECT_FALSE(e.info.raw);
  EXPECT_GT(ratio(e), 1.32);
  EXPECT_EQ(drift.reencodes(), 1u);
  EXPECT_EQ(drift.histograms(), 2u) << "the first slice's and the shifted one's";
  EXPECT_EQ(drift.recalibrations(), switches + 1);
  EXPECT_EQ(memcmp(drift.plan(1, szBfloat16).codebook.exponents, e.codebook.exponents, 16), 0)
      << "the state took the re-encode's codebook";
  const Encoded next = encode(drift, drift.plan(1, szBfloat16), after.data(), kSliceElems);
  EXPECT_FALSE(next.info.raw);
  EXPECT_EQ(drift.reencodes(), 1u) << "the next slice fits at once";
}

// A first send of several slices: the later slices are planned while the first slice's
// calibration is out, with the default; they are encoded again with the first slice's codebook
// when it came back meanwhile, else with their own top-16, without touching the state.
TEST(CodebookReencode, SlicesPlannedWhileTheFirstCalibrationIsOutAreEncodedAgain) {
  const std::vector<uint8_t> shifted = kv(kSliceElems, 9);
  for (bool firstBackFirst : {true, false}) {
    CodebookDrift drift(true, nullptr, kSliceElems);
    const CodebookDrift::Plan p0 = drift.plan(1, szBfloat16), p1 = drift.plan(1, szBfloat16);
    ASSERT_TRUE(p0.calibrate);
    ASSERT_FALSE(p1.calibrate) << "one calibration at a time";
    Encoded e0, e1;
    if (firstBackFirst) e0 = encode(drift, p0, shifted.data(), kSliceElems);
    e1 = encode(drift, p1, shifted.data(), kSliceElems);
    EXPECT_EQ(drift.histograms(), firstBackFirst ? 1u : 0u) << "slice 1 took the current codebook or its own";
    if (!firstBackFirst) e0 = encode(drift, p0, shifted.data(), kSliceElems);
    for (const Encoded* e : {&e0, &e1}) {
      EXPECT_FALSE(e->info.raw) << firstBackFirst;
      EXPECT_GT(ratio(*e), 1.32) << firstBackFirst;
    }
    EXPECT_EQ(drift.reencodes(), 1u) << "slice 1 only";
    EXPECT_EQ(drift.histograms(), 1u) << "the policy saw one histogram";
    EXPECT_EQ(drift.recalibrations(), 1u);
  }
}

// Random bytes typed as BF16 never compress: each re-encode stays raw and holds re-encodes off
// for kRetryHold windows (a window is a slice here), so a long stream costs few extra encodes.
TEST(CodebookReencode, IncompressibleDataIsEncodedAgainOncePerRetryHoldAtMost) {
  CodebookDrift drift(true, nullptr, kSliceElems);
  std::mt19937 rng(7);
  std::vector<uint8_t> data(kSliceElems * 2);
  const int slices = 2 * CodebookDrift::kRetryHold + 20;
  int raw = 0;
  for (int i = 0; i < slices; ++i) {
    for (uint8_t& b : data) b = uint8_t(rng());
    raw += encode(drift, drift.plan(1, szBfloat16), data.data(), kSliceElems).info.raw;
  }
  EXPECT_EQ(raw, slices);
  const uint64_t encodes = uint64_t(slices) + drift.reencodes();
  EXPECT_GE(drift.reencodes(), 1u) << "a slice planned without calibration was retried";
  EXPECT_LE(drift.reencodes(), 3u) << "one re-encode per kRetryHold windows";
  EXPECT_LE(encodes, uint64_t(slices) + 3);
  // The drift policy's own probes, which were there before re-encodes: a few per hold.
  EXPECT_LE(drift.histograms(), uint64_t(slices) / 16);
  printf("[ counts   ] %d random slices: %llu encodes, %llu histograms, %llu switches\n", slices,
         (unsigned long long)encodes, (unsigned long long)drift.histograms(),
         (unsigned long long)drift.recalibrations());
}

}  // namespace
