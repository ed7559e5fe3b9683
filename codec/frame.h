// The frame header and section layout of docs/FORMAT.md: computing sizes from (type, count)
// with overflow checks, and writing / parsing / validating the 96-byte header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype.h"

namespace sz {

constexpr uint16_t kFrameVersion = 1;
constexpr uint16_t kFlagRaw = 0x1;
constexpr uint16_t kFlagCrc = 0x2;
constexpr uint64_t kHeaderBytes = SZ_FRAME_HEADER_BYTES;

// Section sizes and offsets (from the frame start) of a compressed frame.
struct FrameLayout {
  uint64_t count = 0;
  uint64_t numChunks = 0, numGroups = 0;
  uint64_t smBytes = 0, codeBytes = 0, indexBytes = 0;
  uint64_t smOff = 0, codeOff = 0, indexOff = 0, countsOff = 0, escOff = 0;
  uint64_t rawBytes = 0;  // count * element size
};

// Fills `layout` for `count` elements of `type`; false if a size overflows 64 bits.
bool computeLayout(int type, uint64_t count, FrameLayout* layout);

struct FrameHeader {
  uint16_t version = kFrameVersion;
  uint16_t flags = 0;
  uint8_t type = 0;
  uint8_t codebookUsed = 0;
  uint32_t chunkElems = kChunkElems;
  uint64_t count = 0;
  uint64_t escapeCount = 0;
  uint64_t smBytes = 0, codeBytes = 0, indexBytes = 0, escapeBytes = 0;
  uint8_t codebook[kCodebookSize] = {};
  uint32_t payloadCrc = 0;
  uint32_t headerCrc = 0;
};

void writeHeader(const FrameHeader& h, uint8_t* out);
// Parses the header (magic and reserved fields checked); validateHeader checks the rest.
szResult_t readHeader(const uint8_t* in, uint64_t available, FrameHeader* h);

// Validates a parsed header against the bytes available; fills `layout` and `frameBytes`.
// Returns szCorruptFrame with a message naming the field on failure.
szResult_t validateHeader(const FrameHeader& h, uint64_t available, FrameLayout* layout,
                          uint64_t* frameBytes);

// Size of a compressed frame's payload holding `escapes` escapes; false on overflow.
bool compressedPayloadBytes(const FrameLayout& l, uint64_t escapes, uint64_t* bytes);

// Little-endian loads and stores at any alignment.
inline uint16_t loadLe16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline void storeLe16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline uint64_t loadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline void storeLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

}  // namespace sz
