// The batched codec's kernels (kernels/batch.h; paper §3, App. A): one launch for many small
// frames, e.g. the KV blocks of a paged pool. Each warp takes items i, i + warps, ... and
// encodes or decodes an item's whole frame alone (kernels/encode_warp.cuh, decodeFrameWarp in
// kernels/decode_frame.cuh), with no block barrier, so thousands of 16 KiB blocks cost one
// launch and frames are byte-identical to szEncode's. An item's arguments live in device
// memory: its warp checks them and reports a bad one in the item's status, never touching it.
// An item's codebook is its entry of the table in the launch's parameters.
#include <cuda_runtime.h>

#include "batch.h"
#include "cuda_check.h"
#include "decode_frame.cuh"
#include "device_props.h"
#include "encode_warp.cuh"

namespace sz {
namespace {

static_assert(sizeof(szResult_t) == sizeof(int), "statuses are written as the int the decoder reports");
static_assert(sizeof(size_t) == sizeof(uint64_t), "sizes are 64-bit on the device");
static_assert(sizeof(EncodeBatch) <= 4096, "the codebook table rides in the launch's parameters (4 KiB)");

constexpr int kRawItems = -1;  // the encode kernel of the types stored raw (no codec path)
// Both kernels: a warp per item, 8 warps a block, 2 blocks a multiprocessor (128 registers: an
// item's layout and parameters live in registers; at 4 blocks, 64 registers, both spilled and
// 4096 items of 16 KiB went 1361 / 1159 GB/s against 1526 / 1341).
constexpr uint32_t kBatchThreads = 256, kBatchWarps = kBatchThreads / 32, kBatchBlocksPerSm = 2;

__device__ __forceinline__ bool aligned16(const void* a, const void* b) {
  return ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) & 15) == 0;
}

// Every lane of the item's warp: szEncodeAsync's enqueue-time checks of one item, which only
// the device can read.
__device__ int checkEncodeItem(int type, const uint8_t* in, uint64_t count, const uint8_t* out, uint64_t capacity) {
  FrameLayout l;
  if (!computeLayout(type, count, &l) || l.rawBytes > ~uint64_t(0) - kHeaderBytes) return szInvalidArgument;
  if ((in == nullptr && count > 0) || out == nullptr) return szInvalidArgument;
  return capacity < kHeaderBytes + l.rawBytes ? szInvalidArgument : szSuccess;  // szEncodeMaxSize
}

// The frame of a type that is never compressed: the elements behind a raw header.
template <bool kAligned>
__device__ uint64_t encodeRawFrameWarp(int type, const uint8_t* in, uint64_t count, uint8_t* frame) {
  FrameLayout l;
  computeLayout(type, count, &l);
  const FrameFinish f{in, frame, l, type, 0, true, nullptr, 0};
  return __shfl_sync(0xFFFFFFFFu, finishFrame<kAligned>(f, 0, threadIdx.x % 32, 32), 0);
}

template <int kType, uint32_t kBits, bool kAligned>
__device__ __forceinline__ uint64_t encodeItem(const EncodeBatch& b, const BatchCodebook& cb, const uint8_t* table,
                                               const uint8_t* in, uint64_t count, uint8_t* frame) {
  if constexpr (kType == kRawItems) return encodeRawFrameWarp<kAligned>(b.type, in, count, frame);
  else return encodeFrameWarp<kType, kBits, kAligned>(in, count, frame, table, cb.exponents, cb.used);
}

// Items whose input or frame is not 16-byte aligned: their own function, so the aligned path's
// registers are not shared with it.
template <int kType, uint32_t kBits>
__device__ __noinline__ uint64_t encodeUnalignedItem(const EncodeBatch& b, const BatchCodebook& cb,
                                                     const uint8_t* table, const uint8_t* in, uint64_t count,
                                                     uint8_t* frame) {
  return encodeItem<kType, kBits, false>(b, cb, table, in, count, frame);
}

// kType: the batch's compressible type, or kRawItems; kBits: its codebooks' width. A warp per item, items taken
// warp-grid-stride (kernels/encode_warp.cuh): no block barrier. Each warp has its own code
// table, rebuilt when an item's codebook (its entry of the launch's table) differs from the
// warp's previous item's.
template <int kType, uint32_t kBits>
__global__ void __launch_bounds__(kBatchThreads, kBatchBlocksPerSm) encodeBatchKernel(const __grid_constant__ EncodeBatch b) {
  __shared__ alignas(8) uint8_t sTable[kBatchWarps][256];
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint64_t warps = uint64_t(gridDim.x) * kBatchWarps;
  uint32_t tableId = ~0u;  // the codebook sTable[warp] holds
  for (uint64_t i = uint64_t(blockIdx.x) * kBatchWarps + warp; i < b.items; i += warps) {
    const uint8_t* in = static_cast<const uint8_t*>(b.ins[i]);
    uint8_t* out = static_cast<uint8_t*>(b.outs[i]);
    const uint64_t count = b.counts[i];
    int status = checkEncodeItem(b.type, in, count, out, b.capacities[i]);
    uint32_t id = 0;
    if constexpr (kType != kRawItems) {
      id = b.codebookIds == nullptr ? 0 : b.codebookIds[i];
      if (id >= b.numCodebooks) status = szInvalidArgument;
      if (status == szSuccess && id != tableId) {
        __syncwarp();  // the previous item's lookups are done
        buildCodeTable<kType>(sTable[warp], b.codebooks[id].exponents, lane);
        tableId = id;
      }
    }
    uint64_t bytes = 0;
    if (status == szSuccess) {
      const BatchCodebook& cb = b.codebooks[id];
      bytes = aligned16(in, out) ? encodeItem<kType, kBits, true>(b, cb, sTable[warp], in, count, out)
                                 : encodeUnalignedItem<kType, kBits>(b, cb, sTable[warp], in, count, out);
    }
    if (lane == 0) {
      b.outBytes[i] = bytes;
      b.statuses[i] = szResult_t(status);
    }
  }
}

