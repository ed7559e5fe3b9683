// The frame header and section layout of docs/FORMAT.md: sizes computed from (type, count)
// with overflow checks, and writing / parsing / validating the 96-byte header. Everything here
// is also compiled for the GPU, so the host and device codecs share one definition of a frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype.h"

namespace sz {

constexpr uint16_t kFrameVersion = 1;   // bf16, fp32, fp8e5m2 with 4-bit codes, and every raw frame
constexpr uint16_t kFrameVersion2 = 2;  // adds code_bits (3 or 4) and the fp16 and fp8e4m3 types
constexpr uint16_t kFlagRaw = 0x1;
constexpr uint16_t kFlagCrc = 0x2;
constexpr uint64_t kHeaderBytes = SZ_FRAME_HEADER_BYTES;

// Section sizes and offsets (from the frame start) of a compressed frame.
struct FrameLayout {
  uint64_t count;
  uint64_t numChunks, numGroups;
  uint64_t smBytes, codeBytes, indexBytes;
  uint64_t smOff, codeOff, indexOff, countsOff, escOff;
  uint64_t rawBytes;  // count * element size
  uint32_t codeBits;  // exponent-code width: 4, or 3 (format version 2)
};

struct FrameHeader {
  uint16_t version;
  uint16_t flags;
  uint8_t type;
  uint8_t codebookUsed;
  uint8_t codeBits;  // offset 10: 3 or 4 in a compressed version-2 frame, else 0 (4-bit codes)
  uint32_t chunkElems;
  uint64_t count;
  uint64_t escapeCount;
  uint64_t smBytes, codeBytes, indexBytes, escapeBytes;
  uint8_t codebook[kCodebookSize];
  uint32_t payloadCrc;
  uint32_t headerCrc;
  bool magicOk;     // parsed: magic bytes were "SZIP"
  bool reservedOk;  // parsed: reserved fields were zero
};

// Why a header is invalid; headerErrorString() says it in words.
enum HeaderError {
  kHeaderOk = 0,
  kHeaderTruncated,
  kHeaderMagic,
  kHeaderReserved,
  kHeaderVersion,
  kHeaderFlags,
  kHeaderType,
  kHeaderChunk,
  kHeaderCountOverflow,
  kHeaderRawFields,
  kHeaderRawType,
  kHeaderSections,
  kHeaderEscapeCount,
  kHeaderCodebook,
  kHeaderFrameTruncated,
  kHeaderCodeBits,
};
const char* headerErrorString(HeaderError e);

// No 64-bit division: every decoding block checks a header, and on the GPU a division is a
// long software routine on the path to the first store.
SZ_HD bool mulOk(uint64_t a, uint64_t b, uint64_t* out) {
#if defined(__CUDA_ARCH__)
  *out = a * b;
  return __umul64hi(a, b) == 0;
#else
  return !__builtin_mul_overflow(a, b, out);
#endif
}
SZ_HD bool addOk(uint64_t a, uint64_t b, uint64_t* out) {
  *out = a + b;
  return *out >= a;
}
SZ_HD bool align16Ok(uint64_t v, uint64_t* out) {
  *out = (v + 15) & ~uint64_t(15);
  return v <= ~uint64_t(0) - 15;
}

// Fills `l` for `count` elements of `type` with `codeBits`-bit exponent codes (3 or 4); false
// if the type is invalid or a size overflows.
SZ_HD bool computeLayout(int type, uint64_t count, FrameLayout* l, uint32_t codeBits = 4) {
  TypeTraits t = typeTraits(type);
  *l = FrameLayout{};
  l->count = count;
  l->codeBits = codeBits;
  if (t.elemBytes == 0 || !mulOk(count, t.elemBytes, &l->rawBytes)) return false;
  if (t.expBits == 0) return true;
  uint64_t smBits, codeBitsTotal, a;
  if (!mulOk(count, t.smBits, &smBits) || !mulOk(count, codeBits, &codeBitsTotal)) return false;
  l->smBytes = smBits / 8 + (smBits % 8 != 0);
  l->codeBytes = codeBitsTotal / 8 + (codeBitsTotal % 8 != 0);
  l->numChunks = count / kChunkElems + (count % kChunkElems != 0);
  l->numGroups = l->numChunks / kChunksPerGroup + (l->numChunks % kChunksPerGroup != 0);
  l->indexBytes = 8 * l->numGroups + 2 * l->numChunks;  // numChunks <= count / 1024 + 1
  l->smOff = kHeaderBytes;
  if (!align16Ok(l->smBytes, &a) || !addOk(l->smOff, a, &l->codeOff)) return false;
  if (!align16Ok(l->codeBytes, &a) || !addOk(l->codeOff, a, &l->indexOff)) return false;
  l->countsOff = l->indexOff + 8 * l->numGroups;
  return align16Ok(l->indexBytes, &a) && addOk(l->indexOff, a, &l->escOff);
}

// Size of a compressed frame's payload holding `escapes` escapes; false on overflow.
SZ_HD bool compressedPayloadBytes(const FrameLayout& l, uint64_t escapes, uint64_t* bytes) {
  uint64_t escBytes;
  return mulOk(escapes, kEscapeBytes, &escBytes) && addOk(l.escOff - kHeaderBytes, escBytes, bytes);
}

SZ_HD uint16_t loadLe16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
SZ_HD void storeLe16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
SZ_HD uint32_t loadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
SZ_HD void storeLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
SZ_HD uint64_t loadLe64(const uint8_t* p) { return loadLe32(p) | uint64_t(loadLe32(p + 4)) << 32; }
SZ_HD void storeLe64(uint8_t* p, uint64_t v) {
  storeLe32(p, uint32_t(v));
  storeLe32(p + 4, uint32_t(v >> 32));
}

// The version a compressed frame of `type` with `codeBits`-bit codes needs (raw frames: 1).
SZ_HD uint16_t frameVersionFor(int type, uint32_t codeBits, bool raw) {
  return raw || (deviceCodecType(type) && codeBits == 4) ? kFrameVersion : kFrameVersion2;
}

// Writes the 96 header bytes (reserved fields zero).
SZ_HD void writeHeader(const FrameHeader& h, uint8_t* b) {
  const uint8_t magic[4] = {'S', 'Z', 'I', 'P'};
  for (int i = 0; i < 4; ++i) b[i] = magic[i];
  storeLe16(b + 4, h.version);
  storeLe16(b + 6, h.flags);
  b[8] = h.type;
  b[9] = h.codebookUsed;
  b[10] = h.codeBits;
  b[11] = 0;
  storeLe32(b + 12, h.chunkElems);
  storeLe64(b + 16, h.count);
  storeLe64(b + 24, h.escapeCount);
  storeLe64(b + 32, h.smBytes);
  storeLe64(b + 40, h.codeBytes);
  storeLe64(b + 48, h.indexBytes);
  storeLe64(b + 56, h.escapeBytes);
  for (uint32_t i = 0; i < kCodebookSize; ++i) b[64 + i] = h.codebook[i];
  storeLe32(b + 80, h.payloadCrc);
  storeLe32(b + 84, h.headerCrc);
  storeLe64(b + 88, 0);
}

// Parses 96 header bytes (no validation beyond noting magic and reserved fields).
SZ_HD void readHeader(const uint8_t* b, FrameHeader* h) {
  h->magicOk = b[0] == 'S' && b[1] == 'Z' && b[2] == 'I' && b[3] == 'P';
  h->reservedOk = b[11] == 0 && loadLe64(b + 88) == 0;
  h->version = loadLe16(b + 4);
  h->flags = loadLe16(b + 6);
  h->type = b[8];
  h->codebookUsed = b[9];
  h->codeBits = b[10];
  h->chunkElems = loadLe32(b + 12);
  h->count = loadLe64(b + 16);
  h->escapeCount = loadLe64(b + 24);
  h->smBytes = loadLe64(b + 32);
  h->codeBytes = loadLe64(b + 40);
  h->indexBytes = loadLe64(b + 48);
  h->escapeBytes = loadLe64(b + 56);
  for (uint32_t i = 0; i < kCodebookSize; ++i) h->codebook[i] = b[64 + i];
  h->payloadCrc = loadLe32(b + 80);
  h->headerCrc = loadLe32(b + 84);
}

// Validates a parsed header against the `available` frame bytes (docs/FORMAT.md
// §Validation); on success fills `l` and the frame's total size.
SZ_HD HeaderError checkHeader(const FrameHeader& h, uint64_t available, FrameLayout* l,
                              uint64_t* frameBytes) {
  if (available < kHeaderBytes) return kHeaderTruncated;
  if (!h.magicOk) return kHeaderMagic;
  if (!h.reservedOk) return kHeaderReserved;
  if (h.version != kFrameVersion && h.version != kFrameVersion2) return kHeaderVersion;
  if (h.flags & ~(kFlagRaw | kFlagCrc)) return kHeaderFlags;
  // Without the CRC flag the checksum fields are reserved: a flipped flag bit must not switch
  // off the verification of a CRC frame.
  if (!(h.flags & kFlagCrc) && (h.payloadCrc | h.headerCrc)) return kHeaderReserved;
  TypeTraits t = typeTraits(h.type);
  if (t.elemBytes == 0) return kHeaderType;
  if (h.chunkElems != kChunkElems) return kHeaderChunk;
  // Version 1: offset 10 is reserved (4-bit codes). Version 2: it holds the code width, 3 or 4.
  // One frame, one encoding: the version is the lowest that can hold the frame (a raw frame,
  // or BF16, FP32 and E5M2 with 4-bit codes, are version 1; frameVersionFor).
  const bool raw = (h.flags & kFlagRaw) != 0;
  if (h.version == kFrameVersion && h.codeBits != 0) return kHeaderReserved;
  if (h.version == kFrameVersion2 && h.codeBits != 3 && h.codeBits != 4) return kHeaderCodeBits;
  const uint32_t codeBits = h.codeBits == 3 ? 3 : 4;
  if ((raw || t.expBits != 0) && h.version != frameVersionFor(h.type, codeBits, raw)) return kHeaderVersion;
  if (!computeLayout(h.type, h.count, l, codeBits)) return kHeaderCountOverflow;
  uint64_t payload;
  if (raw) {
    uint32_t codebookBits = 0;
    for (uint32_t i = 0; i < kCodebookSize; ++i) codebookBits |= h.codebook[i];
    if (h.escapeCount | h.smBytes | h.codeBytes | h.indexBytes | h.escapeBytes | h.codebookUsed |
        codebookBits)
      return kHeaderRawFields;
    payload = l->rawBytes;
  } else {
    if (t.expBits == 0) return kHeaderRawType;
    if (h.smBytes != l->smBytes || h.codeBytes != l->codeBytes || h.indexBytes != l->indexBytes)
      return kHeaderSections;
    uint64_t escBytes;
    if (!mulOk(h.escapeCount, kEscapeBytes, &escBytes) || escBytes != h.escapeBytes ||
        h.escapeCount > h.count)
      return kHeaderEscapeCount;
    // 2^codeBits entries, distinct and inside the exponent range; the rest of the field 0.
    const uint32_t entries = 1u << codeBits;
    if (h.codebookUsed < 1 || h.codebookUsed > entries) return kHeaderCodebook;
    for (uint32_t i = 0; i < kCodebookSize; ++i) {
      if (i >= entries) {
        if (h.codebook[i] != 0) return kHeaderCodebook;
        continue;
      }
      if (h.codebook[i] >= (1u << t.expBits)) return kHeaderCodebook;
      for (uint32_t j = 0; j < i; ++j)
        if (h.codebook[j] == h.codebook[i]) return kHeaderCodebook;
    }
    if (!compressedPayloadBytes(*l, h.escapeCount, &payload)) return kHeaderEscapeCount;
  }
  if (payload > available - kHeaderBytes) return kHeaderFrameTruncated;
  *frameBytes = kHeaderBytes + payload;
  return kHeaderOk;
}

}  // namespace sz
