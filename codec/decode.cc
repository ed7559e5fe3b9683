// szDecode / szFrameGetInfo: the host decoder. The escape index and every escape record are
// validated in one sequential pass before any chunk is decoded, so the parallel chunk decode
// cannot fail and never touches memory outside the frame or the output.
#include <cstring>

#include "checksum.h"
#include "chunk_codec.h"
#include "code_bits.h"
#include "frame.h"
#include "parallel.h"
#include "base/checks.h"

namespace sz {
namespace {

struct ParsedFrame {
  FrameHeader h;
  FrameLayout l;
  uint64_t frameBytes;
};

szResult_t parseFrame(const void* frame, size_t available, ParsedFrame* f) {
  if (frame == nullptr) return szSetError(szInvalidArgument, "frame is NULL");
  const uint8_t* p = static_cast<const uint8_t*>(frame);
  if (available < kHeaderBytes)
    return szSetError(szCorruptFrame, "%s (%zu bytes)", headerErrorString(kHeaderTruncated), available);
  readHeader(p, &f->h);
  HeaderError e = checkHeader(f->h, available, &f->l, &f->frameBytes);
  if (e != kHeaderOk) return szSetError(szCorruptFrame, "%s", headerErrorString(e));
  if (f->h.flags & kFlagCrc) {
    uint8_t hdr[kHeaderBytes];
    memcpy(hdr, p, kHeaderBytes);
    memset(hdr + 84, 0, 4);
    if (crc32c(hdr, kHeaderBytes) != f->h.headerCrc)
      return szSetError(szCorruptFrame, "frame header CRC32C mismatch");
    if (crc32c(p + kHeaderBytes, f->frameBytes - kHeaderBytes) != f->h.payloadCrc)
      return szSetError(szCorruptFrame, "frame payload CRC32C mismatch");
  }
  return szSuccess;
}

// Checks group offsets against chunk counts, and every escape's position and exponent.
szResult_t validateEscapes(const TypeTraits& t, const uint8_t* p, const FrameLayout& l,
                           uint64_t escapeCount) {
  uint64_t running = 0;
  const uint8_t* rec = p + l.escOff;
  for (uint64_t c = 0; c < l.numChunks; ++c) {
    if (c % kChunksPerGroup == 0 && loadLe64(p + l.indexOff + 8 * (c / kChunksPerGroup)) != running)
      return szSetError(szCorruptFrame, "escape group offset %llu inconsistent",
                        (unsigned long long)(c / kChunksPerGroup));
    uint64_t len = l.count - c * kChunkElems < kChunkElems ? l.count - c * kChunkElems : kChunkElems;
    uint32_t k = loadLe16(p + l.countsOff + 2 * c);
    if (k > len || running + k > escapeCount)
      return szSetError(szCorruptFrame, "chunk %llu escape count %u invalid", (unsigned long long)c, k);
    int64_t prev = -1;
    for (uint32_t j = 0; j < k; ++j, rec += kEscapeBytes) {
      uint32_t pos = loadLe16(rec);
      if (pos >= len || int64_t(pos) <= prev || rec[2] >= (1u << t.expBits))
        return szSetError(szCorruptFrame, "chunk %llu escape %u (position %u, exponent %u) invalid",
                          (unsigned long long)c, j, pos, rec[2]);
      prev = pos;
    }
    running += k;
  }
  if (running != escapeCount)
    return szSetError(szCorruptFrame, "chunk escape counts sum to %llu, header says %llu",
                      (unsigned long long)running, (unsigned long long)escapeCount);
  return szSuccess;
}

// Applies a chunk's k escape records at `rec` to its decoded elements at `dst`: each element's
// exponent field becomes the record's. Accesses of the element's own width W: a memcpy of
// t.elemBytes bytes was a call into libc and a store-forwarding stall per escape (perf: 89 % of
// E4M3's patch loop on one instruction).
template <class W>
void patchEscapes(const TypeTraits& t, const uint8_t* rec, uint32_t k, uint8_t* dst) {
  const W field = W(((uint64_t(1) << t.expBits) - 1) << t.mantBits);
  for (; k > 0; --k, rec += kEscapeBytes) {
    uint8_t* e = dst + size_t(loadLe16(rec)) * sizeof(W);
    W w;
    memcpy(&w, e, sizeof(W));  // little-endian host
    w = W((w & ~field) | (W(rec[2]) << t.mantBits));
    memcpy(e, &w, sizeof(W));
  }
}

void decodeChunks(const TypeTraits& t, const uint8_t* p, const FrameLayout& l,
                  const CodecTables& tab, ChunkCodec codec, uint8_t* out) {
  const auto patch = t.elemBytes == 1 ? patchEscapes<uint8_t> : t.elemBytes == 2 ? patchEscapes<uint16_t>
                                                                                 : patchEscapes<uint32_t>;
  parallelFor(l.numChunks, parallelRanges(l.numChunks, l.rawBytes), [&](int, uint64_t c0, uint64_t c1) {
    if (c0 == c1) return;  // a zero-element frame has no group offset to read
    uint64_t g = c0 / kChunksPerGroup;
    uint64_t escIdx = loadLe64(p + l.indexOff + 8 * g);
    for (uint64_t c = g * kChunksPerGroup; c < c0; ++c) escIdx += loadLe16(p + l.countsOff + 2 * c);
    for (uint64_t c = c0; c < c1; ++c) {
      uint64_t first = c * kChunkElems;
      uint32_t n = uint32_t(l.count - first < kChunkElems ? l.count - first : kChunkElems);
      uint8_t* dst = out + first * t.elemBytes;
      codec.decode(t, p + l.smOff + first * t.smBits / 8, p + l.codeOff + first * l.codeBits / 8, n, tab, dst);
      const uint32_t k = loadLe16(p + l.countsOff + 2 * c);
      patch(t, p + l.escOff + escIdx * kEscapeBytes, k, dst);
      escIdx += k;
    }
  });
}

}  // namespace
}  // namespace sz

