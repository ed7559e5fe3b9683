// The batched codec's kernels (kernels/batch.h; paper §3, App. A): one launch for many small
// frames, e.g. the KV blocks of a paged pool. Each block takes items i, i + grid, ... and
// encodes or decodes an item's whole frame alone, with the block-level codec the slot kernels
// use (kernels/encode_block.cuh, kernels/decode_frame.cuh), so thousands of 16 KiB blocks cost
// one launch and frames are byte-identical to szEncode's. An item's arguments live in device
// memory: its block checks them and reports a bad one in the item's status, never touching it.
// An item's codebook is its entry of the table in the launch's parameters, copied into shared
// memory with the item's other fields.
#include <cuda_runtime.h>

#include "batch.h"
#include "cuda_check.h"
#include "decode_frame.cuh"
#include "device_props.h"
#include "encode_block.cuh"

namespace sz {
namespace {

static_assert(sizeof(szResult_t) == sizeof(int), "statuses are written as the int the decoder reports");
static_assert(sizeof(size_t) == sizeof(uint64_t), "sizes are 64-bit on the device");
static_assert(sizeof(EncodeBatch) <= 4096, "the codebook table rides in the launch's parameters (4 KiB)");

constexpr int kRawItems = -1;  // the encode kernel of the types stored raw (no codec path)
// A 16 KiB BF16 item is 8 chunks: a warp each (kernels/decode_frame.cuh), so 8-warp blocks.
constexpr uint32_t kDecodeBatchThreads = 256, kDecodeBlocksPerSm = 6;

__device__ __forceinline__ bool aligned16(const void* a, const void* b) {
  return ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) & 15) == 0;
}

// Thread 0: szEncodeAsync's enqueue-time checks of one item, which only the device can read.
__device__ int checkEncodeItem(int type, const uint8_t* in, uint64_t count, const uint8_t* out, uint64_t capacity) {
  FrameLayout l;
  if (!computeLayout(type, count, &l) || l.rawBytes > ~uint64_t(0) - kHeaderBytes) return szInvalidArgument;
  if ((in == nullptr && count > 0) || out == nullptr) return szInvalidArgument;
  return capacity < kHeaderBytes + l.rawBytes ? szInvalidArgument : szSuccess;  // szEncodeMaxSize
}

// The frame of a type that is never compressed: the elements behind a raw header.
template <bool kAligned>
__device__ uint64_t encodeRawFrame(int type, const uint8_t* in, uint64_t count, uint8_t* frame) {
  __shared__ FrameFinish sFinish;
  if (threadIdx.x == 0) {
    FrameLayout l;
    computeLayout(type, count, &l);
    sFinish = FrameFinish{in, frame, l, type, 0, true, nullptr, 0};
  }
  __syncthreads();
  const uint64_t bytes = finishFrame<kAligned>(sFinish, 0, threadIdx.x, kEncodeThreads);
  __syncthreads();  // sFinish is rewritten by the next item
  return bytes;
}

template <int kType, bool kAligned>
__device__ __forceinline__ uint64_t encodeItem(int type, const uint8_t* codebook, int used, const uint8_t* in,
                                               uint64_t count, uint8_t* frame) {
  if constexpr (kType == kRawItems) {
    return encodeRawFrame<kAligned>(type, in, count, frame);
  } else {
    uint64_t escapes;
    bool raw;
    return encodeSlice<kType, kAligned>(codebook, used, in, count, frame, &escapes, &raw);
  }
}

