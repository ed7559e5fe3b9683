// What SZ_CODEBOOK=auto costs the host slots' encode loop in steady state (issue 13's goal:
// within 2 % of a fixed codebook). Per slice the loop does what src/proto/host_slots.cc does for a send:
// plan the codebook (src/proto/codebook_drift.h), encode the slice, read the frame's header and
// report it to the policy; `fixed` runs the same loop with the policy fixed (SZ_CODEBOOK=default),
// `auto` with it following the data. Rounds alternate the two (which goes first alternates too);
// each round times `--iters` passes over the buffer. Prints the medians of encode GB/s
// (uncompressed), the median of the rounds' paired ratios auto / fixed, and the policy's own
// cost per slice (its plan, header and sent calls timed alone), the figure that does not depend on how
// busy the machine is.
//
//   codebook_perf [--data FILE] [--bytes 64M] [--slice-bytes 4M] [--rounds 15] [--iters 5]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "common/perf_data.h"
#include "src/proto/codebook_drift.h"
#include "splitzip.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Loop {
  const std::vector<uint8_t>& data;
  size_t sliceElems;
  std::vector<uint8_t> frame;
  uint64_t wire = 0;

  // One pass over the buffer as the pipeline's encode tasks and postSend do it; seconds.
  double pass(sz::CodebookDrift& drift) {
    const size_t count = data.size() / 2;
    auto t0 = Clock::now();
    for (size_t off = 0; off < count; off += sliceElems) {
      const size_t n = std::min(sliceElems, count - off);
      const sz::CodebookDrift::Plan plan = drift.plan(1, szBfloat16);
      szCodebook_t cb;
      size_t bytes = 0;
      if (drift.encodeHost(1, szBfloat16, plan, data.data() + 2 * off, n, frame.data(), frame.size(), &bytes, &cb) !=
          szSuccess)
        return -1;
      szFrameInfo_t info;
      if (szFrameGetInfo(frame.data(), bytes, &info) != szSuccess) return -1;
      drift.sent(1, info, cb);
      wire += bytes;
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The steady-state cost of SZ_CODEBOOK=auto in the host encode loop"};
  std::string data;
  size_t bytes = 64 << 20, sliceBytes = 4 << 20;
  int rounds = 15, iters = 5;
  app.add_option("--data", data, "BF16 KV (raw, .npy or .safetensors), tiled to --bytes; default generated");
  app.add_option("--bytes", bytes, "buffer bytes")->check(CLI::PositiveNumber)->transform(CLI::AsSizeValue(false));
  app.add_option("--slice-bytes", sliceBytes, "slice bytes (SZ_SLICE_BYTES)")
      ->check(CLI::PositiveNumber)->transform(CLI::AsSizeValue(false));
  app.add_option("--rounds", rounds, "rounds of each setting, interleaved")->check(CLI::PositiveNumber);
  app.add_option("--iters", iters, "passes over the buffer per round")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (bytes < 2) {
    fprintf(stderr, "codebook_perf: --bytes %zu holds no BF16 element\n", bytes);
    return 1;
  }
  std::vector<uint8_t> pattern, buf;
  try {
    pattern = data.empty() ? szperf::generateData(szBfloat16, bytes) : szperf::readData(data, szBfloat16);
    if (pattern.size() < 2) throw std::runtime_error("no BF16 elements in " + data);
    buf.resize(bytes / 2 * 2);
  } catch (const std::exception& e) {
    fprintf(stderr, "codebook_perf: %s\n", e.what());
    return 1;
  }
  szperf::tile(buf.data(), buf.size(), pattern);
  size_t cap = 0;
  const size_t sliceElems = std::max<size_t>(sliceBytes / 2, 1);
  if (szEncodeMaxSize(sliceElems, szBfloat16, &cap) != szSuccess) return 1;
  Loop loop{buf, sliceElems, std::vector<uint8_t>(cap)};
  sz::CodebookDrift fixed(false), follow(true);
  for (sz::CodebookDrift* d : {&fixed, &follow}) loop.pass(*d);  // warm-up; auto settles here
  const uint64_t settled = follow.recalibrations();
  std::vector<double> fixedGbps, autoGbps, paired;
  for (int r = 0; r < rounds; ++r) {
    double t[2] = {0, 0};  // fixed, auto
    for (int k = 0; k < 2; ++k) {
      const int which = (r + k) % 2;
      for (int i = 0; i < iters; ++i) {
        const double s = loop.pass(which ? follow : fixed);
        if (s < 0) {
          fprintf(stderr, "codebook_perf: encode failed: %s\n", szGetLastError(nullptr));
          return 1;
        }
        t[which] += s;
      }
    }
    fixedGbps.push_back(double(buf.size()) * iters / t[0] / 1e9);
    autoGbps.push_back(double(buf.size()) * iters / t[1] / 1e9);
    paired.push_back(autoGbps.back() / fixedGbps.back());
  }
  // The policy alone, as many times as there were slices: plan, encodeHost's look at the frame
  // header (a raw frame is encoded again) and sent.
  szFrameInfo_t info;
  size_t oneFrame = 0;
  szCodebook_t cb = follow.plan(1, szBfloat16).codebook;
  const size_t firstSlice = std::min(sliceElems, buf.size() / 2);
  if (szEncode(buf.data(), firstSlice, szBfloat16, &cb, 0, loop.frame.data(), cap, &oneFrame) != szSuccess ||
      szFrameGetInfo(loop.frame.data(), oneFrame, &info) != szSuccess)
    return 1;
  const int calls = 100000;
  auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) {
    const szCodebook_t planned = follow.plan(1, szBfloat16).codebook;
    szFrameInfo_t header;
    if (szFrameGetInfo(loop.frame.data(), oneFrame, &header) != szSuccess ||
        follow.retry(1, header, planned, &cb) != sz::CodebookDrift::kNoRetry)
      return 1;
    follow.sent(1, info, planned);
  }
  const double policyNs = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls;
  const double sliceNs = double(firstSlice) * 2 / (median(fixedGbps) * 1e9) * 1e9;
  printf("# codebook_perf: %zu bytes of %s, %zu-byte slices, %d rounds x %d passes, ratio %.4f\n", buf.size(),
         data.empty() ? "generated KV-like BF16" : data.c_str(), sliceElems * 2, rounds, iters,
         double(buf.size()) * (2.0 * rounds * iters + 2) / double(loop.wire));
  printf("encode GB/s: fixed %.3f, auto %.3f (medians; min-max %.3f-%.3f, %.3f-%.3f)\n", median(fixedGbps),
         median(autoGbps), *std::min_element(fixedGbps.begin(), fixedGbps.end()),
         *std::max_element(fixedGbps.begin(), fixedGbps.end()), *std::min_element(autoGbps.begin(), autoGbps.end()),
         *std::max_element(autoGbps.begin(), autoGbps.end()));
  printf("auto / fixed: %.4f (ratio of medians), %.4f (median of paired rounds)\n", median(autoGbps) / median(fixedGbps),
         median(paired));
  printf("policy per slice: %.0f ns (plan + header + sent) against %.0f ns to encode it: %.5f %%\n", policyNs, sliceNs,
         100 * policyNs / sliceNs);
  printf("recalibrations: %llu while warming up, %llu after\n", (unsigned long long)settled,
         (unsigned long long)(follow.recalibrations() - settled));
  return 0;
}
