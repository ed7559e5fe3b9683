// The GPU decoder (paper §3, App. A) and szDecodeAsync. The host knows neither the frame's
// type nor its size, so every block validates the header itself (codec/frame.h, the same
// checks as the host decoder), then walks escape groups: sign-mantissa bytes and codes become
// elements with 16-byte stores, and after a block barrier the group's escapes are checked
// (index consistency, positions, order, exponent range) and patched in. Any inconsistency is
// reported through the status word; nothing outside the frame or the output is ever touched.
#include <cuda_runtime.h>

#include "../codec/frame.h"
#include "cuda_check.h"
#include "device_props.h"
#include "kernel_loading.h"
#include "sm_copy.h"
#include "thread_elems.cuh"

namespace sz {
namespace {

constexpr uint32_t kThreads = 512;
constexpr uint32_t kBlocksPerSm = 2;
constexpr uint32_t kStepElems = kThreads * kThreadElems;
constexpr uint32_t kSteps = kGroupElems / kStepElems;

struct DecodeParams {
  const uint8_t* frame;
  uint64_t frameBytes;
  uint8_t* out;
  uint64_t outCapacity;
  int* status;
};

__device__ __forceinline__ void report(int* status, int code) { atomicCAS(status, 0, code); }

struct GroupEscapes {
  uint32_t countIncl[kChunksPerGroup];  // inclusive prefix of the group's chunk counts
  uint64_t base;                        // index of the group's first escape
  uint32_t total;
  int bad;
};

// Warp 0's raw loads of a group's escape index, issued early so their latency overlaps the
// element work: lane j's chunk count and length, lane 0's group offset and the next one.
struct GroupIndexLoads {
  uint32_t cnt, len;
  uint64_t base, next;
};

__device__ __forceinline__ GroupIndexLoads fetchGroupIndex(const FrameHeader& h, const FrameLayout& l,
                                                           const uint8_t* f, uint64_t g, uint32_t lane) {
  GroupIndexLoads r{0, 0, 0, 0};
  uint64_t chunk = g * kChunksPerGroup + lane;
  if (chunk < l.numChunks) {
    uint64_t left = l.count - chunk * kChunkElems;
    r.len = left < kChunkElems ? uint32_t(left) : kChunkElems;
    r.cnt = loadLe16(f + l.countsOff + 2 * chunk);
  }
  if (lane == 0) {
    r.base = loadLe64(f + l.indexOff + 8 * g);
    r.next = g + 1 < l.numGroups ? loadLe64(f + l.indexOff + 8 * (g + 1)) : h.escapeCount;
  }
  return r;
}

// Warp 0: validates group `g`'s chunk counts and offsets (telescoping over all groups:
// offset[0] = 0 and offset[g] + count(g) = offset[g+1] or the header's escape count).
__device__ void finishGroupIndex(const GroupIndexLoads& r, uint64_t g, uint32_t lane, GroupEscapes* ge) {
  bool bad = r.cnt > r.len;
  uint32_t incl = r.cnt;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    uint32_t t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
    if (int(lane) >= off) incl += t;
  }
  ge->countIncl[lane] = incl;
  uint32_t total = __shfl_sync(0xFFFFFFFFu, incl, 31);
  if (lane == 0) {
    bad |= r.base > r.next || r.next - r.base != total || (g == 0 && r.base != 0);
    ge->base = r.base;
    ge->total = total;
  }
  bad = __any_sync(0xFFFFFFFFu, bad);
  if (lane == 0) ge->bad = bad;
}

template <int kType, bool kAligned>
__device__ void decodeGroups(const FrameHeader& h, const FrameLayout& l, const DecodeParams& p,
                             const uint8_t* sExp, GroupEscapes* ge) {
  using E = ThreadElems<kType>;
  constexpr TypeTraits T = E::T;
  constexpr uint32_t expField = ((1u << T.expBits) - 1) << T.mantBits;
  // All steps' loads are issued before the first element is built where registers allow.
  constexpr uint32_t kAhead = SmPack<kType>::E::kSmWords <= 4 ? kSteps : 1;
  const uint32_t tid = threadIdx.x;
  const uint8_t* __restrict__ f = p.frame;
  for (uint64_t g = blockIdx.x; g < l.numGroups; g += gridDim.x) {
    const uint64_t base = g * kGroupElems;
    GroupIndexLoads idx{};
    if (tid < 32) idx = fetchGroupIndex(h, l, f, g, tid);
#pragma unroll
    for (uint32_t s0 = 0; s0 < kSteps; s0 += kAhead) {
      SmPack<kType> sm[kAhead];
      uint64_t codes[kAhead];
      uint32_t n[kAhead];
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        uint64_t first = base + (s0 + a) * kStepElems + tid * kThreadElems;
        n[a] = first >= l.count ? 0 : uint32_t(l.count - first < kThreadElems ? l.count - first : kThreadElems);
        const uint8_t* smSrc = f + l.smOff + first * T.smBits / 8;
        const uint8_t* codeSrc = f + l.codeOff + first / 2;
        if (n[a] == kThreadElems) {
          sm[a].template load<kAligned>(smSrc, n[a]);
          codes[a] = loadCodes<kAligned>(codeSrc, n[a]);
        } else if (n[a] > 0) {
          sm[a].template load<false>(smSrc, n[a]);
          codes[a] = loadCodes<false>(codeSrc, n[a]);
        }
      }
#pragma unroll
      for (uint32_t a = 0; a < kAhead; ++a) {
        if (n[a] == 0) continue;
        uint64_t first = base + (s0 + a) * kStepElems + tid * kThreadElems;
        E e;
        decodeSixteen<kType>(sm[a], codes[a], sExp, e);
        if (n[a] == kThreadElems) e.template store<kAligned>(p.out + first * T.elemBytes, n[a]);
        else e.template store<false>(p.out + first * T.elemBytes, n[a]);
      }
    }
    if (tid < 32) finishGroupIndex(idx, g, tid, ge);
    __syncthreads();  // the group's elements are written; escapes patch them
    if (ge->bad) {
      if (tid == 0) report(p.status, szCorruptFrame);
    } else {
      for (uint32_t j = tid; j < ge->total; j += kThreads) {
        uint64_t e = ge->base + j;
        uint32_t c = 0;  // chunk of escape j: first chunk whose inclusive count exceeds j
        for (uint32_t step = 16; step > 0; step /= 2)
          if (ge->countIncl[c + step - 1] <= j) c += step;
        uint32_t chunkFirst = c ? ge->countIncl[c - 1] : 0;
        uint64_t chunkElem = base + uint64_t(c) * kChunkElems;
        uint32_t len = l.count - chunkElem < kChunkElems ? uint32_t(l.count - chunkElem) : kChunkElems;
        const uint8_t* rec = f + l.escOff + e * kEscapeBytes;
        uint32_t pos = loadLe16(rec), ex = rec[2];
        bool ok = e < h.escapeCount && pos < len && ex < (1u << T.expBits) &&
                  (j == chunkFirst || loadLe16(rec - kEscapeBytes) < pos);
        if (!ok) {
          report(p.status, szCorruptFrame);
          continue;
        }
        uint8_t* dst = p.out + (chunkElem + pos) * T.elemBytes;
        uint32_t w = 0;
        for (uint32_t b = 0; b < T.elemBytes; ++b) w |= uint32_t(dst[b]) << (8 * b);
        w = (w & ~expField) | (ex << T.mantBits);
        for (uint32_t b = 0; b < T.elemBytes; ++b) dst[b] = uint8_t(w >> (8 * b));
      }
    }
    __syncthreads();  // ge is reused by the next group
  }
}

