// SZ_CODEC=auto's model (src/proto/auto_model.h) driven with synthetic send times: the decision
// table of its priors (wire rate x codec rate x type x size), a wrong prior undone after one warm
// send, short and long runs against the better fixed mode over the defaults issue's emulated
// links, exploration that costs little once settled, a change of the link followed, and peers,
// types and sizes kept apart; each type judged by its own codec rate and code width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "codec/throughput.h"
#include "src/proto/auto_model.h"
#include "tests/noisy_wire.h"

namespace {

using sztest::Noise;
constexpr double kGB = 1e9;
constexpr uint64_t k64M = 64ull << 20, k1G = 1ull << 30;

// A link and codec as they really are: a send's time in each mode, by the pipeline model unless
// rawBps / framesBps give a mode's throughput outright (a path bound elsewhere). A class's first
// send (the first launches) and its first frames send (calibration) are `coldFactor` slower.
// Every send also spends `rest` seconds off the wire (launches), and a frames send `latency`
// more (its first slice encoded, its last decoded).
struct Truth {
  double wireBps, codecBps, coldFactor = 1.0, rawBps = 0, framesBps = 0, ratio = 4.0 / 3.0, rest = 0, latency = 0;
  double seconds(uint64_t bytes, bool frames, bool cold) const {
    double bps = frames ? (framesBps > 0 ? framesBps : std::min(codecBps, wireBps * ratio))
                        : (rawBps > 0 ? rawBps : wireBps);
    return (rest + (frames ? latency : 0) + double(bytes) / bps) * (cold ? coldFactor : 1.0);
  }
};

// Runs `sends` sends of `bytes` to `peer`; returns the seconds of the last `timed` of them and
// counts the frames among those.
// With `queued`, the timed sends are all decided before any of them is recorded, as when a
// benchmark enqueues them back to back and the GPU finishes them later.
double run(sz::AutoModel& m, const Truth& t, int peer, uint64_t bytes, int sends, int timed, int* frames = nullptr,
           szDataType_t type = szBfloat16, bool queued = false) {
  double total = 0;
  bool framesSeen = false;
  std::vector<std::pair<bool, double>> pending;
  for (int i = 0; i < sends; ++i) {
    const bool f = m.useFrames(peer, type, bytes);
    const double s = t.seconds(bytes, f, i == 0 || (f && !framesSeen));
    framesSeen = framesSeen || f;
    const bool isTimed = i >= sends - timed;
    if (queued && isTimed) pending.emplace_back(f, s);
    else m.record(peer, type, bytes, f, s, f ? uint64_t(double(bytes) / t.ratio) : bytes);
    if (isTimed) {
      total += s;
      if (frames) *frames += f;
    }
  }
  for (auto [f, s] : pending) m.record(peer, type, bytes, f, s, f ? uint64_t(double(bytes) / t.ratio) : bytes);
  return total;
}

// The same sends all in one fixed mode (SZ_CODEC=on or off).
double fixed(const Truth& t, uint64_t bytes, int sends, int timed, bool frames) {
  double total = 0;
  for (int i = sends - timed; i < sends; ++i) total += t.seconds(bytes, frames, i == 0);
  return total;
}

TEST(AutoModel, DecisionTableOfThePriors) {
  struct Case {
    double wireGBps, codecGBps;
    szDataType_t type;
    bool frames;
  };
  const Case cases[] = {
      {12.5, 1200, szBfloat16, true},    // a network: the codec hides, the gain is the ratio
      {400, 1200, szBfloat16, true},     // min(1200, 533) >= 1.03 x 400
      {1000, 1200, szBfloat16, true},    // min(1200, 1333) = 1200 >= 1030
      {1200, 1200, szBfloat16, false},   // the codec no faster than the wire
      {2400, 1200, szBfloat16, false},   // one GPU's own memory
      {25, 1200, szFloat32, true},       // FP32's ratio 32 / 28
      {25, 1200, szFloat8e5m2, true},    // E5M2's ratio 8 / 7
      {1100, 1200, szFloat32, true},     // min(1200, 1257) = 1200 >= 1.03 x 1100
      {1180, 1200, szFloat32, false},    // 1200 < 1.03 x 1180
      {0, 1200, szBfloat16, false},      // an unknown wire, a known codec: raw measures the wire first
      {0, 0, szBfloat16, true},          // both unknown: the wire taken as slow
      {25, 0, szBfloat16, true},         // an unknown codec: taken as fast
      {0.5, 0.2, szBfloat16, false},     // a CPU codec slower than the wire
  };
  for (const Case& c : cases) {
    sz::AutoModel m;
    m.setPriors({}, sz::AutoPrior{c.wireGBps * kGB, c.codecGBps * kGB});
    for (uint64_t bytes : {uint64_t(256) << 10, k64M, k1G})
      EXPECT_EQ(m.useFrames(1, c.type, bytes), c.frames)
          << c.wireGBps << " GB/s wire, " << c.codecGBps << " GB/s codec, type " << c.type << ", " << bytes;
  }
}

TEST(AutoModel, AWrongPriorIsUndoneAfterOneWarmSend) {
  // The prior says frames (a 400 GB/s link, a 1.2 TB/s codec), but the codec path really moves
  // 360 GB/s (one GPU shared by both ranks' kernels): after the cold and one warm frames send,
  // raw, and frames only as re-measurements.
  sz::AutoModel m;
  m.setPriors({}, sz::AutoPrior{400 * kGB, 1200 * kGB});
  const Truth t{400 * kGB, 360 * kGB, 3.0};
  int frames = 0;
  run(m, t, 1, k64M, 2, 2, &frames);
  EXPECT_EQ(frames, 2);
  frames = 0;
  run(m, t, 1, k64M, 100, 100, &frames);
  EXPECT_LE(frames, 100 / sz::AutoModel::kMinPeriod);
}

TEST(AutoModel, ShortAndLongRunsKeepUpWithTheBetterMode) {
  // The defaults issue's goal: auto >= 0.97 x max(on, off) over emulated links, in a short run
  // (2 warm-up sends, 5 timed) and a long one (100 timed), for a codec path that hides behind the
  // link and for one slower than some of the links, at 64 MiB and 1 GiB.
  for (double codecGBps : {1200.0, 360.0})
    for (double link : {12.5, 25.0, 50.0, 100.0, 200.0, 400.0, 2000.0})
      for (uint64_t bytes : {k64M, k1G})
        for (auto [warmup, timed] : {std::pair{2, 5}, std::pair{2, 100}}) {
          sz::AutoModel m;
          m.setPriors({}, sz::AutoPrior{link * kGB, 1200 * kGB});
          const Truth t{link * kGB, codecGBps * kGB, 3.0};
          const double autoSec = run(m, t, 1, bytes, warmup + timed, timed);
          const double best = std::min(fixed(t, bytes, warmup + timed, timed, true),
                                       fixed(t, bytes, warmup + timed, timed, false));
          EXPECT_GE(best / autoSec, 0.97) << link << " GB/s link, codec " << codecGBps << " GB/s, " << bytes
                                          << " bytes, " << timed << " timed sends";
        }
}

TEST(AutoModel, ARawPathBoundOffTheWireIsNotTakenForTheWire) {
  // One H200, no cap (measured at b079036): the prior says a 2407 GB/s wire and a 1444 GB/s codec
  // path (raw); the sends really run raw at ~400 and as frames at ~250 GB/s (both ranks' kernels
  // on one GPU), and the first raw send took 11x the others. Raw from the first send to the last.
  for (auto [warmup, timed] : {std::pair{2, 5}, std::pair{2, 100}}) {
    sz::AutoModel m;
    m.setPriors({}, sz::AutoPrior{2407 * kGB, 1444 * kGB});
    const Truth t{2407 * kGB, 1444 * kGB, 11.0, 400 * kGB, 250 * kGB};
    int frames = 0;
    const double autoSec = run(m, t, 1, k64M, warmup + timed, timed, &frames);
    EXPECT_EQ(frames, 0) << timed;
    EXPECT_GE(fixed(t, k64M, warmup + timed, timed, false) / autoSec, 0.97) << timed;
  }
  // Without the prior the raw sends' 400 GB/s would pass for the wire: frames predicted at
  // min(1444, 533), sent, measured at 250 and dropped after one warm send.
  sz::AutoModel n;
  const Truth t{2407 * kGB, 1444 * kGB, 1.0, 400 * kGB, 250 * kGB};
  int frames = 0;
  run(n, t, 1, k64M, 100, 100, &frames);
  EXPECT_LE(frames, 2 + 100 / sz::AutoModel::kMinPeriod);
}

TEST(AutoModel, AMixedSizeSweepLearnsEachSize) {
  // -b 256K -e 1G -f 2 over a 25 GB/s link: every size's first send already compresses.
  sz::AutoModel m;
  m.setPriors({}, sz::AutoPrior{25 * kGB, 1200 * kGB});
  const Truth t{25 * kGB, 1200 * kGB};
  for (uint64_t bytes = 256 << 10; bytes <= k1G; bytes *= 2) {
    int frames = 0;
    run(m, t, 1, bytes, 7, 7, &frames);
    EXPECT_EQ(frames, 7) << bytes;
  }
}

TEST(AutoModel, AnUnknownWireIsMeasuredAtOnce) {
  // No prior for the wire nor the codec: frames first, then raw is measured and the faster kept.
  sz::AutoModel m;
  const Truth slowCodec{2 * kGB, 1 * kGB};  // a 2-core CPU codec against loopback
  int frames = 0;
  run(m, slowCodec, 1, k64M, 5, 5, &frames);
  EXPECT_LE(frames, 3);  // the cold and one warm frames send, then raw
  frames = 0;
  run(m, slowCodec, 1, k64M, 64, 64, &frames);
  EXPECT_LE(frames, 64 / sz::AutoModel::kMinPeriod);
  sz::AutoModel n;
  const Truth fastCodec{3 * kGB, 1200 * kGB};  // a GPU codec against sockets
  frames = 0;
  run(n, fastCodec, 1, k64M, 64, 64, &frames);
  EXPECT_GE(frames, 64 - 64 / sz::AutoModel::kMinPeriod - 2);
}

TEST(AutoModel, AKnownCodecOnAnUnknownWireSendsRawUntilTheWireIsMeasured) {
  // Host buffers over tcp: the CPU codec's rate is measured at init (codec/throughput.h), the
  // wire's is not. A 2-core codec against loopback never sends frames in a short run; the same
  // codec against a link slower than itself compresses from the third send (a cold and a warm
  // raw send measure the wire), in short and long runs.
  const Truth loopback{2 * kGB, 1 * kGB}, slowLink{0.4 * kGB, 1 * kGB};
  for (uint64_t bytes : {uint64_t(1) << 20, k64M}) {
    sz::AutoModel m;
    m.setPriors({}, sz::AutoPrior{0, 1 * kGB});
    int frames = 0;
    run(m, loopback, 1, bytes, 64, 64, &frames);
    EXPECT_EQ(frames, 0) << bytes;
    sz::AutoModel n;
    n.setPriors({}, sz::AutoPrior{0, 1 * kGB});
    frames = 0;
    run(n, slowLink, 1, bytes, 7, 5, &frames);
    EXPECT_EQ(frames, 5) << bytes;
    frames = 0;
    const double autoTime = run(n, slowLink, 1, bytes, 100, 100, &frames);
    EXPECT_GE(frames, 100 - 100 / sz::AutoModel::kMinPeriod) << bytes;
    EXPECT_LE(autoTime, fixed(slowLink, bytes, 200, 100, true) / 0.97) << bytes;
    // The CPU goal's long run (-n 20 -w 2): frames 1.33x faster than raw are not re-measured
    // every few sends (2 extra raw sends would cost 3%).
    sz::AutoModel l;
    l.setPriors({}, sz::AutoPrior{0, 1 * kGB});
    EXPECT_LE(run(l, slowLink, 1, bytes, 22, 20), fixed(slowLink, bytes, 22, 20, true) / 0.97) << bytes;
  }
}

TEST(AutoModel, ATentativeCodecPriorThatIsTooLowIsUndoneWithinSixteenSends) {
  // The CPU codec's rate measured at init came out low (0.3 GB/s, taken beside another rank's
  // start) while it really moves 2 GB/s over a 1 GB/s wire: the model starts raw, but tries
  // frames after kMinPeriod sends and keeps them. A device prior (not tentative) would wait 1024.
  const Truth t{1 * kGB, 2 * kGB};
  sz::AutoModel m;
  sz::AutoPrior prior{0, 0.3 * kGB};
  prior.codecTentative = true;
  m.setPriors({}, prior);
  int frames = 0;
  run(m, t, 1, k64M, 200, 150, &frames);
  EXPECT_GE(frames, 150 - 150 / sz::AutoModel::kMinPeriod);
  sz::AutoModel n;
  n.setPriors({}, sz::AutoPrior{0, 0.3 * kGB});
  frames = 0;
  run(n, t, 1, k64M, 200, 200, &frames);
  EXPECT_EQ(frames, 0);
}

TEST(AutoModel, AModeFarSlowerIsTriedRarelyEnoughToCostLittle) {
  // FP32 over loopback on two cores: the CPU codec's tentative prior (measured on BF16) says 30
  // GB/s, but frames move 0.4 GB/s against raw's 2: five times slower. Once measured, trying
  // frames again costs at most ~2% (AutoModel::kExploreBudget): no try in the next 100 sends
  // (doubling alone from 16 would try at +32 and +64), and 400 sends, the first frames sends that
  // the prior asked for included, within 5% of raw's time (7% by doubling alone).
  const Truth t{2 * kGB, 0.4 * kGB};
  sz::AutoPrior prior{0, 30 * kGB};
  prior.codecTentative = true;
  sz::AutoModel m;
  m.setPriors({}, prior);
  int frames = 0;
  run(m, t, 1, 1 << 20, 40, 0);
  run(m, t, 1, 1 << 20, 100, 100, &frames);
  EXPECT_EQ(frames, 0);
  sz::AutoModel n;
  n.setPriors({}, prior);
  const double autoTime = run(n, t, 1, 1 << 20, 400, 400);
  EXPECT_LE(autoTime, 1.05 * fixed(t, 1 << 20, 400, 400, false));
}

TEST(AutoModel, SettlesOnTheFasterModeAndExploresRarely) {
  sz::AutoModel m;
  const Truth nvlink{2000 * kGB, 1000 * kGB};  // raw twice as fast
  run(m, nvlink, 1, k64M, 200, 0);
  int frames = 0;
  run(m, nvlink, 1, k64M, 4096, 4096, &frames);
  EXPECT_GT(frames, 0);           // it still re-measures
  EXPECT_LE(frames, 4096 / 512);  // the period has grown to at least 512
}

TEST(AutoModel, FollowsAChangeOfTheLink) {
  sz::AutoModel m;
  run(m, Truth{2000 * kGB, 1000 * kGB}, 0, 1 << 20, 3000, 0);  // settled on raw, long period
  EXPECT_FALSE(m.useFrames(0, szBfloat16, 1 << 20));
  // The link slows down: frames become faster; within two periods the model switches.
  const Truth slow{10 * kGB, 1000 * kGB};
  run(m, slow, 0, 1 << 20, 2 * sz::AutoModel::kMaxPeriod + 8, 0);
  int frames = 0;
  run(m, slow, 0, 1 << 20, 100, 100, &frames);
  EXPECT_GE(frames, 95);
}

TEST(AutoModel, PeersTypesAndSizeClassesAreSeparate) {
  sz::AutoModel m;
  const Truth rawFaster{2000 * kGB, 1000 * kGB}, framesFaster{10 * kGB, 1000 * kGB};
  run(m, rawFaster, 0, 1 << 20, 500, 0);
  run(m, framesFaster, 1, 1 << 20, 500, 0);
  run(m, framesFaster, 0, 1 << 28, 500, 0);
  run(m, framesFaster, 0, 1 << 20, 500, 0, nullptr, szFloat32);
  int f = 0;
  run(m, rawFaster, 0, 1 << 20, 100, 100, &f);
  EXPECT_LE(f, 2);
  f = 0;
  run(m, framesFaster, 1, 1 << 20, 100, 100, &f);
  EXPECT_GE(f, 98);
  f = 0;
  run(m, framesFaster, 0, (1 << 28) + 5, 100, 100, &f);
  EXPECT_GE(f, 98);
  f = 0;
  run(m, framesFaster, 0, 1 << 20, 100, 100, &f, szFloat32);
  EXPECT_GE(f, 98);
}

TEST(AutoModel, EachPeerStartsFromItsOwnWire) {
  // A decode rank with a prefill rank on its node over NVLink (peer 1: a 400 GB/s link, no gain
  // from a 360 GB/s codec path) and one on another node (peer 2: a 25 GB/s NIC): from the first
  // send, raw to the one and frames to the other.
  sz::AutoModel m;
  m.setPriors({sz::AutoPrior{}, sz::AutoPrior{400 * kGB, 360 * kGB}, sz::AutoPrior{25 * kGB, 360 * kGB}});
  EXPECT_FALSE(m.useFrames(1, szBfloat16, k64M));
  EXPECT_TRUE(m.useFrames(2, szBfloat16, k64M));
  // A peer past the list takes the default prior (unknown: frames first).
  EXPECT_TRUE(m.useFrames(7, szBfloat16, k64M));
}

TEST(AutoModel, SmallMessagesPayTheCodecLatency) {
  // A mixed-size sweep (-b 256K -e 64M -f 2, 2 warm-up sends then 5 queued timed ones) over a
  // 25 GB/s link, as measured on one H100 (rank 0's trace at b50b098, 2 MiB): every send 10 us off
  // the wire, a frames send 11 us more. Raw wins up to 1 MiB, frames from 2 MiB. Before the latency
  // was learned, 2 MiB stayed raw: its frames sends (82-85 us) compared with the prior's pure wire
  // time (84 us), and the raw sends' measurements came after the run.
  sz::AutoModel m;
  m.setPriors({}, sz::AutoPrior{25 * kGB, 1000 * kGB});
  Truth t{25 * kGB, 1000 * kGB};
  t.rest = 10e-6;
  t.latency = 11e-6;
  for (uint64_t bytes = 256 << 10; bytes <= k64M; bytes *= 2) {
    const double autoSec = run(m, t, 1, bytes, 7, 5, nullptr, szBfloat16, true);
    const double best = std::min(fixed(t, bytes, 7, 5, true), fixed(t, bytes, 7, 5, false));
    EXPECT_GE(best / autoSec, 0.97) << bytes;
  }
}

TEST(AutoModel, ALatencyPriorKeepsSmallMessagesRawFromTheFirstSend) {
  // With the device path's latency prior (10 us), the sizes where frames lose never send one:
  // their warm-up sends are raw too, so the timed ones are not a class's first raw sends.
  sz::AutoModel m;
  sz::AutoPrior p{25 * kGB, 1000 * kGB};
  p.codecLatency = 10e-6;
  m.setPriors({}, p);
  Truth t{25 * kGB, 1000 * kGB};
  t.rest = 10e-6;
  t.latency = 11e-6;
  for (uint64_t bytes : {uint64_t(256) << 10, uint64_t(512) << 10}) {
    int frames = 0;
    run(m, t, 1, bytes, 7, 7, &frames, szBfloat16, true);
    EXPECT_EQ(frames, 0) << bytes;
  }
  // 2 MiB, the latency not yet learned (no class measured both modes): the warm-up frames sends
  // (84 us against the prior's 84 us of wire time) predict raw with the prior's latency.
  int frames = 0;
  run(m, t, 1, 2 << 20, 7, 5, &frames, szBfloat16, true);
  EXPECT_EQ(frames, 5) << "2 MiB: frames win by 10%";
}

TEST(AutoModel, EachTypeIsJudgedByItsOwnCodecRateAndCodeWidth) {
  // Host buffers: the CPU codec's rate is measured per type (codec/throughput.h). Over a 1 GB/s
  // wire, BF16 coded at 100 GB/s predicts frames, E4M3 coded at 0.5 GB/s raw (BF16's rate alone
  // would have had it compress at half the wire's speed).
  sz::AutoPrior prior{1 * kGB, 100 * kGB};
  prior.typeCodecBps[szFloat8e4m3] = 0.5 * kGB;
  sz::AutoModel m;
  m.setPriors({}, prior);
  EXPECT_TRUE(m.useFrames(1, szBfloat16, k64M));
  EXPECT_FALSE(m.useFrames(1, szFloat8e4m3, k64M));
  // E4M3's default codebook has 3-bit codes: 8/7 predicted, so frames win on a wire slower than
  // its codec (4-bit codes predict 8/8: never frames); FP16's 4-bit default predicts 16/15.
  sz::AutoModel n;
  n.setPriors({}, sz::AutoPrior{1 * kGB, 100 * kGB});
  EXPECT_TRUE(n.useFrames(1, szFloat8e4m3, k64M));
  EXPECT_TRUE(n.useFrames(1, szFloat16, k64M));
}

TEST(AutoModel, TheCpuCodecRateIsMeasuredForEachCompressibleType) {
  printf("[ figures  ] one thread's CPU codec rate, GB/s:");
  for (int t = 0; t < szNumTypes; ++t) {
    const double bps = sz::cpuCodecThreadBps(szDataType_t(t));
    if (szTypeIsCompressible(szDataType_t(t))) {
      EXPECT_GT(bps, 0.0) << t;
      printf(" type %d %.2f", t, bps / kGB);
    } else {
      EXPECT_EQ(bps, 0.0) << t;
    }
  }
  printf("\n");
  EXPECT_EQ(sz::cpuCodecThreadBps(szNumTypes), 0.0);
}

}  // namespace

