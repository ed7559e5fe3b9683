// The exponent statistics of paper Table 1 (entropy, top-k coverage, escape rate, predicted
// ratio), computed from an exponent histogram, and the frame size docs/FORMAT.md gives for a
// number of elements and escapes.
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip.h"

namespace sztool {

struct ExponentStats {
  uint64_t count = 0;
  std::vector<uint64_t> histogram;  // 2^exponentBits entries
  double entropyBits = 0;           // Shannon entropy of the exponent distribution
  double top8Coverage = 0, top16Coverage = 0;
  int distinctExponents = 0;
  uint64_t escapes = 0;        // elements whose exponent is not in the given codebook
  szCodebook_t oracle{};       // the data's own codebook (szCodebookFromHistogram: its width too)
  uint64_t oracleEscapes = 0;  // elements whose exponent is not in `oracle`
  uint64_t frameBytes = 0;     // predicted frame size under the given codebook
  uint64_t oracleFrameBytes = 0;
  uint64_t widthFrameBytes[2] = {0, 0};  // predicted under the oracle top-8 (3-bit) and top-16 (4-bit)
};

ExponentStats exponentStats(const szHistogram_t& hist, const szCodebook_t& codebook);

// Size of the frame szEncode writes for `count` elements of `type` with `escapes` escapes and
// `codeBits`-bit codes: 96 + align16(sign-mantissa) + align16(codes) + align16(index) +
// 3 * escapes, or the raw
// frame when that payload would not be smaller than the raw bytes.
uint64_t predictedFrameBytes(szDataType_t type, uint64_t count, uint64_t escapes, int codeBits);

}  // namespace sztool
