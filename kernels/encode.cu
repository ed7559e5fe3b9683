// The GPU encoder (paper §3, App. A) and szEncodeAsync/szEncodeTempSize. One pass over the
// input: each block takes a tile (= one escape group of 32 chunks) from an atomic counter,
// writes its sign-mantissa and code sections, counts escapes per chunk with warp scans, finds
// its escapes' place in the frame by decoupled look-back over the tiles before it, and writes
// them. A small finalize kernel writes the header, or re-writes the frame raw when escapes
// would make it at least as large as the input. No host synchronization.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "calibrate.h"
#include "codec/frame.h"
#include "cuda_check.h"
#include "device_props.h"
#include "sm_copy.h"
#include "encode_tiles.cuh"

namespace sz {
namespace {

// Temporary memory: [tile counter | total escapes | histogram | codebook | tile status...].
constexpr size_t kTempCounter = 0, kTempTotal = 8, kTempHist = 16;
constexpr size_t kTempCodebook = kTempHist + kCalibrateCountsBytes, kTempStatus = kTempCodebook + 32;
static_assert(sizeof(szCodebook_t) <= kTempStatus - kTempCodebook, "the calibrated codebook fits its place");
constexpr size_t kTempExponents = kTempCodebook + offsetof(szCodebook_t, exponents);

// Decoupled look-back status words: flag in the top two bits, escape count below.
constexpr unsigned long long kFlagAggregate = 1ull << 62, kFlagPrefix = 2ull << 62;
constexpr unsigned long long kValueMask = (1ull << 62) - 1;

struct EncodeParams {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  uint64_t numTiles;
  uint64_t budget;  // most escapes that keep the frame smaller than raw
  uint8_t* temp;
  uint8_t codebook[kCodebookSize];
  int used;
  bool calibrated;  // the codebook is in temp (online calibration), not in the params
  uint64_t* outBytes;
};

__device__ __forceinline__ unsigned long long loadVolatile(const unsigned long long* p) {
  return *reinterpret_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ void storeVolatile(unsigned long long* p, unsigned long long v) {
  *reinterpret_cast<volatile unsigned long long*>(p) = v;
}

// Warp 0: publishes this tile's escape count and returns the escapes of all earlier tiles,
// inspecting up to 32 predecessors at once.
__device__ uint64_t lookBack(unsigned long long* status, uint64_t tile, uint64_t aggregate,
                             uint32_t lane) {
  if (tile == 0) {
    if (lane == 0) storeVolatile(&status[0], kFlagPrefix | aggregate);
    return 0;
  }
  if (lane == 0) storeVolatile(&status[tile], kFlagAggregate | aggregate);
  uint64_t prefix = 0;
  for (int64_t end = int64_t(tile) - 1;; end -= 32) {
    int64_t idx = end - int64_t(lane);
    unsigned long long v = kFlagPrefix;  // before tile 0: a zero prefix
    if (idx >= 0) {
      do {
        v = loadVolatile(&status[idx]);
      } while ((v >> 62) == 0);
    }
    unsigned prefixLanes = __ballot_sync(0xFFFFFFFFu, (v >> 62) == 2);
    unsigned long long val = v & kValueMask;
    if (prefixLanes && int(lane) > __ffs(prefixLanes) - 1) val = 0;
    for (int off = 16; off > 0; off /= 2) val += __shfl_xor_sync(0xFFFFFFFFu, val, off);
    prefix += val;
    if (prefixLanes) break;
  }
  if (lane == 0) storeVolatile(&status[tile], kFlagPrefix | (prefix + aggregate));
  return prefix;
}

// Many blocks on one frame: tiles from an atomic counter, placed by decoupled look-back.
struct GridTiles {
  uint8_t* temp;
  __device__ uint64_t ticket() { return atomicAdd(reinterpret_cast<uint32_t*>(temp + kTempCounter), 1u); }
  __device__ uint64_t prefix(uint64_t tile, uint64_t escapes, uint32_t lane) {
    return lookBack(reinterpret_cast<unsigned long long*>(temp + kTempStatus), tile, escapes, lane);
  }
  __device__ void last(uint64_t total) { *reinterpret_cast<unsigned long long*>(temp + kTempTotal) = total; }
};

template <int kType, bool kAligned>
__global__ void __launch_bounds__(kEncodeThreads, blocksPerSm<kType>()) encodeKernel(EncodeParams p) {
  TileParams tp{p.in, p.out, p.l, p.budget, p.calibrated ? p.temp + kTempExponents : p.codebook};
  GridTiles sched{p.temp};
  encodeTiles<kType, kAligned>(tp, p.numTiles, sched);
}

struct FinalizeParams {
  FrameFinish f;
  const uint8_t* temp;
  uint8_t codebook[kCodebookSize];
  bool calibrated;
  uint64_t* outBytes;
};

// Writes the header; for a raw frame, also copies the input behind it (whole grid).
template <bool kAligned>
__global__ void finalizeKernel(FinalizeParams p) {
  uint64_t escapes = p.f.forceRaw ? 0 : *reinterpret_cast<const unsigned long long*>(p.temp + kTempTotal);
  FrameFinish f = p.f;
  f.codebook = p.calibrated ? p.temp + kTempExponents : p.codebook;
  if (p.calibrated) f.used = reinterpret_cast<const szCodebook_t*>(p.temp + kTempCodebook)->used;
  const uint64_t gtid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  uint64_t bytes = finishFrame<kAligned>(f, escapes, gtid, uint64_t(gridDim.x) * blockDim.x);
  if (gtid == 0) *p.outBytes = bytes;
}

template <int kType>
szResult_t launchEncode(const EncodeParams& p, bool aligned, int sms, cudaStream_t stream) {
  const uint64_t resident = uint64_t(sms) * blocksPerSm<kType>();
  uint64_t blocks = p.numTiles < resident ? p.numTiles : resident;
  if (aligned) encodeKernel<kType, true><<<unsigned(blocks), kEncodeThreads, 0, stream>>>(p);
  else encodeKernel<kType, false><<<unsigned(blocks), kEncodeThreads, 0, stream>>>(p);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

}  // namespace sz

using namespace sz;

extern "C" szResult_t szEncodeTempSize(size_t count, szDataType_t type, size_t* tempBytes) {
  FrameLayout l;
  if (tempBytes == nullptr) return szSetError(szInvalidArgument, "szEncodeTempSize: tempBytes is NULL");
  if (!computeLayout(type, count, &l))
    return szSetError(szInvalidArgument, "szEncodeTempSize: bad type %d or count %zu", (int)type, count);
  *tempBytes = kTempStatus + 8 * (l.numGroups > 0 ? l.numGroups : 1);
  return szSuccess;
}

extern "C" szResult_t szEncodeAsync(const void* d_in, size_t count, szDataType_t type,
                                    const szCodebook_t* codebook, int flags, void* d_out,
                                    size_t outCapacity, uint64_t* outBytes, void* d_temp,
                                    size_t tempBytes, cudaStream_t stream) {
  size_t maxBytes, needTemp;
  SZCHECK(szEncodeMaxSize(count, type, &maxBytes));
  SZCHECK(szEncodeTempSize(count, type, &needTemp));
  if ((d_in == nullptr && count > 0) || d_out == nullptr || outBytes == nullptr)
    return szSetError(szInvalidArgument, "szEncodeAsync: NULL in, out or outBytes");
  if (flags & SZ_ENCODE_CRC)
    return szSetError(szInvalidUsage, "szEncodeAsync: CRC frames are encoded on the host only");
  if (flags & ~SZ_ENCODE_CALIBRATE) return szSetError(szInvalidArgument, "szEncodeAsync: unknown flags 0x%x", flags);
  if (outCapacity < maxBytes)
    return szSetError(szInvalidArgument, "szEncodeAsync: output capacity %zu < szEncodeMaxSize %zu", outCapacity, maxBytes);
  TypeTraits t = typeTraits(type);
  FrameLayout l;
  computeLayout(type, count, &l);
  uint64_t fixed = l.escOff - kHeaderBytes;
  bool forceRaw = t.expBits == 0 || fixed >= l.rawBytes;
  bool calibrate = !forceRaw && codebook == nullptr && (flags & SZ_ENCODE_CALIBRATE);
  szCodebook_t cb{};
  if (t.expBits != 0 && !calibrate) {  // a caller's codebook is checked even if the frame goes raw
    if (codebook) cb = *codebook;
    else SZCHECK(szCodebookDefault(type, &cb));
    SZCHECK(szCodebookValidate(&cb));
    if (cb.type != type)
      return szSetError(szInvalidArgument, "codebook is for %s, data is %s", sz::szTypeName(cb.type), sz::szTypeName(type));
  }
  if (!forceRaw && (d_temp == nullptr || tempBytes < needTemp))
    return szSetError(szInvalidArgument, "szEncodeAsync: temp memory %zu bytes < szEncodeTempSize %zu", tempBytes, needTemp);
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  const bool aligned = aligned16(d_in) && aligned16(d_out);
  uint8_t* temp = static_cast<uint8_t*>(d_temp);
  uint64_t budget = forceRaw ? 0 : (l.rawBytes - fixed - 1) / kEscapeBytes;
  if (!forceRaw) {
    SZCHECK(smCopyAsync(temp, nullptr, needTemp, stream));
    if (calibrate)
      SZCHECK(calibrateAsync(d_in, count, type, reinterpret_cast<unsigned long long*>(temp + kTempHist),
                             reinterpret_cast<szCodebook_t*>(temp + kTempCodebook), stream));
    EncodeParams p{};
    p.in = static_cast<const uint8_t*>(d_in);
    p.out = static_cast<uint8_t*>(d_out);
    p.l = l;
    p.numTiles = l.numGroups;
    p.budget = budget;
    p.temp = temp;
    memcpy(p.codebook, cb.exponents, kCodebookSize);
    p.used = cb.used;
    p.calibrated = calibrate;
    p.outBytes = outBytes;
    switch (type) {
      case szBfloat16: SZCHECK(launchEncode<szBfloat16>(p, aligned, sms, stream)); break;
      case szFloat32: SZCHECK(launchEncode<szFloat32>(p, aligned, sms, stream)); break;
      default: SZCHECK(launchEncode<szFloat8e5m2>(p, aligned, sms, stream)); break;
    }
  }
  FinalizeParams f{};
  f.f.in = static_cast<const uint8_t*>(d_in);
  f.f.out = static_cast<uint8_t*>(d_out);
  f.f.l = l;
  f.f.type = type;
  f.f.budget = budget;
  f.f.forceRaw = forceRaw;
  f.f.used = cb.used;
  f.temp = temp;
  memcpy(f.codebook, cb.exponents, kCodebookSize);
  f.calibrated = calibrate;
  f.outBytes = outBytes;
  uint64_t blocks = l.rawBytes / (256 * 16) + 1;
  if (blocks > uint64_t(sms) * 8) blocks = uint64_t(sms) * 8;
  if (aligned) finalizeKernel<true><<<unsigned(blocks), 256, 0, stream>>>(f);
  else finalizeKernel<false><<<unsigned(blocks), 256, 0, stream>>>(f);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}