namespace {

// Like run(), each send's time times the next factor of `noise`: returns the timed sends' seconds.
double runNoisy(sz::AutoModel& m, const Truth& t, uint64_t bytes, int sends, int timed, Noise noise, bool first,
                int* frames = nullptr) {
  double total = 0;
  for (int i = 0; i < sends; ++i) {
    const bool f = m.useFrames(1, szBfloat16, bytes);
    const double s = t.seconds(bytes, f, first && i == 0) * noise.factor();
    m.record(1, szBfloat16, bytes, f, s, f ? uint64_t(double(bytes) / t.ratio) : bytes);
    if (i >= sends - timed) {
      total += s;
      if (frames) *frames += f;
    }
  }
  return total;
}

double fixedNoisy(const Truth& t, uint64_t bytes, int sends, int timed, Noise noise, bool first, bool frames) {
  double total = 0;
  for (int i = 0; i < sends; ++i) {
    const double s = t.seconds(bytes, frames, first && i == 0) * noise.factor();
    if (i >= sends - timed) total += s;
  }
  return total;
}

}  // namespace

TEST(AutoModel, ACapturedSendTriesNothing) {
  // Sends captured into a CUDA graph are never recorded: they must not start a re-measurement,
  // which would then never end (and the class would never re-measure again).
  sz::AutoPrior prior{10 * kGB, 1000 * kGB};
  prior.codecTentative = true;  // raw is first tried at send 16, not 1024
  sz::AutoModel m;
  m.setPriors({}, prior);
  constexpr uint64_t kBytes = 64 << 20;
  run(m, Truth{10 * kGB, 1000 * kGB}, 1, kBytes, 15, 0);  // settled on frames, 15 sends
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(m.useFrames(1, szBfloat16, kBytes, false));
  int frames = 0;
  run(m, Truth{2000 * kGB, 1000 * kGB}, 1, kBytes, 200, 100, &frames);  // the link got faster: raw wins now
  EXPECT_LE(frames, 10);
}

