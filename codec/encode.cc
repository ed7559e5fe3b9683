// szEncode: the host encoder (paper §3). Chunks are encoded in parallel ranges, each range
// collecting its escapes; then the escape index is summed up, the escapes are placed, and the
// frame falls back to raw when escapes would make it at least as large as the input.
#include <cstring>
#include <vector>

#include "checksum.h"
#include "chunk_codec.h"
#include "code_bits.h"
#include "frame.h"
#include "parallel.h"
#include "base/checks.h"

namespace sz {
namespace {

szResult_t chooseCodebook(const void* in, size_t count, szDataType_t type,
                          const szCodebook_t* given, int flags, szCodebook_t* cb) {
  if (given != nullptr) {
    *cb = *given;
    SZCHECK(szCodebookValidate(cb));
    if (cb->type != type)
      return szSetError(szInvalidArgument, "codebook is for %s, data is %s", szTypeName(cb->type),
                        szTypeName(type));
    return szSuccess;
  }
  if (flags & SZ_ENCODE_CALIBRATE) {
    szHistogram_t hist;
    SZCHECK(szHistogramInit(&hist, type));
    SZCHECK(szHistogramAccumulate(&hist, in, count));
    return szCodebookFromHistogram(&hist, cb);
  }
  return szCodebookDefault(type, cb);
}

uint64_t finishFrame(FrameHeader* h, uint8_t* out, uint64_t payloadBytes) {
  if (h->flags & kFlagCrc) h->payloadCrc = crc32c(out + kHeaderBytes, payloadBytes);
  writeHeader(*h, out);
  if (h->flags & kFlagCrc) {
    h->headerCrc = crc32c(out, kHeaderBytes);
    writeHeader(*h, out);
  }
  return kHeaderBytes + payloadBytes;
}

uint64_t writeRaw(FrameHeader h, const void* in, const FrameLayout& l, uint8_t* out) {
  h.flags |= kFlagRaw;
  if (l.rawBytes) memcpy(out + kHeaderBytes, in, l.rawBytes);
  return finishFrame(&h, out, l.rawBytes);
}

// Encodes all chunks; returns false when the escapes exceed `budget` (the frame goes raw).
bool encodeChunks(const TypeTraits& t, const uint8_t* in, const FrameLayout& l,
                  const CodecTables& tab, ChunkCodec codec, uint64_t budget, uint8_t* out,
                  uint64_t* escapeCount) {
  int ranges = parallelRanges(l.numChunks, l.rawBytes);
  std::vector<std::vector<uint8_t>> esc(ranges);
  std::vector<char> overflow(ranges, 0);
  parallelFor(l.numChunks, ranges, [&](int r, uint64_t c0, uint64_t c1) {
    std::vector<uint8_t>& e = esc[r];
    // A chunk's escapes land in scratch first: growing `e` by a whole chunk's worth of records
    // would zero-fill 1.5 bytes per input byte, most of them never used.
    uint8_t scratch[kChunkElems * kEscapeBytes];
    for (uint64_t c = c0; c < c1; ++c) {
      uint64_t first = c * kChunkElems;
      uint32_t n = uint32_t(l.count - first < kChunkElems ? l.count - first : kChunkElems);
      uint32_t k = codec.encode(t, in + first * t.elemBytes, n, tab, out + l.smOff + first * t.smBits / 8,
                                out + l.codeOff + first * l.codeBits / 8, scratch);
      e.insert(e.end(), scratch, scratch + size_t(k) * kEscapeBytes);
      storeLe16(out + l.countsOff + 2 * c, uint16_t(k));
      if (e.size() / kEscapeBytes > budget) {
        overflow[r] = 1;
        return;
      }
    }
  });
  uint64_t total = 0;
  for (int r = 0; r < ranges; ++r) {
    if (overflow[r]) return false;
    total += esc[r].size() / kEscapeBytes;
  }
  if (total > budget) return false;
  uint64_t running = 0;
  for (uint64_t c = 0; c < l.numChunks; ++c) {
    if (c % kChunksPerGroup == 0) storeLe64(out + l.indexOff + 8 * (c / kChunksPerGroup), running);
    running += loadLe16(out + l.countsOff + 2 * c);
  }
  uint8_t* dst = out + l.escOff;
  for (int r = 0; r < ranges; ++r) {
    if (!esc[r].empty()) memcpy(dst, esc[r].data(), esc[r].size());
    dst += esc[r].size();
  }
  *escapeCount = total;
  return true;
}

}  // namespace
}  // namespace sz

