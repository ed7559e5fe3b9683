// The GPU encoder (paper §3, App. A) and szEncodeAsync/szEncodeTempSize. One pass over the
// input: each block takes a tile (= one escape group of 32 chunks) from an atomic counter,
// writes its sign-mantissa and code sections, counts escapes per chunk with warp scans, finds
// its escapes' place in the frame by decoupled look-back over the tiles before it, and writes
// them. A small finalize kernel writes the header, or re-writes the frame raw when escapes
// would make it at least as large as the input. No host synchronization.
#include <cuda_runtime.h>

#include <cstring>

#include "../codec/calibrate.h"
#include "../codec/frame.h"
#include "cuda_check.h"
#include "device_props.h"
#include "kernel_loading.h"
#include "sm_copy.h"
#include "thread_elems.cuh"

namespace sz {
namespace {

constexpr uint32_t kThreads = 512;
constexpr uint32_t kWarps = kThreads / 32;
// Resident blocks of 512 threads per multiprocessor. For BF16, 4 (32 registers each) measured
// fastest: the more blocks, the better one block's barriers and look-back overlap the others'
// streaming (perf/results/codec_notes.md). FP32 and E5M2 need more registers: 2.
template <int kType>
__host__ __device__ constexpr uint32_t blocksPerSm() { return kType == szBfloat16 ? 4 : 2; }
// Registers of input a thread loads ahead of use: what the register budget above leaves.
template <int kType>
__host__ __device__ constexpr uint32_t aheadWords() { return kType == szBfloat16 ? 8 : 16; }
constexpr uint32_t kStepElems = kThreads * kThreadElems;     // 8192 = 8 chunks
constexpr uint32_t kSteps = kGroupElems / kStepElems;        // 4 steps per tile
static_assert(kSteps * kStepElems == kGroupElems, "a tile is one escape group");
static_assert(kSteps * 8 == kChunksPerGroup, "warp 0's lanes cover the tile's chunks");

// Temporary memory: [tile counter | total escapes | histogram | codebook | tile status...].
constexpr size_t kTempCounter = 0, kTempTotal = 8, kTempHist = 16;
constexpr size_t kTempCodebook = kTempHist + 256 * 8, kTempStatus = kTempCodebook + 32;

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

__device__ __forceinline__ const uint8_t* codebookOf(const EncodeParams& p) {
  return p.calibrated ? p.temp + kTempCodebook : p.codebook;
}

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

// Loads steps [s0, s0 + kAhead) of a tile: the thread's 16 elements of each.
template <int kType, bool kAligned, uint32_t kAhead>
__device__ __forceinline__ void loadSteps(const EncodeParams& p, uint64_t tile, uint32_t s0,
                                          ThreadElems<kType> (&e)[kAhead], uint32_t (&n)[kAhead]) {
  constexpr uint32_t eb = ThreadElems<kType>::T.elemBytes;
#pragma unroll
  for (uint32_t a = 0; a < kAhead; ++a) {
    uint64_t first = tile * kGroupElems + (s0 + a) * kStepElems + threadIdx.x * kThreadElems;
    n[a] = first >= p.l.count ? 0 : uint32_t(p.l.count - first < kThreadElems ? p.l.count - first : kThreadElems);
    if (n[a] == kThreadElems) e[a].template load<kAligned>(p.in + first * eb, n[a]);
    else if (n[a] > 0) e[a].template load<false>(p.in + first * eb, n[a]);
  }
}

template <int kType, bool kAligned>
__global__ void __launch_bounds__(kThreads, blocksPerSm<kType>()) encodeKernel(EncodeParams p) {
  using E = ThreadElems<kType>;
  constexpr TypeTraits T = E::T;
  // Steps loaded ahead of use, as many as fit aheadWords() registers (at least one). The next
  // tile's first loads are issued before this tile's scan and look-back, so memory stays
  // busy while the block waits on other blocks.
  constexpr uint32_t kAheadSteps = aheadWords<kType>() / E::kInWords;
  constexpr uint32_t kAhead = kAheadSteps >= kSteps ? kSteps : kAheadSteps < 1 ? 1 : kAheadSteps;
  __shared__ uint8_t sCode[256];
  __shared__ unsigned long long sWarp[kWarps], sWarpExcl[kWarps];
  __shared__ uint64_t sPrefix, sStepBase[kSteps];
  __shared__ uint64_t sTile;
  const uint32_t tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const FrameLayout& l = p.l;
  uint32_t* counter = reinterpret_cast<uint32_t*>(p.temp + kTempCounter);
  unsigned long long* status = reinterpret_cast<unsigned long long*>(p.temp + kTempStatus);
  for (uint32_t i = tid; i < 256; i += kThreads) sCode[i] = kDeviceEscape;
  if (tid == 0) sTile = atomicAdd(counter, 1u);
  __syncthreads();
  if (tid < kCodebookSize) sCode[codebookOf(p)[tid]] = uint8_t(tid);
  uint64_t tile = sTile;
  E e[kAhead];
  uint32_t n[kAhead];
  if (tile < p.numTiles) loadSteps<kType, kAligned, kAhead>(p, tile, 0, e, n);
  __syncthreads();

  while (tile < p.numTiles) {
    uint32_t nextTicket = 0;
    if (tid == 0) nextTicket = atomicAdd(counter, 1u);  // its latency hides behind this tile
    const uint64_t tileBase = tile * kGroupElems;
    uint32_t mask[kSteps];
    unsigned long long packed = 0;  // escapes of each step in a 16-bit field
#pragma unroll
    for (uint32_t s0 = 0; s0 < kSteps; s0 += kAhead) {
      if (s0 > 0) loadSteps<kType, kAligned, kAhead>(p, tile, s0, e, n);
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        const uint32_t s = s0 + a;
        mask[s] = 0;
        if (n[a] == 0) continue;
        uint64_t first = tileBase + s * kStepElems + tid * kThreadElems;
        SmPack<kType> sm;
        uint64_t codes;
        if (encodeSixteen<kType>(e[a], n[a], sCode, sm, codes) & kDeviceEscape)
          mask[s] = escapeMask<kType>(e[a], n[a], sCode);
        uint8_t* smDst = p.out + l.smOff + first * T.smBits / 8;
        uint8_t* codeDst = p.out + l.codeOff + first / 2;
        if (n[a] == kThreadElems) {
          sm.template store<kAligned>(smDst, n[a]);
          storeCodes<kAligned>(codeDst, codes, n[a]);
        } else {
          sm.template store<false>(smDst, n[a]);
          storeCodes<false>(codeDst, codes, n[a]);
        }
        packed |= (unsigned long long)__popc(mask[s]) << (16 * s);
      }
    }

    // Block-wide exclusive scan of the packed counts, in element order (step, thread).
    unsigned long long incl = packed;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
      unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
      if (int(lane) >= off) incl += t;
    }
    if (lane == 31) sWarp[warp] = incl;
    if (tid == 0) sTile = nextTicket;
    __syncthreads();
    const uint64_t nextTile = sTile;
    if (nextTile < p.numTiles) loadSteps<kType, kAligned, kAhead>(p, nextTile, 0, e, n);
    if (warp == 0) {
      unsigned long long v = lane < kWarps ? sWarp[lane] : 0, wIncl = v;
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, wIncl, off);
        if (int(lane) >= off) wIncl += t;
      }
      if (lane < kWarps) sWarpExcl[lane] = wIncl - v;
      unsigned long long total = __shfl_sync(0xFFFFFFFFu, wIncl, kWarps - 1);
      // Chunk (s, j) of the tile is warps 2j and 2j+1 of step s; lane = 8s + j.
      uint32_t s = lane / 8, j = lane % 8;
      uint64_t chunk = tile * kChunksPerGroup + lane;
      if (chunk < l.numChunks) {
        uint32_t c = uint32_t((sWarp[2 * j] >> (16 * s)) & 0xFFFF) + uint32_t((sWarp[2 * j + 1] >> (16 * s)) & 0xFFFF);
        storeLe16(p.out + l.countsOff + 2 * chunk, uint16_t(c));
      }
      uint64_t tileTotal = 0;
#pragma unroll
      for (uint32_t t = 0; t < kSteps; ++t) {
        if (lane == 0) sStepBase[t] = tileTotal;
        tileTotal += (total >> (16 * t)) & 0xFFFF;
      }
      uint64_t prefix = lookBack(status, tile, tileTotal, lane);
      if (lane == 0) {
        sPrefix = prefix;
        storeLe64(p.out + l.indexOff + 8 * tile, prefix);
        if (tile == p.numTiles - 1)
          *reinterpret_cast<unsigned long long*>(p.temp + kTempTotal) = prefix + tileTotal;
      }
    }
    __syncthreads();

    unsigned long long excl = sWarpExcl[warp] + incl - packed;
