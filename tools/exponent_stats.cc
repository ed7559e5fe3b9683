// Exponent statistics and the predicted frame size (see exponent_stats.h).
#include "exponent_stats.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "cli_common.h"

namespace sztool {
namespace {

uint64_t align16(uint64_t v) { return (v + 15) / 16 * 16; }

uint64_t escapesUnder(const std::vector<uint64_t>& hist, const szCodebook_t& cb) {
  uint64_t covered = 0, total = 0;
  for (uint64_t c : hist) total += c;
  // Every entry gets a code (padding ones too), so only exponents outside all of them escape.
  for (int i = 0; i < (1 << codeBitsOf(cb)); ++i)
    if (cb.exponents[i] < hist.size()) covered += hist[cb.exponents[i]];
  return total - covered;
}

}  // namespace

uint64_t predictedFrameBytes(szDataType_t type, uint64_t count, uint64_t escapes, int codeBits) {
  const uint64_t elemBits = 8 * szTypeSize(type), raw = count * szTypeSize(type);
  const uint64_t smBytes = (count * (elemBits - exponentBits(type)) + 7) / 8;
  const uint64_t codeBytes = (count * uint64_t(codeBits) + 7) / 8;
  const uint64_t chunks = (count + 1023) / 1024, groups = (chunks + 31) / 32;
  const uint64_t indexBytes = 8 * groups + 2 * chunks;
  uint64_t payload = align16(smBytes) + align16(codeBytes) + align16(indexBytes) + 3 * escapes;
  return SZ_FRAME_HEADER_BYTES + std::min(payload, raw);  // payload >= raw: stored raw
}

ExponentStats exponentStats(const szHistogram_t& hist, const szCodebook_t& codebook) {
  ExponentStats s;
  s.histogram.assign(hist.counts, hist.counts + (size_t(1) << exponentBits(hist.type)));
  for (uint64_t c : s.histogram) s.count += c;
  std::vector<uint64_t> sorted = s.histogram;
  std::sort(sorted.begin(), sorted.end(), std::greater<uint64_t>());
  uint64_t top8 = 0, top16 = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i < 8) top8 += sorted[i];
    if (i < 16) top16 += sorted[i];
    if (sorted[i] == 0) continue;
    ++s.distinctExponents;
    double p = double(sorted[i]) / double(s.count);
    s.entropyBits -= p * std::log2(p);
  }
  if (s.count > 0) {
    s.top8Coverage = double(top8) / double(s.count);
    s.top16Coverage = double(top16) / double(s.count);
  }
  check(szCodebookFromHistogram(&hist, &s.oracle), "oracle codebook");
  s.escapes = escapesUnder(s.histogram, codebook);
  s.oracleEscapes = escapesUnder(s.histogram, s.oracle);
  s.frameBytes = predictedFrameBytes(hist.type, s.count, s.escapes, codeBitsOf(codebook));
  s.oracleFrameBytes = predictedFrameBytes(hist.type, s.count, s.oracleEscapes, codeBitsOf(s.oracle));
  for (int bits : {3, 4}) {  // Table 1's two widths: the oracle top-8 and top-16
    szCodebook_t cb;
    check(szCodebookFromHistogramBits(&hist, bits, &cb), "oracle codebook");
    s.widthFrameBytes[bits - 3] = predictedFrameBytes(hist.type, s.count, escapesUnder(s.histogram, cb), bits);
  }
  return s;
}

}  // namespace sztool