using namespace sz;

extern "C" szResult_t szEncodeMaxSize(size_t count, szDataType_t type, size_t* maxBytes) {
  FrameLayout l;
  if (maxBytes == nullptr) return szSetError(szInvalidArgument, "szEncodeMaxSize: maxBytes is NULL");
  if (typeTraits(type).elemBytes == 0)
    return szSetError(szInvalidArgument, "invalid data type %d (szDataType_t has 0..%d)", (int)type, szNumTypes - 1);
  if (!computeLayout(type, count, &l) || l.rawBytes > SIZE_MAX - kHeaderBytes)
    return szSetError(szInvalidArgument, "%zu elements of %s overflow the size arithmetic", count,
                      szTypeName(type));
  *maxBytes = kHeaderBytes + l.rawBytes;
  return szSuccess;
}

extern "C" szResult_t szEncode(const void* in, size_t count, szDataType_t type,
                               const szCodebook_t* codebook, int flags, void* out,
                               size_t outCapacity, size_t* outBytes) {
  size_t maxBytes;
  SZCHECK(szEncodeMaxSize(count, type, &maxBytes));
  if ((in == nullptr && count > 0) || out == nullptr || outBytes == nullptr)
    return szSetError(szInvalidArgument, "szEncode: NULL %s", out == nullptr ? "out" : in == nullptr ? "in" : "outBytes");
  if (flags & ~(SZ_ENCODE_CRC | SZ_ENCODE_CALIBRATE))
    return szSetError(szInvalidArgument, "szEncode: unknown flags 0x%x", flags);
  if (outCapacity < maxBytes)
    return szSetError(szInvalidArgument, "szEncode: output capacity %zu < szEncodeMaxSize %zu",
                      outCapacity, maxBytes);
  TypeTraits t = typeTraits(type);
  // Chosen (and a caller's codebook validated) before the raw shortcut, so an invalid codebook
  // is rejected whatever the input size; its width sets the code section's size.
  szCodebook_t cb;
  if (t.expBits != 0) SZCHECK(chooseCodebook(in, count, type, codebook, flags, &cb));
  const uint32_t codeBits = t.expBits != 0 ? codebookBits(cb) : 4;
  FrameLayout l;
  computeLayout(type, count, &l, codeBits);
  FrameHeader h{};
  h.version = kFrameVersion;
  h.chunkElems = kChunkElems;
  h.type = uint8_t(type);
  h.count = count;
  h.flags = (flags & SZ_ENCODE_CRC) ? kFlagCrc : 0;
  uint8_t* o = static_cast<uint8_t*>(out);
  uint64_t fixed = l.escOff - kHeaderBytes;
  if (t.expBits == 0 || fixed >= l.rawBytes) {
    *outBytes = writeRaw(h, in, l, o);
    return szSuccess;
  }
  CodecTables tab;
  buildTables(cb, &tab);
  uint64_t budget = (l.rawBytes - fixed - 1) / kEscapeBytes;  // escapes that keep it smaller
  memset(o + l.smOff + l.smBytes, 0, l.codeOff - l.smOff - l.smBytes);  // section padding
  memset(o + l.codeOff + l.codeBytes, 0, l.indexOff - l.codeOff - l.codeBytes);
  memset(o + l.indexOff + l.indexBytes, 0, l.escOff - l.indexOff - l.indexBytes);
  uint64_t escapes = 0;
  if (!encodeChunks(t, static_cast<const uint8_t*>(in), l, tab, selectChunkCodec(type, codeBits), budget, o,
                    &escapes)) {
    INFO(SZ_CODEC, "szEncode: %zu elements escape too often, storing raw", count);
    *outBytes = writeRaw(h, in, l, o);
    return szSuccess;
  }
  h.version = frameVersionFor(type, codeBits, false);
  h.codeBits = h.version == kFrameVersion ? 0 : uint8_t(codeBits);
  h.codebookUsed = uint8_t(cb.used);
  headerEntries(cb, h.codebook);
  h.escapeCount = escapes;
  h.smBytes = l.smBytes;
  h.codeBytes = l.codeBytes;
  h.indexBytes = l.indexBytes;
  h.escapeBytes = escapes * kEscapeBytes;
  uint64_t payload = 0;
  compressedPayloadBytes(l, escapes, &payload);
  *outBytes = finishFrame(&h, o, payload);
  return szSuccess;
}