#pragma unroll
    for (uint32_t s = 0; s < kSteps; ++s) {
      if (mask[s] == 0) continue;
      uint64_t idx = sPrefix + sStepBase[s] + ((excl >> (16 * s)) & 0xFFFF);
      const uint32_t posBase = (tid % (kChunkElems / kThreadElems)) * kThreadElems;
      const uint8_t* src = p.in + (tileBase + s * kStepElems + tid * kThreadElems) * T.elemBytes;
      for (uint32_t m = mask[s]; m != 0 && idx < p.budget; m &= m - 1, ++idx) {
        // Past the budget the frame goes raw: escapes there are never written.
        uint32_t k = __ffs(m) - 1, w = 0;
        for (uint32_t b = 0; b < T.elemBytes; ++b) w |= uint32_t(src[k * T.elemBytes + b]) << (8 * b);
        uint8_t* rec = p.out + l.escOff + idx * kEscapeBytes;
        rec[0] = uint8_t(posBase + k);
        rec[1] = uint8_t((posBase + k) >> 8);
        rec[2] = uint8_t(T.exponent(w));
      }
    }
    __syncthreads();  // the scan arrays and sTile are reused by the next tile
    tile = nextTile;
  }
}

struct FinalizeParams {
  const uint8_t* in;
  uint8_t* out;
  FrameLayout l;
  int type;
  uint64_t budget;
  bool forceRaw;  // the frame is raw whatever the escapes (type, size)
  const uint8_t* temp;
  uint8_t codebook[kCodebookSize];
  int used;
  bool calibrated;
  uint64_t* outBytes;
};

