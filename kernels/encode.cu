// szEncodeAsync and szEncodeTempSize: the checks, the codebook and the launch of the GPU
// encoder's kernels (kernels/encode_grid.cuh); FP16 and E4M3 launch from kernels/encode_narrow.cu.
#include <cuda_runtime.h>

#include <cstring>

#include "codec/code_bits.h"
#include "encode_grid.cuh"

namespace sz {
namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

}  // namespace sz

using namespace sz;

extern "C" szResult_t szEncodeTempSize(size_t count, szDataType_t type, size_t* tempBytes) {
  FrameLayout l;
  if (tempBytes == nullptr) return szSetError(szInvalidArgument, "szEncodeTempSize: tempBytes is NULL");
  if (!computeLayout(type, count, &l))
    return szSetError(szInvalidArgument, "szEncodeTempSize: bad type %d or count %zu", (int)type, count);
  if (!gpuCodecType(type)) l = FrameLayout{};  // stored raw here: no ranges, no records
  *tempBytes = tempLayout(type, l).bytes;
  return szSuccess;
}

extern "C" szResult_t szEncodeAsync(const void* d_in, size_t count, szDataType_t type,
                                    const szCodebook_t* codebook, int flags, void* d_out,
                                    size_t outCapacity, uint64_t* outBytes, void* d_temp,
                                    size_t tempBytes, cudaStream_t stream) {
  size_t maxBytes = 0, needTemp = 0;
  SZCHECK(szEncodeMaxSize(count, type, &maxBytes));
  SZCHECK(szEncodeTempSize(count, type, &needTemp));
  if ((d_in == nullptr && count > 0) || d_out == nullptr || outBytes == nullptr)
    return szSetError(szInvalidArgument, "szEncodeAsync: NULL in, out or outBytes");
  if (flags & SZ_ENCODE_CRC)
    return szSetError(szInvalidUsage, "szEncodeAsync: CRC frames are encoded on the host only");
  if (flags & ~SZ_ENCODE_CALIBRATE) return szSetError(szInvalidArgument, "szEncodeAsync: unknown flags 0x%x", flags);
  if (outCapacity < maxBytes)
    return szSetError(szInvalidArgument, "szEncodeAsync: output capacity %zu < szEncodeMaxSize %zu", outCapacity, maxBytes);
  // The kernels know format version 1's types with 4-bit codes, and FP16 and E4M3 (version 2)
  // with 3- or 4-bit codes (codec/dtype.h gpuCodecType). The GPU calibrates version 1's types
  // only: FP16 and E4M3 with SZ_ENCODE_CALIBRATE and no codebook are stored raw, as before
  // these kernels compressed them (szEncode calibrates them on the host).
  const bool deviceType = deviceCodecType(type), narrowType = gpuCodecType(type) && !deviceType;
  const bool wantCalibrate = codebook == nullptr && (flags & SZ_ENCODE_CALIBRATE);
  const bool calibrateType = deviceType && wantCalibrate;
  szCodebook_t cb{};
  if (szTypeIsCompressible(type) && !calibrateType) {  // a caller's codebook is checked even if the frame goes raw
    if (codebook) cb = *codebook;
    else SZCHECK(szCodebookDefault(type, &cb));
    SZCHECK(szCodebookValidate(&cb));
    if (cb.type != type)
      return szSetError(szInvalidArgument, "codebook is for %s, data is %s", sz::szTypeName(cb.type), sz::szTypeName(type));
    if (deviceType && codebookBits(cb) != 4)
      return szSetError(szInvalidUsage, "szEncodeAsync: 3-bit codes (format version 2) are encoded by the CPU codec "
                                        "only for BF16, FP32 and E5M2; the GPU codec takes 4-bit codebooks of them");
  }
  // The codebook's width sets the code section's size, and so the raw decision (as in szEncode).
  const uint32_t codeBits = narrowType ? codebookBits(cb) : 4;
  FrameLayout l;
  computeLayout(type, count, &l, codeBits);
  const uint64_t fixed = l.escOff - kHeaderBytes;
  const bool forceRaw = !gpuCodecType(type) || fixed >= l.rawBytes || (narrowType && wantCalibrate);
  const bool calibrate = !forceRaw && calibrateType;
  if (!forceRaw && (d_temp == nullptr || tempBytes < needTemp))
    return szSetError(szInvalidArgument, "szEncodeAsync: temp memory %zu bytes < szEncodeTempSize %zu", tempBytes, needTemp);
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  const bool aligned = aligned16(d_in) && aligned16(d_out);
  uint8_t* temp = static_cast<uint8_t*>(d_temp);
  const TempLayout tl = forceRaw ? TempLayout{} : tempLayout(type, l);
  if (calibrate)
    SZCHECK(calibrateAsync(d_in, count, type, reinterpret_cast<unsigned long long*>(temp + kTempHist),
                           reinterpret_cast<szCodebook_t*>(temp + kTempCodebook), stream));
  ChunkParams c{};
  c.in = static_cast<const uint8_t*>(d_in);
  c.out = static_cast<uint8_t*>(d_out);
  c.l = l;
  c.chunks = split(l.numChunks, tl.ranges);
  c.ranges = tl.ranges;
  c.totals = forceRaw ? nullptr : reinterpret_cast<uint32_t*>(temp + kTempTotals);
  c.recs = forceRaw ? nullptr : temp + tl.recsOff;
  c.tempExps = calibrate ? temp + kTempExponents : nullptr;
  memcpy(c.codebook, cb.exponents, kCodebookSize);
  PlaceParams p{};
  p.in = c.in;
  p.out = c.out;
  p.l = l;
  p.type = type;
  p.chunks = c.chunks;
  p.ranges = tl.ranges;
  p.totals = c.totals;
  p.recs = c.recs;
  p.budget = forceRaw ? 0 : (l.rawBytes - fixed - 1) / kEscapeBytes;
  p.forceRaw = forceRaw;
  p.temp = calibrate ? temp : nullptr;
  memcpy(p.codebook, cb.exponents, kCodebookSize);
  p.used = cb.used;
  p.outBytes = outBytes;
  // A few blocks per SM, each scanning at most kPlaceRanges ranges; a forced raw frame takes as
  // many as its copy fills (one 16-byte vector a thread).
  const uint64_t resident = uint64_t(sms) * kPlaceBlocksPerSm;
  const uint64_t want = forceRaw ? l.rawBytes / (kPlaceThreads * 16) + 1 : tl.ranges;
  uint64_t blocks = want < resident ? want : resident;
  const uint64_t scanBound = (tl.ranges + kPlaceRanges - 1) / kPlaceRanges;
  if (blocks < scanBound) blocks = scanBound;
  const ChunkParams* chunkPass = forceRaw ? nullptr : &c;
  if (soloFrame(chunkPass)) blocks = 1;
  p.blocks = split(tl.ranges, blocks);
  if (forceRaw) return launchType<szBfloat16, 4>(nullptr, p, blocks, aligned, stream);  // no type's path runs
  switch (type) {
    case szBfloat16: return launchType<szBfloat16, 4>(chunkPass, p, blocks, aligned, stream);
    case szFloat32: return launchType<szFloat32, 4>(chunkPass, p, blocks, aligned, stream);
    case szFloat8e5m2: return launchType<szFloat8e5m2, 4>(chunkPass, p, blocks, aligned, stream);
    default: return launchNarrowEncode(type, codeBits, chunkPass, p, blocks, aligned, stream);
  }
}
