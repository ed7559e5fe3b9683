// The CPU codec's measured throughput (throughput.h).
#include "throughput.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "splitzip.h"

namespace sz {
namespace {

constexpr size_t kElems = size_t(1) << 19;  // 1 MiB of BF16

// Deterministic normal values (Box-Muller on a 64-bit LCG) as BF16 bits: a sign, an exponent
// near the top of the codebook and a mantissa, like a KV tensor's.
std::vector<uint16_t> sample() {
  std::vector<uint16_t> out(kElems);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  auto uniform = [&s] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (double(s >> 11) + 0.5) / double(uint64_t(1) << 53);
  };
  for (size_t i = 0; i < kElems; ++i) {
    const float v = float(std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()));
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    out[i] = uint16_t(bits >> 16);
  }
  return out;
}

double measure() {
  using Clock = std::chrono::steady_clock;
  const std::vector<uint16_t> in = sample();
  size_t cap = 0;
  if (szEncodeMaxSize(kElems, szBfloat16, &cap) != szSuccess) return 0;
  std::vector<uint8_t> frame(cap);
  std::vector<uint16_t> out(kElems);
  // The first round touches the pages; of the others the fastest of each counts (a round slowed
  // by another thread, such as another rank's init, does not lower the rate).
  double enc = 1e30, dec = 1e30;
  for (int round = 0; round < 4; ++round) {
    size_t bytes = 0;
    const auto t0 = Clock::now();
    if (szEncode(in.data(), kElems, szBfloat16, nullptr, 0, frame.data(), cap, &bytes) != szSuccess) return 0;
    const auto t1 = Clock::now();
    if (szDecode(frame.data(), bytes, out.data(), kElems * 2, nullptr, nullptr) != szSuccess) return 0;
    const auto t2 = Clock::now();
    if (round == 0) continue;
    enc = std::min(enc, std::chrono::duration<double>(t1 - t0).count());
    dec = std::min(dec, std::chrono::duration<double>(t2 - t1).count());
  }
  if (memcmp(in.data(), out.data(), kElems * 2) != 0) return 0;
  const double slower = enc > dec ? enc : dec;
  return slower > 0 ? double(kElems * 2) / slower : 0;
}

}  // namespace

double cpuCodecThreadBps() {
  static std::once_flag once;
  static double bps = 0;
  std::call_once(once, [] { bps = measure(); });
  return bps;
}

}  // namespace sz
