// The CPU codec's measured throughput (throughput.h).
#include "throughput.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "dtype.h"
#include "splitzip.h"

namespace sz {
namespace {

constexpr size_t kBytes = size_t(1) << 20;

// Deterministic normal values (Box-Muller on a 64-bit LCG) as `type`'s bits, truncated: a sign,
// an exponent near the top of the type's default codebook and a mantissa, like a KV tensor's.
// FP16 and E5M2 hold them as they are; E4M3 scaled by 90 (its amax -> 448 of a 5-sigma tail),
// saturating at 448, as quantised KV is. Values under a type's smallest normal flush to zero.
std::vector<uint8_t> sample(szDataType_t type) {
  const TypeTraits t = typeTraits(type);
  const size_t n = kBytes / t.elemBytes;
  std::vector<uint8_t> out(n * t.elemBytes);
  const int bias = (1 << (t.expBits - 1)) - 1, maxExp = (1 << t.expBits) - (type == szFloat8e4m3 ? 1 : 2);
  const uint32_t maxMant = type == szFloat8e4m3 ? (1u << t.mantBits) - 2 : (1u << t.mantBits) - 1;
  const double scale = type == szFloat8e4m3 ? 90.0 : 1.0;
  uint64_t s = 0x9e3779b97f4a7c15ull;
  auto uniform = [&s] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (double(s >> 11) + 0.5) / double(uint64_t(1) << 53);
  };
  for (size_t i = 0; i < n; ++i) {
    const float v = float(scale * std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()));
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = int((bits >> 23) & 0xFF) - 127 + bias;
    uint32_t m = (bits & 0x7FFFFF) >> (23 - t.mantBits);
    if (e <= 0) e = 0, m = 0;
    if (e > maxExp || (e == maxExp && m > maxMant)) e = maxExp, m = maxMant;
    const uint32_t w = ((bits >> 31) << (t.elemBits() - 1)) | (uint32_t(e) << t.mantBits) | m;
    memcpy(&out[i * t.elemBytes], &w, t.elemBytes);  // little-endian: the low bytes
  }
  return out;
}

double measure(szDataType_t type) {
  using Clock = std::chrono::steady_clock;
  const std::vector<uint8_t> in = sample(type);
  const size_t elems = in.size() / typeTraits(type).elemBytes;
  size_t cap = 0;
  if (szEncodeMaxSize(elems, type, &cap) != szSuccess) return 0;
  std::vector<uint8_t> frame(cap);
  std::vector<uint8_t> out(in.size());
  // The first round touches the pages; of the others the fastest of each counts (a round slowed
  // by another thread, such as another rank's init, does not lower the rate).
  double enc = 1e30, dec = 1e30;
  for (int round = 0; round < 4; ++round) {
    size_t bytes = 0;
    const auto t0 = Clock::now();
    if (szEncode(in.data(), elems, type, nullptr, 0, frame.data(), cap, &bytes) != szSuccess) return 0;
    const auto t1 = Clock::now();
    if (szDecode(frame.data(), bytes, out.data(), out.size(), nullptr, nullptr) != szSuccess) return 0;
    const auto t2 = Clock::now();
    if (round == 0) continue;
    enc = std::min(enc, std::chrono::duration<double>(t1 - t0).count());
    dec = std::min(dec, std::chrono::duration<double>(t2 - t1).count());
  }
  if (in != out) return 0;
  const double slower = enc > dec ? enc : dec;
  return slower > 0 ? double(in.size()) / slower : 0;
}

}  // namespace

double cpuCodecThreadBps(szDataType_t type) {
  if (type < 0 || type >= szNumTypes || !szTypeIsCompressible(type)) return 0;
  static std::once_flag once[szNumTypes];
  static double bps[szNumTypes] = {};
  std::call_once(once[type], [type] { bps[type] = measure(type); });
  return bps[type];
}

}  // namespace sz