// Writes the header; for a raw frame, also copies the input behind it (whole grid).
template <bool kAligned>
__global__ void finalizeKernel(FinalizeParams p) {
  const FrameLayout& l = p.l;
  uint64_t escapes = p.forceRaw ? 0 : *reinterpret_cast<const unsigned long long*>(p.temp + kTempTotal);
  bool raw = p.forceRaw || escapes > p.budget;
  FrameHeader h{};
  h.version = kFrameVersion;
  h.chunkElems = kChunkElems;
  h.type = uint8_t(p.type);
  h.count = l.count;
  const uint64_t gtid = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (!raw) {
    if (gtid != 0) return;
    const uint8_t* cb = p.calibrated ? p.temp + kTempCodebook : p.codebook;
    h.codebookUsed = uint8_t(p.calibrated ? p.temp[kTempCodebook + kCodebookSize] : p.used);
    for (uint32_t i = 0; i < kCodebookSize; ++i) h.codebook[i] = cb[i];
    h.escapeCount = escapes;
    h.smBytes = l.smBytes;
    h.codeBytes = l.codeBytes;
    h.indexBytes = l.indexBytes;
    h.escapeBytes = escapes * kEscapeBytes;
    writeHeader(h, p.out);
    for (uint64_t b = l.smOff + l.smBytes; b < l.codeOff; ++b) p.out[b] = 0;
    for (uint64_t b = l.codeOff + l.codeBytes; b < l.indexOff; ++b) p.out[b] = 0;
    for (uint64_t b = l.indexOff + l.indexBytes; b < l.escOff; ++b) p.out[b] = 0;
    *p.outBytes = l.escOff + h.escapeBytes;
    return;
  }
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  uint8_t* dst = p.out + kHeaderBytes;
  if (kAligned) {
    for (uint64_t i = gtid; i < l.rawBytes / 16; i += stride)
      __stcs(reinterpret_cast<uint4*>(dst) + i, __ldcs(reinterpret_cast<const uint4*>(p.in) + i));
    for (uint64_t b = l.rawBytes / 16 * 16 + gtid; b < l.rawBytes; b += stride) dst[b] = p.in[b];
  } else {
    for (uint64_t b = gtid; b < l.rawBytes; b += stride) dst[b] = p.in[b];
  }
  if (gtid == 0) {
    h.flags = kFlagRaw;
    writeHeader(h, p.out);
    *p.outBytes = kHeaderBytes + l.rawBytes;
  }
}

}  // namespace