TEST(AutoModel, ANoisyWireKeepsTheBetterModeWhereTheyDifferByMoreThanTheNoise) {
  // tcp over loopback on one H100 (17aec1e, medians of three cycles): device buffers at 4 MiB,
  // raw 1.22 and frames 1.41 GB/s; host buffers at 1 MiB, raw 2.01 and frames 1.72; at 64 MiB,
  // raw 2.19 and frames 2.95. The wire's rate is unknown to the priors (loopback reports none);
  // the device codec's is known, the CPU codec's is a tentative measurement. The benchmark's
  // short run (-n 10 -w 2, three cycles on one communicator) and a long one, 200 seeds each:
  // auto's total time against the better fixed mode's.
  struct Case {
    const char* what;
    uint64_t bytes;
    double rawGBps, framesGBps;
    sz::AutoPrior prior;
  };
  sz::AutoPrior device{0, 1000 * kGB, 10e-6}, host{0, 6 * kGB};
  host.codecTentative = true;
  constexpr uint32_t kSeeds = 200;
  const Case cases[] = {{"tcp-dev 4 MiB", 4 << 20, 1.22, 1.41, device},
                        {"tcp-host 1 MiB", 1 << 20, 2.01, 1.72, host},
                        {"tcp-host 64 MiB", k64M, 2.19, 2.95, host}};
  for (const Case& c : cases)
    for (auto [cycles, sends] : {std::pair{3, 12}, std::pair{1, 200}}) {
      double autoSum = 0, bestSum = 0;
      int framesSum = 0;
      for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
        sz::AutoModel m;
        m.setPriors({}, c.prior);
        Truth t{0, 0, 3.0, c.rawGBps * kGB, c.framesGBps * kGB};
        double a = 0, on = 0, off = 0;
        for (int cycle = 0; cycle < cycles; ++cycle) {
          const uint32_t s = seed * 16 + uint32_t(cycle);
          a += runNoisy(m, t, c.bytes, sends, sends - 2, Noise(s), cycle == 0, &framesSum);
          on += fixedNoisy(t, c.bytes, sends, sends - 2, Noise(s), cycle == 0, true);
          off += fixedNoisy(t, c.bytes, sends, sends - 2, Noise(s), cycle == 0, false);
        }
        autoSum += a;
        bestSum += std::min(on, off);
      }
      // The goal is 0.97 (0.9707-0.9715 here in short runs, 0.982-0.990 in long ones); the faster
      // of a mode's two latest sends as its figure gave 0.964-0.970 and 0.964-0.975. Only a class's
      // first send is charged as cold here (on loopback the first frames send's calibration is
      // not known apart from the noise).
      EXPECT_GE(bestSum / autoSum, cycles == 3 ? 0.97 : 0.98) << c.what << ", " << cycles << " x " << sends << " sends; frames "
                                         << framesSum << " of " << kSeeds * cycles * (sends - 2);
    }
}

