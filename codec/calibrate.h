// Codebook selection from an exponent histogram (paper §3.3), shared by the host calibration
// (szCodebookFromHistogram) and the device's online calibration so both pick the same codebook.
#pragma once

#include <cstdint>

#include "dtype.h"

namespace sz {

// The `entries` (16, or 8 for 3-bit codes) most frequent exponents (ties: smaller exponent
// first), most frequent first; then unseen exponents nearest the most frequent one, alternating
// above and below, as padding. Writes out[0..entries-1]; returns how many entries were seen
// (at least 1, so the codebook is always valid).
SZ_HD int selectCodebook(const unsigned long long* counts, uint32_t expBits, uint8_t* out,
                         int entries = int(kCodebookSize)) {
  const int range = 1 << expBits;
  uint64_t taken[4] = {0, 0, 0, 0};
  int used = 0;
  for (; used < entries; ++used) {
    int best = -1;
    for (int e = 0; e < range; ++e)
      if (!(taken[e / 64] >> (e % 64) & 1) && counts[e] > 0 && (best < 0 || counts[e] > counts[best])) best = e;
    if (best < 0) break;
    out[used] = uint8_t(best);
    taken[best / 64] |= uint64_t(1) << (best % 64);
  }
  const int center = used > 0 ? out[0] : range / 2 - 1;
  int n = used;
  for (int d = 0; n < entries; ++d) {
    const int cand[2] = {center + d, center - d - 1};
    for (int c = 0; c < 2; ++c) {
      int e = cand[c];
      if (n < entries && e >= 0 && e < range && !(taken[e / 64] >> (e % 64) & 1)) {
        out[n++] = uint8_t(e);
        taken[e / 64] |= uint64_t(1) << (e % 64);
      }
    }
  }
  return used > 0 ? used : 1;
}

}  // namespace sz