// Exponent histogram of device data into 256 unsigned long long counters (shared with
// szHistogramAsync in histogram.cu).
szResult_t launchHistogram(const void* d_data, size_t count, int type, unsigned long long* d_counts,
                           cudaStream_t stream);

namespace {

__global__ void selectCodebookKernel(uint8_t* temp, uint32_t expBits) {
  const unsigned long long* hist = reinterpret_cast<const unsigned long long*>(temp + kTempHist);
  temp[kTempCodebook + kCodebookSize] = uint8_t(selectCodebook(hist, expBits, temp + kTempCodebook));
}

template <int kType>
szResult_t launchEncode(const EncodeParams& p, bool aligned, int sms, cudaStream_t stream) {
  const uint64_t resident = uint64_t(sms) * blocksPerSm<kType>();
  uint64_t blocks = p.numTiles < resident ? p.numTiles : resident;
  if (aligned) encodeKernel<kType, true><<<unsigned(blocks), kThreads, 0, stream>>>(p);
  else encodeKernel<kType, false><<<unsigned(blocks), kThreads, 0, stream>>>(p);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

szResult_t loadEncodeKernels() {
  cudaFuncAttributes a;
  for (const void* f : {reinterpret_cast<const void*>(encodeKernel<szBfloat16, true>),
                        reinterpret_cast<const void*>(encodeKernel<szBfloat16, false>),
                        reinterpret_cast<const void*>(encodeKernel<szFloat32, true>),
                        reinterpret_cast<const void*>(encodeKernel<szFloat32, false>),
                        reinterpret_cast<const void*>(encodeKernel<szFloat8e5m2, true>),
                        reinterpret_cast<const void*>(encodeKernel<szFloat8e5m2, false>),
                        reinterpret_cast<const void*>(finalizeKernel<true>),
                        reinterpret_cast<const void*>(finalizeKernel<false>),
                        reinterpret_cast<const void*>(selectCodebookKernel)})
    CUDACHECK(cudaFuncGetAttributes(&a, f));
  return szSuccess;
}
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
      return szSetError(szInvalidArgument, "codebook is for type %d, data is type %d", (int)cb.type, (int)type);
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
    if (calibrate) {
      SZCHECK(launchHistogram(d_in, count, type, reinterpret_cast<unsigned long long*>(temp + kTempHist), stream));
      selectCodebookKernel<<<1, 1, 0, stream>>>(temp, t.expBits);
      CUDACHECK(cudaGetLastError());
    }
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
  f.in = static_cast<const uint8_t*>(d_in);
  f.out = static_cast<uint8_t*>(d_out);
  f.l = l;
  f.type = type;
  f.budget = budget;
  f.forceRaw = forceRaw;
  f.temp = temp;
  memcpy(f.codebook, cb.exponents, kCodebookSize);
  f.used = cb.used;
  f.calibrated = calibrate;
  f.outBytes = outBytes;
  uint64_t blocks = l.rawBytes / (256 * 16) + 1;
  if (blocks > uint64_t(sms) * 8) blocks = uint64_t(sms) * 8;
  if (aligned) finalizeKernel<true><<<unsigned(blocks), 256, 0, stream>>>(f);
  else finalizeKernel<false><<<unsigned(blocks), 256, 0, stream>>>(f);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}
