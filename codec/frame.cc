// Frame header serialization and validation (docs/FORMAT.md §Header, §Validation).
#include "frame.h"

#include <cstring>

#include "../src/checks.h"

namespace sz {
namespace {

const uint8_t kMagic[4] = {'S', 'Z', 'I', 'P'};

bool align16(uint64_t v, uint64_t* out) {
  if (v > UINT64_MAX - 15) return false;
  *out = (v + 15) & ~uint64_t(15);
  return true;
}

bool addOk(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool mulOk(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

bool computeLayout(int type, uint64_t count, FrameLayout* l) {
  TypeTraits t = typeTraits(type);
  if (t.elemBytes == 0) return false;
  *l = FrameLayout();
  l->count = count;
  if (!mulOk(count, t.elemBytes, &l->rawBytes)) return false;
  if (t.expBits == 0) return true;
  uint64_t smBits;
  if (!mulOk(count, t.smBits, &smBits)) return false;
  l->smBytes = smBits / 8 + (smBits % 8 != 0);
  l->codeBytes = count / 2 + (count & 1);
  l->numChunks = count / kChunkElems + (count % kChunkElems != 0);
  l->numGroups = l->numChunks / kChunksPerGroup + (l->numChunks % kChunksPerGroup != 0);
  l->indexBytes = 8 * l->numGroups + 2 * l->numChunks;  // numChunks <= count / 1024: no overflow
  uint64_t a;
  l->smOff = kHeaderBytes;
  if (!align16(l->smBytes, &a) || !addOk(l->smOff, a, &l->codeOff)) return false;
  if (!align16(l->codeBytes, &a) || !addOk(l->codeOff, a, &l->indexOff)) return false;
  l->countsOff = l->indexOff + 8 * l->numGroups;
  if (!align16(l->indexBytes, &a) || !addOk(l->indexOff, a, &l->escOff)) return false;
  return true;
}

bool compressedPayloadBytes(const FrameLayout& l, uint64_t escapes, uint64_t* bytes) {
  uint64_t escBytes;
  if (!mulOk(escapes, kEscapeBytes, &escBytes)) return false;
  return addOk(l.escOff - kHeaderBytes, escBytes, bytes);
}

void writeHeader(const FrameHeader& h, uint8_t* out) {
  uint8_t b[kHeaderBytes] = {};
  memcpy(b, kMagic, 4);
  b[4] = uint8_t(h.version);
  b[5] = uint8_t(h.version >> 8);
  b[6] = uint8_t(h.flags);
  b[7] = uint8_t(h.flags >> 8);
  b[8] = h.type;
  b[9] = h.codebookUsed;
  for (int i = 0; i < 4; ++i) b[12 + i] = uint8_t(h.chunkElems >> (8 * i));
  storeLe64(b + 16, h.count);
  storeLe64(b + 24, h.escapeCount);
  storeLe64(b + 32, h.smBytes);
  storeLe64(b + 40, h.codeBytes);
  storeLe64(b + 48, h.indexBytes);
  storeLe64(b + 56, h.escapeBytes);
  memcpy(b + 64, h.codebook, kCodebookSize);
  for (int i = 0; i < 4; ++i) b[80 + i] = uint8_t(h.payloadCrc >> (8 * i));
  for (int i = 0; i < 4; ++i) b[84 + i] = uint8_t(h.headerCrc >> (8 * i));
  memcpy(out, b, kHeaderBytes);
}

szResult_t readHeader(const uint8_t* in, uint64_t available, FrameHeader* h) {
  if (available < kHeaderBytes)
    return szSetError(szCorruptFrame, "frame truncated: %llu bytes, header needs %llu",
                      (unsigned long long)available, (unsigned long long)kHeaderBytes);
  if (memcmp(in, kMagic, 4) != 0) return szSetError(szCorruptFrame, "bad frame magic");
  if (in[10] | in[11] | loadLe64(in + 88))
    return szSetError(szCorruptFrame, "frame reserved fields are not zero");
  auto le32 = [&](int off) {
    return uint32_t(in[off]) | uint32_t(in[off + 1]) << 8 | uint32_t(in[off + 2]) << 16 |
           uint32_t(in[off + 3]) << 24;
  };
  h->version = loadLe16(in + 4);
  h->flags = loadLe16(in + 6);
  h->type = in[8];
  h->codebookUsed = in[9];
  h->chunkElems = le32(12);
  h->count = loadLe64(in + 16);
  h->escapeCount = loadLe64(in + 24);
  h->smBytes = loadLe64(in + 32);
  h->codeBytes = loadLe64(in + 40);
  h->indexBytes = loadLe64(in + 48);
  h->escapeBytes = loadLe64(in + 56);
  memcpy(h->codebook, in + 64, kCodebookSize);
  h->payloadCrc = le32(80);
  h->headerCrc = le32(84);
  return szSuccess;
}

szResult_t validateHeader(const FrameHeader& h, uint64_t available, FrameLayout* l,
                          uint64_t* frameBytes) {
  if (h.version != kFrameVersion)
    return szSetError(szCorruptFrame, "frame version %u, this library reads version %u",
                      h.version, kFrameVersion);
  if (h.flags & ~(kFlagRaw | kFlagCrc))
    return szSetError(szCorruptFrame, "frame has unknown flags 0x%x", h.flags);
  TypeTraits t = typeTraits(h.type);
  if (t.elemBytes == 0) return szSetError(szCorruptFrame, "frame has invalid type %u", h.type);
  if (h.chunkElems != kChunkElems)
    return szSetError(szCorruptFrame, "frame chunk size %u, expected %u", h.chunkElems, kChunkElems);
  if (!computeLayout(h.type, h.count, l))
    return szSetError(szCorruptFrame, "frame element count %llu overflows", (unsigned long long)h.count);
  uint64_t payload;
  if (h.flags & kFlagRaw) {
    bool zeroCodebook = true;
    for (uint32_t i = 0; i < kCodebookSize; ++i) zeroCodebook &= h.codebook[i] == 0;
    if (h.escapeCount || h.smBytes || h.codeBytes || h.indexBytes || h.escapeBytes ||
        h.codebookUsed || !zeroCodebook)
      return szSetError(szCorruptFrame, "raw frame with non-zero section fields");
    payload = l->rawBytes;
  } else {
    if (t.expBits == 0)
      return szSetError(szCorruptFrame, "compressed frame of incompressible type %u", h.type);
    if (h.smBytes != l->smBytes || h.codeBytes != l->codeBytes || h.indexBytes != l->indexBytes)
      return szSetError(szCorruptFrame, "frame section sizes disagree with its element count");
    uint64_t escBytes;
    if (__builtin_mul_overflow(h.escapeCount, uint64_t(kEscapeBytes), &escBytes) ||
        escBytes != h.escapeBytes || h.escapeCount > h.count)
      return szSetError(szCorruptFrame, "frame escape count %llu inconsistent",
                        (unsigned long long)h.escapeCount);
    if (h.codebookUsed < 1 || h.codebookUsed > kCodebookSize)
      return szSetError(szCorruptFrame, "frame codebook_used %u not in 1..16", h.codebookUsed);
    for (uint32_t i = 0; i < kCodebookSize; ++i) {
      if (h.codebook[i] >= (1u << t.expBits))
        return szSetError(szCorruptFrame, "frame codebook entry %u out of range", i);
      for (uint32_t j = 0; j < i; ++j)
        if (h.codebook[j] == h.codebook[i])
          return szSetError(szCorruptFrame, "frame codebook has duplicates");
    }
    if (!compressedPayloadBytes(*l, h.escapeCount, &payload))
      return szSetError(szCorruptFrame, "frame size overflows");
  }
  if (payload > UINT64_MAX - kHeaderBytes || kHeaderBytes + payload > available)
    return szSetError(szCorruptFrame, "frame truncated: needs %llu + %llu bytes, %llu available",
                      (unsigned long long)kHeaderBytes, (unsigned long long)payload,
                      (unsigned long long)available);
  *frameBytes = kHeaderBytes + payload;
  return szSuccess;
}

}  // namespace sz