TEST(AutoModel, AWarmUpSampleDoesNotOutliveTheNextReMeasurement) {
  // Host buffers over a paced 1.5 GB/s link on two cores (2026-12-06): a class's second frames
  // send still took twice a later one's (the pool's warm-up), raw won the next sends on it, and
  // that sample stayed in the frames window through seven re-measurements, so auto sent raw at
  // 0.84 of frames. A re-measurement's first counted send replaces the mode's old samples: frames
  // from the first re-measurement on.
  sz::AutoModel m;
  m.setPriors({}, sz::AutoPrior{1.5 * kGB, 2.0 * kGB});
  const uint64_t bytes = 1 << 20;
  auto send = [&](double framesSec, double rawSec) {
    const bool f = m.useFrames(1, szBfloat16, bytes);
    m.record(1, szBfloat16, bytes, f, f ? framesSec : rawSec, f ? bytes * 3 / 4 : bytes);
    return f;
  };
  EXPECT_TRUE(send(5000e-6, 1000e-6));  // the prior: frames; cold, not counted
  EXPECT_TRUE(send(1800e-6, 1000e-6));  // warm-up: counted, slower than raw
  int framesSends = 0, rawSends = 0;
  for (int i = 0; i < 13; ++i) (send(900e-6, 1000e-6) ? framesSends : rawSends) += 1;  // sends 3-15
  EXPECT_EQ(framesSends, 0) << "raw once frames measured slower";
  framesSends = 0;
  for (int i = 0; i < 40; ++i) framesSends += send(900e-6, 1000e-6);
  EXPECT_GE(framesSends, 38) << "frames from the first re-measurement (send 16) on";
}