using namespace sz;

extern "C" szResult_t szFrameGetInfo(const void* frame, size_t frameBytes, szFrameInfo_t* info) {
  ParsedFrame f;
  if (info == nullptr) return szSetError(szInvalidArgument, "szFrameGetInfo: info is NULL");
  SZCHECK(parseFrame(frame, frameBytes, &f));
  info->type = szDataType_t(f.h.type);
  info->count = f.h.count;
  info->frameBytes = f.frameBytes;
  info->escapeCount = f.h.escapeCount;
  info->raw = (f.h.flags & kFlagRaw) != 0;
  info->crc = (f.h.flags & kFlagCrc) != 0;
  codebookFromHeader(f.h.type, f.h.codebookUsed, f.h.codebook, f.l.codeBits, &info->codebook);
  return szSuccess;
}

extern "C" szResult_t szDecode(const void* frame, size_t frameBytes, void* out, size_t outCapacity,
                               size_t* count, szDataType_t* type) {
  ParsedFrame f;
  SZCHECK(parseFrame(frame, frameBytes, &f));
  if (f.l.rawBytes > outCapacity)
    return szSetError(szInvalidArgument, "szDecode: frame holds %llu bytes, output capacity is %zu",
                      (unsigned long long)f.l.rawBytes, outCapacity);
  if (out == nullptr && f.l.rawBytes > 0) return szSetError(szInvalidArgument, "szDecode: out is NULL");
  const uint8_t* p = static_cast<const uint8_t*>(frame);
  TypeTraits t = typeTraits(f.h.type);
  if (f.h.flags & kFlagRaw) {
    if (f.l.rawBytes) memcpy(out, p + kHeaderBytes, f.l.rawBytes);
  } else {
    SZCHECK(validateEscapes(t, p, f.l, f.h.escapeCount));
    szCodebook_t cb;
    codebookFromHeader(f.h.type, f.h.codebookUsed, f.h.codebook, f.l.codeBits, &cb);
    CodecTables tab;
    buildTables(cb, &tab);
    decodeChunks(t, p, f.l, tab, selectChunkCodec(f.h.type, f.l.codeBits), static_cast<uint8_t*>(out));
  }
  if (count) *count = f.h.count;
  if (type) *type = szDataType_t(f.h.type);
  return szSuccess;
}
