// The exponent-code width (docs/FORMAT.md §Code width): 4-bit codes index a 16-entry codebook,
// 3-bit codes (format version 2) an 8-entry one. szCodebook_t keeps 0.1.0's layout: a 3-bit
// codebook marks entries 8..15 SZ_CODEBOOK_UNUSED (0xFF), which a 4-bit codebook cannot hold
// eight times (its entries are distinct); in a frame header those entries are 0.
#pragma once

#include <cstdint>
#include <cstring>

#include "dtype.h"

namespace sz {

constexpr uint32_t kNarrowCodebookSize = 8;  // entries of a 3-bit codebook

SZ_HD bool marksNarrow(const uint8_t* exponents) {
  for (uint32_t i = kNarrowCodebookSize; i < kCodebookSize; ++i)
    if (exponents[i] != SZ_CODEBOOK_UNUSED) return false;
  return true;
}

// 3 or 4: the width of a codebook's exponent codes.
inline uint32_t codebookBits(const szCodebook_t& cb) { return marksNarrow(cb.exponents) ? 3 : 4; }

// How many elements of histogram `counts` (exponents 0..range-1) the codebook gives a code: the
// counts of its 2^bits entries (a 3-bit codebook's entries 8..15 are unused); the rest escape.
inline unsigned long long codedBy(const unsigned long long* counts, uint32_t range, const szCodebook_t& cb) {
  unsigned long long coded = 0;
  for (uint32_t i = 0; i < (1u << codebookBits(cb)); ++i)
    if (cb.exponents[i] < range) coded += counts[cb.exponents[i]];
  return coded;
}

// A codebook's entries as a frame header's codebook field holds them.
inline void headerEntries(const szCodebook_t& cb, uint8_t* field) {
  memcpy(field, cb.exponents, kCodebookSize);
  if (codebookBits(cb) == 3) memset(field + kNarrowCodebookSize, 0, kCodebookSize - kNarrowCodebookSize);
}

// A frame header's codebook as a szCodebook_t.
inline void codebookFromHeader(int type, int used, const uint8_t* field, uint32_t codeBits, szCodebook_t* cb) {
  cb->type = szDataType_t(type);
  cb->used = used;
  memcpy(cb->exponents, field, kCodebookSize);
  if (codeBits == 3) memset(cb->exponents + kNarrowCodebookSize, SZ_CODEBOOK_UNUSED, kCodebookSize - kNarrowCodebookSize);
}

}  // namespace sz