// Items whose frame or output is not 16-byte aligned: their own function, so the aligned
// path's registers are not shared with it.
template <int kSet>
__device__ __noinline__ int decodeUnalignedItem(WarpFrame& w, bool* mine) { return decodeFrameWarp<false, kSet>(w, mine); }

// A warp per item, items taken warp-grid-stride: no block barrier, each warp validates and
// decodes its frame alone (decodeFrameWarp). Two kernels split the items: kDecodeV1 every item
// but the compressed FP16 and E4M3 frames, which kDecodeNarrow decodes (decode_frame.cuh); each
// item's status and count are written by the kernel whose item it is.
template <int kSet>
__global__ void __launch_bounds__(kBatchThreads, kBatchBlocksPerSm) decodeBatchKernel(const __grid_constant__ DecodeBatch b) {
  if (kSet == kDecodeV1) releaseDependents();  // the second kernel's items are none of this one's
  __shared__ WarpFrame sFrame[kBatchWarps];
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  WarpFrame& w = sFrame[warp];
  const uint64_t warps = uint64_t(gridDim.x) * kBatchWarps;
  for (uint64_t i = uint64_t(blockIdx.x) * kBatchWarps + warp; i < b.items; i += warps) {
    int err = szSuccess;
    if (lane == 0) {
      const uint8_t* frame = static_cast<const uint8_t*>(b.frames[i]);
      uint8_t* out = static_cast<uint8_t*>(b.outs[i]);
      const uint64_t capacity = b.capacities[i];
      w.p = DecodeParams{frame, b.frameBytes[i], out, capacity, &w.status, -1, 0};
      err = frame == nullptr || (out == nullptr && capacity > 0) ? szInvalidArgument : szSuccess;
    }
    err = __shfl_sync(0xFFFFFFFFu, err, 0);
    __syncwarp();
    bool mine = kSet == kDecodeV1;  // an item the first kernel refuses before its header is its own
    if (err == szSuccess)
      err = aligned16(w.p.frame, w.p.out) ? decodeFrameWarp<true, kSet>(w, &mine) : decodeUnalignedItem<kSet>(w, &mine);
    if (!mine) {
      __syncwarp();
      continue;
    }
    if (lane == 0) {
      b.statuses[i] = szResult_t(err);
      if (b.outCounts != nullptr) b.outCounts[i] = err == szSuccess ? w.h.count : 0;
    }
    __syncwarp();  // the warp's frame state is rewritten by its next item
  }
  // The second kernel ends after the first (one thread of it waits for it): the stream's next
  // work, which waits for the second, then finds every item of the batch decoded.
  if (kSet == kDecodeNarrow && blockIdx.x == 0 && threadIdx.x == 0) waitForPrimary();
}

// Blocks for `items` items, a warp each, at most the resident ones.
unsigned batchBlocks(uint64_t items, int sms) {
  const uint64_t resident = uint64_t(sms) * kBatchBlocksPerSm, need = (items + kBatchWarps - 1) / kBatchWarps;
  return unsigned(need < resident ? need : resident);
}

template <int kType, uint32_t kBits = 4>
void launchEncodeOf(const EncodeBatch& b, int sms, cudaStream_t stream) {
  encodeBatchKernel<kType, kBits><<<batchBlocks(b.items, sms), kBatchThreads, 0, stream>>>(b);
}

}  // namespace

szResult_t launchEncodeBatch(const EncodeBatch& b, cudaStream_t stream) {
  if (b.items == 0) return szSuccess;
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  switch (b.type) {
    case szBfloat16: launchEncodeOf<szBfloat16>(b, sms, stream); break;
    case szFloat32: launchEncodeOf<szFloat32>(b, sms, stream); break;
    case szFloat8e5m2: launchEncodeOf<szFloat8e5m2>(b, sms, stream); break;
    case szFloat16:
      if (b.codeBits == 3) launchEncodeOf<szFloat16, 3>(b, sms, stream);
      else launchEncodeOf<szFloat16, 4>(b, sms, stream);
      break;
    case szFloat8e4m3:  // 4-bit codes never pay for E4M3 (kernels/encode_narrow.cu): always raw
      if (b.codeBits == 3) launchEncodeOf<szFloat8e4m3, 3>(b, sms, stream);
      else launchEncodeOf<kRawItems>(b, sms, stream);
      break;
    default: launchEncodeOf<kRawItems>(b, sms, stream); break;
  }
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t launchDecodeBatch(const DecodeBatch& b, cudaStream_t stream) {
  if (b.items == 0) return szSuccess;
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  // The second kernel may start once every block of the first has started (a programmatic
  // dependent: their items are disjoint), reads each item's header and takes only the
  // compressed FP16 and E4M3 frames.
  const unsigned blocks = batchBlocks(b.items, sms);
  decodeBatchKernel<kDecodeV1><<<blocks, kBatchThreads, 0, stream>>>(b);
  CUDACHECK(cudaGetLastError());
  CUDACHECK(launchMaybeDependent(true, dim3(blocks), dim3(kBatchThreads), stream, decodeBatchKernel<kDecodeNarrow>, b));
  return szSuccess;
}

}  // namespace sz