// kType: the batch's compressible type, or kRawItems. Items' pointers are aligned or not each
// on its own, so both paths are in the kernel (as in the slot kernels' any-type kernel).
template <int kType>
__global__ void __launch_bounds__(kEncodeThreads, blocksPerSm<kType>()) encodeBatchKernel(const __grid_constant__ EncodeBatch b) {
  __shared__ uint8_t sCodebook[kCodebookSize];
  __shared__ int sUsed;
  __shared__ const uint8_t* sIn;
  __shared__ uint8_t* sOut;
  __shared__ uint64_t sCount;
  __shared__ int sStatus;
  const uint32_t tid = threadIdx.x;
  for (uint64_t i = blockIdx.x; i < b.items; i += gridDim.x) {
    int used = 0;  // the item's codebook's; stays 0 for an index out of range
    if constexpr (kType != kRawItems) {
      // The threads that copy the item's codebook read its index themselves (one broadcast load),
      // so the item's barrier below covers the copy.
      if (tid < kCodebookSize) {
        const uint32_t id = b.codebookIds == nullptr ? 0 : b.codebookIds[i];
        if (id < b.numCodebooks) {
          sCodebook[tid] = b.codebooks[id].exponents[tid];
          used = b.codebooks[id].used;
        }
      }
    }
    if (tid == 0) {
      sIn = static_cast<const uint8_t*>(b.ins[i]);
      sOut = static_cast<uint8_t*>(b.outs[i]);
      sCount = b.counts[i];
      sStatus = checkEncodeItem(b.type, sIn, sCount, sOut, b.capacities[i]);
      if (kType != kRawItems && used == 0) sStatus = szInvalidArgument;
      sUsed = used;
    }
    __syncthreads();
    uint64_t bytes = 0;
    if (sStatus == szSuccess) {
      bytes = aligned16(sIn, sOut) ? encodeItem<kType, true>(b.type, sCodebook, sUsed, sIn, sCount, sOut)
                                   : encodeItem<kType, false>(b.type, sCodebook, sUsed, sIn, sCount, sOut);
    }
    if (tid == 0) {
      b.outBytes[i] = bytes;
      b.statuses[i] = szResult_t(sStatus);
    }
    __syncthreads();  // the item's shared fields are rewritten by the next item
  }
}

__global__ void __launch_bounds__(kDecodeBatchThreads, kDecodeBlocksPerSm) decodeBatchKernel(const __grid_constant__ DecodeBatch b) {
  __shared__ DecodeParams sP;  // shared, as in the slot kernels: the decoder reads it at will
  __shared__ int sStatus;      // the payload's verdict (the decoder's status word)
  __shared__ int sArg;
  const uint32_t tid = threadIdx.x;
  for (uint64_t i = blockIdx.x; i < b.items; i += gridDim.x) {
    if (tid == 0) {
      const uint8_t* frame = static_cast<const uint8_t*>(b.frames[i]);
      uint8_t* out = static_cast<uint8_t*>(b.outs[i]);
      const uint64_t capacity = b.capacities[i];
      sP = DecodeParams{frame, b.frameBytes[i], out, capacity, &sStatus, -1, 0};
      sStatus = szSuccess;
      sArg = frame == nullptr || (out == nullptr && capacity > 0) ? szInvalidArgument : szSuccess;
    }
    __syncthreads();
    int err = sArg;
    if (err == szSuccess) {
      // The header's verdict comes back in every thread; the payload's lands in sStatus.
      err = aligned16(sP.frame, sP.out) ? decodeFramePart<true>(sP, tid, kDecodeBatchThreads, false)
                                        : decodeFramePart<false>(sP, tid, kDecodeBatchThreads, false);
    }
    __syncthreads();  // the item is decoded; sP and the decoder's shared state may be rewritten
    if (tid == 0) {
      if (err == szSuccess) err = sStatus;
      b.statuses[i] = szResult_t(err);
      if (b.outCounts != nullptr) {
        FrameHeader h{};
        if (err == szSuccess) readHeader(sP.frame, &h);  // validated by the decoder
        b.outCounts[i] = h.count;
      }
    }
  }
}

template <int kType>
void launchEncodeOf(const EncodeBatch& b, int sms, cudaStream_t stream) {
  const uint64_t resident = uint64_t(sms) * blocksPerSm<kType>();
  const uint64_t blocks = b.items < resident ? b.items : resident;
  encodeBatchKernel<kType><<<unsigned(blocks), kEncodeThreads, 0, stream>>>(b);
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
    default: launchEncodeOf<kRawItems>(b, sms, stream); break;
  }
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

szResult_t launchDecodeBatch(const DecodeBatch& b, cudaStream_t stream) {
  if (b.items == 0) return szSuccess;
  int sms;
  SZCHECK(currentDeviceSms(&sms));
  const uint64_t resident = uint64_t(sms) * kDecodeBlocksPerSm;
  decodeBatchKernel<<<unsigned(b.items < resident ? b.items : resident), kDecodeBatchThreads, 0, stream>>>(b);
  CUDACHECK(cudaGetLastError());
  return szSuccess;
}

}  // namespace sz