template <bool kAligned>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) decodeKernel(DecodeParams p) {
  __shared__ FrameHeader sH;
  __shared__ FrameLayout sL;
  __shared__ uint8_t sExp[kCodebookSize];
  __shared__ GroupEscapes sGroup;
  __shared__ int sErr;
  const uint32_t tid = threadIdx.x;
  if (tid == 0) {
    int err = szSuccess;
    uint64_t frameBytes = 0;
    if (p.frameBytes < kHeaderBytes) {
      err = szCorruptFrame;
    } else {
      readHeader(p.frame, &sH);
      if (checkHeader(sH, p.frameBytes, &sL, &frameBytes) != kHeaderOk) err = szCorruptFrame;
      else if (sL.rawBytes > p.outCapacity) err = szInvalidArgument;
    }
    if (err != szSuccess && blockIdx.x == 0) report(p.status, err);
    sErr = err;
  }
  if (tid < kCodebookSize) sExp[tid] = p.frameBytes >= kHeaderBytes ? p.frame[64 + tid] : 0;
  __syncthreads();
  if (sErr != szSuccess) return;
  if (sH.flags & kFlagRaw) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x, n = sL.rawBytes;
    const uint64_t gtid = uint64_t(blockIdx.x) * blockDim.x + tid;
    const uint8_t* src = p.frame + kHeaderBytes;
    if (kAligned) {
      for (uint64_t i = gtid; i < n / 16; i += stride)
        __stcs(reinterpret_cast<uint4*>(p.out) + i, __ldcs(reinterpret_cast<const uint4*>(src) + i));
      for (uint64_t b = n / 16 * 16 + gtid; b < n; b += stride) p.out[b] = src[b];
    } else {
      for (uint64_t b = gtid; b < n; b += stride) p.out[b] = src[b];
    }
    return;
  }
  switch (sH.type) {
    case szBfloat16: decodeGroups<szBfloat16, kAligned>(sH, sL, p, sExp, &sGroup); break;
    case szFloat32: decodeGroups<szFloat32, kAligned>(sH, sL, p, sExp, &sGroup); break;
    default: decodeGroups<szFloat8e5m2, kAligned>(sH, sL, p, sExp, &sGroup); break;
  }
}

}  // namespace

szResult_t loadDecodeKernels() {
  cudaFuncAttributes a;
  CUDACHECK(cudaFuncGetAttributes(&a, decodeKernel<true>));
  CUDACHECK(cudaFuncGetAttributes(&a, decodeKernel<false>));
  return szSuccess;
}

}  // namespace sz

using namespace sz;

extern "C" szResult_t szDecodeAsync(const void* d_frame, size_t frameBytes, void* d_out,
                                    size_t outCapacity, int* status, cudaStream_t stream) {
  if (d_frame == nullptr || status == nullptr || (d_out == nullptr && outCapacity > 0))
    return szSetError(szInvalidArgument, "szDecodeAsync: NULL frame, out or status");
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  SZCHECK(smCopyAsync(status, nullptr, sizeof(int), stream));
  DecodeParams p{static_cast<const uint8_t*>(d_frame), frameBytes, static_cast<uint8_t*>(d_out),
                 outCapacity, status};
  bool aligned = ((reinterpret_cast<uintptr_t>(d_frame) | reinterpret_cast<uintptr_t>(d_out)) & 15) == 0;
  unsigned blocks = unsigned(sms) * kBlocksPerSm;
  if (aligned) decodeKernel<true><<<blocks, kThreads, 0, stream>>>(p);
  else decodeKernel<false><<<blocks, kThreads, 0, stream>>>(p);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}
