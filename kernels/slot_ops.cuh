// The slot kernels' device code (kernels/slot_kernels.h): one template, slotOpsKernel, that
// kernels/slot_kernels.cu instantiates for sends and receives together, and
// kernels/slot_send_kernels.cu and kernels/slot_recv_kernels.cu for one direction. Each TU gets
// its own copy (an unnamed namespace): no device link is needed.
// One block handles one slice at a time and encodes or decodes its whole frame
// (kernels/encode_block.cuh, kernels/decode_frame.cuh), so no barrier spans blocks and slices
// flow as soon as each is done.
#pragma once

#include <cuda_runtime.h>

#include "block_copy.cuh"
#include "codec/code_bits.h"
#include "decode_frame.cuh"
#include "encode_narrow_block.cuh"
#include "encode_block.cuh"
#include "slot_kernel_table.h"

namespace sz {
namespace {


static_assert(kSlotThreads == kEncodeThreads, "the block encoder's shape (the decoder takes any whole warps)");
static_assert(sizeof(SlotOp) % 4 == 0 && sizeof(SlotCodebook) % 4 == 0, "copied in words");
static_assert(kSlotCodebooks * sizeof(SlotCodebook) / 4 <= kSlotThreads - 32, "one word per thread of the warps after the first");

__device__ __forceinline__ uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Acquire loads and release stores of a channel's words at the channel's scope (deviceScope:
// this GPU, else the system).
__device__ __forceinline__ uint64_t loadAcquire(const uint64_t* p, bool device) {
  uint64_t v;
  if (device) asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void storeRelease(uint64_t* p, uint64_t v, bool device) {
  if (device) asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// Orders this thread's earlier writes (and, after a block barrier, the block's) before what it
// writes next, at the channel's scope.
__device__ __forceinline__ void fenceChannel(const SlotChannel& ch) {
  if (ch.deviceScope) __threadfence();
  else __threadfence_system();
}
__device__ __forceinline__ int loadError(const int* p) { return *reinterpret_cast<const volatile int*>(p); }

// Stops the channel on this side and tells the peer: a mismatch verdict travels as itself, any
// other failure as szRemoteError.
// Plain stores: the words may be pinned host memory (proxied wires), where the GPU's atomics are
// not promised; two failures racing leave one of their codes, either of which is right.
__device__ void failChannel(const SlotChannel& ch, int code) {
  volatile int* local = ch.localError;
  if (*local == 0) *local = code;
  volatile int* peer = ch.peerError;
  if (*peer == 0) *peer = code == szInvalidUsage ? szInvalidUsage : szRemoteError;
  __threadfence_system();
}

// Thread 0: waits until done(*word); 0, or the error that stopped the wait (the channel's error
// word, or szTimeout after `timeoutNs` without the word changing).
template <class Done>
__device__ int waitWord(const SlotChannel& ch, const uint64_t* word, Done done, uint64_t timeoutNs) {
  uint64_t start = globalTimer();
  for (uint32_t spin = 1;; ++spin) {
    if (done(loadAcquire(word, ch.deviceScope != 0))) return 0;
    int e = loadError(ch.localError);
    if (e != 0) return e;
    if ((spin & 255) == 0 && globalTimer() - start > timeoutNs) return szTimeout;
  }
}

// The emulated link (SlotChannel::nsPerByte): a payload of `bytes` occupies the link after
// whatever was reserved before it; the block waits until its bytes would have arrived.
__device__ void paceLink(const SlotChannel& ch, uint64_t bytes) {
  if (ch.nsPerByte <= 0) return;
  const unsigned long long busy = (unsigned long long)(double(bytes) * ch.nsPerByte);
  unsigned long long seen = *reinterpret_cast<volatile unsigned long long*>(ch.linkClock), end;
  for (;;) {
    unsigned long long now = globalTimer(), start = seen > now ? seen : now;
    end = start + busy;
    unsigned long long prev = atomicCAS(ch.linkClock, seen, end);
    if (prev == seen) break;
    seen = prev;
  }
  while (globalTimer() < end) {
  }
}

// Copies bytes [off, off + n) of the operation's buffer list, whose segment `first` holds byte
// `off`, to `flat` (gather) or from it. The segment table is read 32 entries at a time (it may
// live in host memory).
__device__ void copyPieces(const SlotOp& op, uint32_t first, uint64_t off, uint8_t* flat, uint64_t n, bool gather) {
  __shared__ SlotSegment sSeg[32];
  const uint32_t tid = threadIdx.x;
  uint64_t done = 0;
  for (uint32_t k = first; done < n && k < op.nsegs; k += 32) {
    if (tid < 32 && k + tid < op.nsegs) sSeg[tid] = op.segs[k + tid];
    __syncthreads();
    for (uint32_t b = 0; b < 32 && k + b < op.nsegs && done < n; ++b) {
      const SlotSegment s = sSeg[b];
      uint64_t from = off + done - s.offset;
      uint64_t len = s.bytes - from < n - done ? s.bytes - from : n - done;
      if (gather) blockCopy<kSlotThreads>(flat + done, s.ptr + from, len);
      else blockCopy<kSlotThreads>(s.ptr + from, flat + done, len);
      done += len;
    }
    __syncthreads();  // sSeg is reloaded
  }
}

// FP16's or E4M3's slice (kType) with the codebook's width: 3-bit codes where calibration marked
// them (marksNarrow), else 4 (E4M3's always stored raw). `sNarrow`: the kernel's one (each
// instantiation of this would otherwise hold its own 12.6 KiB).
template <int kType, bool kAligned>
__device__ __forceinline__ uint64_t encodeNarrowSliceOf(NarrowBlockShared& sNarrow, const SlotCodebook& cb,
                                                        const uint8_t* in, uint64_t count, uint8_t* frame,
                                                        uint8_t* records, uint64_t* escapes, bool* raw) {
  const int used = int(cb.used);
  return marksNarrow(cb.exponents)
             ? encodeNarrowSlice<kType, 3, kAligned>(sNarrow, cb.exponents, used, in, count, frame, records, escapes, raw)
             : encodeNarrowSlice<kType, 4, kAligned>(sNarrow, cb.exponents, used, in, count, frame, records, escapes, raw);
}

// A kernel specialised for one compressible type (kType) and 16-byte aligned buffers carries one
// codec path, which keeps its registers; kSlotAnyType dispatches at run time among format version
// 1's types (groups mixing them), kSlotAllTypes also to FP16's and E4M3's paths (format version
// 2: groups mixing them with other types); kSlotRawOnly carries none (groups of raw operations).
// `records`: the block's scratch for FP16's and E4M3's escape records
// (kernels/encode_narrow_block.cuh).
template <int kType, bool kAligned>
__device__ __forceinline__ uint64_t encodeSliceOf(int type, const SlotCodebook& cb, const uint8_t* in, uint64_t count,
                                                  uint8_t* frame, uint8_t* records, uint64_t* escapes, bool* raw) {
  const int used = int(cb.used);
  const bool aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;
  if constexpr (kType == kSlotAllTypes) {
    __shared__ NarrowBlockShared sNarrow;
    if (type == szFloat16)
      return aligned ? encodeNarrowSliceOf<szFloat16, true>(sNarrow, cb, in, count, frame, records, escapes, raw)
                     : encodeNarrowSliceOf<szFloat16, false>(sNarrow, cb, in, count, frame, records, escapes, raw);
    if (type == szFloat8e4m3)
      return aligned ? encodeNarrowSliceOf<szFloat8e4m3, true>(sNarrow, cb, in, count, frame, records, escapes, raw)
                     : encodeNarrowSliceOf<szFloat8e4m3, false>(sNarrow, cb, in, count, frame, records, escapes, raw);
  }
  if constexpr (kType == kSlotAnyType || kType == kSlotAllTypes) {
    switch (type) {
      case szBfloat16:
        return aligned ? encodeSlice<szBfloat16, true>(cb.exponents, used, in, count, frame, escapes, raw)
                       : encodeSlice<szBfloat16, false>(cb.exponents, used, in, count, frame, escapes, raw);
      case szFloat32:
        return aligned ? encodeSlice<szFloat32, true>(cb.exponents, used, in, count, frame, escapes, raw)
                       : encodeSlice<szFloat32, false>(cb.exponents, used, in, count, frame, escapes, raw);
      default:
        return aligned ? encodeSlice<szFloat8e5m2, true>(cb.exponents, used, in, count, frame, escapes, raw)
                       : encodeSlice<szFloat8e5m2, false>(cb.exponents, used, in, count, frame, escapes, raw);
    }
  } else if constexpr (narrowCodecType(kType)) {
    __shared__ NarrowBlockShared sNarrow;
    return encodeNarrowSliceOf<kType, kAligned>(sNarrow, cb, in, count, frame, records, escapes, raw);
  } else if constexpr (kType >= 0) {
    return encodeSlice<kType, kAligned>(cb.exponents, used, in, count, frame, escapes, raw);
  } else {
    return 0;  // never: the host gives raw-only kernels no frames to make
  }
}

template <int kType, bool kAligned>
__device__ __forceinline__ int decodeSliceOf(const DecodeParams& p) {
  if constexpr (kType == kSlotAllTypes) {
    return (reinterpret_cast<uintptr_t>(p.out) & 15) == 0
               ? decodeFramePart<true, kDecodeAll>(p, threadIdx.x, kSlotThreads, true)
               : decodeFramePart<false, kDecodeAll>(p, threadIdx.x, kSlotThreads, true);
  } else if constexpr (kType == kSlotAnyType) {
    return (reinterpret_cast<uintptr_t>(p.out) & 15) == 0 ? decodeFramePart<true>(p, threadIdx.x, kSlotThreads, true)
                                                          : decodeFramePart<false>(p, threadIdx.x, kSlotThreads, true);
  } else if constexpr (kType >= 0) {
    return decodeFramePart<kAligned, kType>(p, threadIdx.x, kSlotThreads, true);
  } else {
    return szCorruptFrame;  // a frame where only raw slices may come
  }
}

struct BlockTally {
  uint64_t wire, compressed, start, end;
  uint64_t escapes[kSlotCodebooks], compressedElems[kSlotCodebooks];  // per codebook of the send
#if SZ_PROFILE
  // Thread 0's phases (make PROFILE=1, base/profile.h): waiting for a credit or a slot (and the
  // header's check), the slice's encode/decode or copy up to the block's barrier, publishing
  // (header, fence, ready flag or credit), and a send's wait for its last credits (drain).
  uint64_t waitNs, workNs, pubNs, drainNs;
#endif
};

// A send block's slice: credit, encode (with the codebook of the slice's segment group, one of
// `codebooks`) or copy into the peer's slot, header, publish.
template <int kType, bool kAligned>
__device__ __forceinline__ int sendSlice(const SlotLaunch& L, const SlotOp& op, const SlotCodebook* codebooks,
                                         uint64_t i, BlockTally& t) {
  __shared__ int sErr;
  __shared__ uint64_t sBytes;
  __shared__ SlotSlice sSlice;
  const uint32_t tid = threadIdx.x;
  const SlotChannel& ch = op.ch;
  const uint64_t step = op.stepBase + i;
  const uint32_t j = slotOf(step, ch.nslots);
  uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  uint8_t* payload = slot + kSlotHeaderBytes;
  const uint64_t off = i * op.sliceBytes;
  const uint64_t n = op.bytes - off < op.sliceBytes ? op.bytes - off : op.sliceBytes;
#if SZ_PROFILE
  uint64_t stamp = 0;
#endif
  if (tid == 0) {
#if SZ_PROFILE
    stamp = globalTimer();
#endif
    // The slice's entry is read before the wait, so that its trip to host memory overlaps it.
    const SlotSlice s = op.nsegs > 1 ? op.sliceOf[i] : SlotSlice{0, 0};
    sErr = waitWord(ch, &ch.credits[j], [step](uint64_t c) { return slotFree(c, step); }, L.timeoutNs);
    sSlice = s;
#if SZ_PROFILE
    const uint64_t now = globalTimer();
    t.waitNs += now - stamp;
    stamp = now;
#endif
  }
  __syncthreads();
  if (sErr != 0) return sErr;
  const TypeTraits T = typeTraits(op.type);
  const bool frame = op.compress && gpuCodecType(op.type);
  // The host's slice table names one of the send's codebooks; anything else would index past them.
  if (frame && sSlice.codebook >= (op.ncodebooks > 1 ? op.ncodebooks : 1)) return szInternalError;
  uint64_t bytes = n, escapes = 0;
  bool raw = !frame;  // a raw slice, or a frame that stores the slice raw
  // A raw slice of one buffer to a thread of this process on this GPU stays where it is: the
  // receiver copies it from the sender's buffer (kSlotDirect).
  const bool direct = !frame && ch.directRead && op.nsegs == 1 && n > 0;
  if (direct) {
  } else if (frame) {
    const uint8_t* in = op.seg0.ptr + off;
    if (op.nsegs > 1) {
      uint8_t* scratch = L.scratch + uint64_t(blockIdx.x) * L.scratchStride;
      copyPieces(op, sSlice.seg, off, scratch, n, true);
      __syncthreads();
      in = scratch;
    }
    bytes = encodeSliceOf<kType, kAligned>(op.type, codebooks[sSlice.codebook], in, n / T.elemBytes, payload,
                                           L.records + uint64_t(blockIdx.x) * L.recordsStride, &escapes, &raw);
  } else if (op.nsegs > 1) {
    copyPieces(op, sSlice.seg, off, payload, n, true);
  } else {
    blockCopy<kSlotThreads>(payload, op.seg0.ptr + off, n);
  }
  if (tid == 0) sBytes = bytes;
  __syncthreads();  // the payload is written (and thread 0 has the frame size)
  if (tid == 0) {
#if SZ_PROFILE
    const uint64_t now = globalTimer();
    t.workNs += now - stamp;
    stamp = now;
#endif
    SlotHeader* h = reinterpret_cast<SlotHeader*>(slot);
    h->bytes = sBytes;
    h->opCount = op.count;
    h->opSlices = op.slices;
    h->opType = uint32_t(op.type);
    h->flags = frame ? kSlotFrame : direct ? kSlotDirect : 0;
    h->src = direct ? reinterpret_cast<uint64_t>(op.seg0.ptr + off) : 0;
    h->step = step;
    h->version = kSlotProtocolVersion;
    paceLink(ch, sBytes);
    fenceChannel(ch);
    if (ch.signals) {
      reinterpret_cast<volatile uint64_t*>(&ch.signals[j].bytes)[0] = sBytes;
      storeRelease(&ch.signals[j].ready, readyValue(step), ch.deviceScope != 0);
    } else {
      storeRelease(&h->ready, readyValue(step), ch.deviceScope != 0);
    }
#if SZ_PROFILE
    t.pubNs += globalTimer() - stamp;
#endif
    t.wire += sBytes;
    t.compressed += !raw;
    if (frame) {
      t.escapes[sSlice.codebook] += escapes;
      t.compressedElems[sSlice.codebook] += raw ? 0 : n / T.elemBytes;
    }
  }
  return 0;
}

// A receive block's slice: wait for the slot, check its header, decode or copy, credit.
template <int kType, bool kAligned>
__device__ __forceinline__ int recvSlice(const SlotLaunch& L, const SlotOp& op, uint64_t i, BlockTally& t) {
  __shared__ int sErr, sStatus;
  __shared__ SlotHeader sH;
  __shared__ uint32_t sFirst;
  const uint32_t tid = threadIdx.x;
  const SlotChannel& ch = op.ch;
  const uint64_t step = op.stepBase + i;
  const uint32_t j = slotOf(step, ch.nslots);
  const uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  const uint8_t* payload = slot + kSlotHeaderBytes;
  const uint64_t off = i * op.sliceBytes;
  const uint64_t n = op.bytes - off < op.sliceBytes ? op.bytes - off : op.sliceBytes;
#if SZ_PROFILE
  uint64_t stamp = 0;
#endif
  if (tid == 0) {
#if SZ_PROFILE
    stamp = globalTimer();
#endif
    SlotHeader* h = reinterpret_cast<SlotHeader*>(const_cast<uint8_t*>(slot));
    const uint64_t* ready = ch.signals ? &ch.signals[j].ready : &h->ready;
    const uint32_t first = op.nsegs > 1 ? op.sliceOf[i].seg : 0;  // read before the wait, as the sender's
    int e = waitWord(ch, ready, [step](uint64_t r) { return r == readyValue(step); }, L.timeoutNs);
    sFirst = first;
    if (e == 0) {
      const volatile SlotHeader* v = h;
      sH.bytes = v->bytes;
      sH.opCount = v->opCount;
      sH.opSlices = v->opSlices;
      sH.opType = v->opType;
      sH.flags = v->flags;
      sH.step = v->step;
      sH.version = v->version;
      sH.src = v->src;
      e = checkSlotHeader(sH, step, op.count, op.type, op.slices, n, ch.stride - kSlotHeaderBytes, ch.directRead != 0);
      // A direct slice is read from the sender's buffer, which is the sender's caller's again once
      // its kernel has stopped (an abort, a timeout): that sender raised this side's error word
      // first, so a receiver that comes late finds it here, before it reads anything.
      if (e == 0 && (sH.flags & kSlotDirect)) {
        __threadfence();
        e = loadError(ch.localError);
      }
    }
    sErr = e;
    sStatus = 0;
#if SZ_PROFILE
    const uint64_t now = globalTimer();
    t.waitNs += now - stamp;
    stamp = now;
#endif
  }
  __syncthreads();
  if (sErr != 0) return sErr;
  if (sH.flags & kSlotFrame) {
    const TypeTraits T = typeTraits(op.type);
    uint8_t* out = op.nsegs > 1 ? L.scratch + uint64_t(blockIdx.x) * L.scratchStride : op.seg0.ptr + off;
    __shared__ DecodeParams sP;  // shared, as the grid decoder's are parameters: not in registers
    if (tid == 0) sP = DecodeParams{payload, sH.bytes, out, n, &sStatus, op.type, T.elemBytes ? n / T.elemBytes : 0};
    __syncthreads();
    int e = decodeSliceOf<kType, kAligned>(sP);
    __syncthreads();
    if (e == 0) e = sStatus;
    if (e != 0) return e;
    if (op.nsegs > 1) copyPieces(op, sFirst, off, out, n, false);
  } else if (sH.flags & kSlotDirect) {  // the slice in the sender's buffer (checked: a direct channel)
    const uint8_t* src = reinterpret_cast<const uint8_t*>(sH.src);
    if (op.nsegs > 1) copyPieces(op, sFirst, off, const_cast<uint8_t*>(src), n, false);
    else blockCopy<kSlotThreads>(op.seg0.ptr + off, src, n);
    // A sender that stopped (aborted, timed out) raised this side's error word before its kernel
    // ended and its stream could reuse the buffer: a copy that may have met such a reuse is
    // never credited as the slice. (The copy's loads are plain ones: that the fence orders them
    // before the error word's load is what the hardware does, not what the PTX model promises
    // for weak loads. A sender that stops between the check above and the copy is the window
    // left: its caller's reuse is then read here and reported, its unmapping is not.)
    __syncthreads();
    if (tid == 0) {
      __threadfence();
      sStatus = loadError(ch.localError);
    }
    __syncthreads();
    if (sStatus != 0) return sStatus;
  } else if (op.nsegs > 1) {
    copyPieces(op, sFirst, off, const_cast<uint8_t*>(payload), n, false);
  } else {
    blockCopy<kSlotThreads>(op.seg0.ptr + off, payload, n);
  }
  __syncthreads();  // every read of the slot is done: it may be overwritten
  if (tid == 0) {
#if SZ_PROFILE
    const uint64_t now = globalTimer();
    t.workNs += now - stamp;
#endif
    storeRelease(&ch.credits[j], creditAfter(step, ch.nslots), ch.deviceScope != 0);
#if SZ_PROFILE
    t.pubNs += globalTimer() - now;
#endif
    t.wire += sH.bytes;
    t.compressed += (sH.flags & kSlotFrame) != 0;
  }
  return 0;
}

// Thread 32 of every block, once thread 0 has read the operation's channel step (the load has
// returned: its value is in shared memory): the launch's last block to get here advances the step
// words of the channels the launch used, since every block has read its step by then, and clears
// the count. At the start, beside thread 0's first wait, not at the end: a launch's tail would
// otherwise hold one more round trip to memory before its results are written.
__device__ void countBlockStart(const SlotLaunch& L) {
  if (threadIdx.x != 32) return;
  unsigned long long* started = &L.ops[0].accum->launchBlocks;
  __threadfence();  // thread 0's read of the step word (behind the block barrier) before the count
  if (atomicAdd(started, 1ull) + 1 != gridDim.x) return;
  for (uint32_t k = 0; k < L.nops; ++k) {
    const SlotOp& o = slotOpAt(L, k);
    if (o.stepAdvance) *reinterpret_cast<volatile uint64_t*>(o.stepWord) += o.stepAdvance;
  }
  *reinterpret_cast<volatile unsigned long long*>(started) = 0;
}

// The operation's last block to finish writes its result for the host, then marks it done behind
// a system fence: the host reuses a launch's accumulators, result slots, tables and scratch once
// each of its operations is done. An operation of one block writes its own tally; one of several
// blocks sums theirs in its accumulator, whose last block copies and clears it.
__device__ void finishBlock(const SlotOp& op, int status, const BlockTally& t) {
  if (threadIdx.x != 0) return;
  SlotOpResult* r = op.result;
  if (op.blockEnd - op.blockBegin == 1) {
    r->status = status;
    r->wireBytes = t.wire;
    r->compressedSlices = t.compressed;
    r->startNs = t.start;
    r->endNs = t.end;
    for (uint32_t c = 0; c < op.ncodebooks; ++c) {
      r->escapes[c] = t.escapes[c];
      r->compressedElems[c] = t.compressedElems[c];
    }
#if SZ_PROFILE
    r->waitNs = t.waitNs;
    r->workNs = t.workNs;
    r->pubNs = t.pubNs;
    r->drainNs = t.drainNs;
#endif
  } else {
    SlotOpAccum* a = op.accum;
    atomicAdd(&a->wireBytes, (unsigned long long)t.wire);
    atomicAdd(&a->compressedSlices, (unsigned long long)t.compressed);
    for (uint32_t c = 0; c < op.ncodebooks; ++c) {
      if (t.escapes[c]) atomicAdd(&a->escapes[c], (unsigned long long)t.escapes[c]);
      if (t.compressedElems[c]) atomicAdd(&a->compressedElems[c], (unsigned long long)t.compressedElems[c]);
    }
#if SZ_PROFILE
    atomicAdd(&a->waitNs, (unsigned long long)t.waitNs);
    atomicAdd(&a->workNs, (unsigned long long)t.workNs);
    atomicAdd(&a->pubNs, (unsigned long long)t.pubNs);
    atomicAdd(&a->drainNs, (unsigned long long)t.drainNs);
#endif
    if (t.start) atomicMax(&a->startNs, ~(unsigned long long)t.start);  // the earliest start
    atomicMax(&a->endNs, (unsigned long long)t.end);
    if (status != 0) atomicCAS(&a->status, 0, status);
    __threadfence();
    if (atomicAdd(&a->blocksDone, 1ull) + 1 != op.blockEnd - op.blockBegin) return;
    __threadfence();
    volatile SlotOpAccum* v = a;
    r->status = v->status;
    r->wireBytes = v->wireBytes;
    r->compressedSlices = v->compressedSlices;
    r->startNs = v->startNs ? ~v->startNs : 0;
    r->endNs = v->endNs;
    for (uint32_t c = 0; c < op.ncodebooks; ++c) {
      r->escapes[c] = v->escapes[c];
      r->compressedElems[c] = v->compressedElems[c];
      v->escapes[c] = v->compressedElems[c] = 0;
    }
#if SZ_PROFILE
    r->waitNs = v->waitNs;
    r->workNs = v->workNs;
    r->pubNs = v->pubNs;
    r->drainNs = v->drainNs;
    v->waitNs = v->workNs = v->pubNs = v->drainNs = 0;
#endif
    v->wireBytes = v->compressedSlices = v->blocksDone = v->endNs = v->startNs = 0;
    v->status = 0;
  }
#if SZ_PROFILE
  r->doneNs = globalTimer();
#endif
  __threadfence_system();  // the result before `done`
  *reinterpret_cast<volatile int*>(&r->done) = 1;
}

// kDir: which operations the launch holds (SlotDirection). A kernel for sends only or receives
// only carries one side's code, and fewer registers spill than where both share one kernel.
template <int kType, bool kAligned, int kDir>
__global__ void __launch_bounds__(kSlotThreads, 2) slotOpsKernel(const __grid_constant__ SlotLaunch L) {
  // The block's operation in shared memory: fields read from there at any index stay cheap
  // (a run-time index into the parameters would make a local copy per thread).
  __shared__ SlotOp sOp;
  __shared__ BlockTally t;  // thread 0's (in registers it would crowd out the codec's)
  if (threadIdx.x == 0) {
    t = BlockTally{};
    t.start = globalTimer();
  }
  uint32_t k = 0;
  while (k + 1 < L.nops && blockIdx.x >= L.blockEnd[k]) ++k;
  {
    const uint32_t* src = reinterpret_cast<const uint32_t*>(&slotOpAt(L, k));
    uint32_t* dst = reinterpret_cast<uint32_t*>(&sOp);
    for (uint32_t w = threadIdx.x; w < sizeof(SlotOp) / 4; w += kSlotThreads) dst[w] = src[w];
  }
  __syncthreads();
  // The channel's steps at the launch's start: the previous launch on the channel (ordered
  // before this one on the device: src/proto/slot_path.cc) advanced the word once its blocks had read theirs.
  if (threadIdx.x == 0) sOp.stepBase += *reinterpret_cast<const volatile uint64_t*>(sOp.stepWord);
  __syncthreads();
  const SlotOp& op = sOp;
  // A send of several codebooks (one per segment group) reads its table into shared memory once:
  // the second warp loads it while thread 0 waits for the first credit, and sendSlice's barrier
  // after that wait publishes it before any slice is encoded.
  __shared__ SlotCodebook sCodebooks[kSlotCodebooks];
  const SlotCodebook* codebooks = &op.codebook;
  if (op.ncodebooks > 1) {
    constexpr uint32_t kWords = sizeof(SlotCodebook) / 4;
    const uint32_t w = threadIdx.x - 32;
    if (threadIdx.x >= 32 && w < op.ncodebooks * kWords)
      reinterpret_cast<uint32_t*>(sCodebooks)[w] = reinterpret_cast<const uint32_t*>(op.codebooks)[w];
    codebooks = sCodebooks;
  }
  countBlockStart(L);
  const uint64_t nblocks = op.blockEnd - op.blockBegin;
  int status = 0;
  for (uint64_t i = blockIdx.x - op.blockBegin; i < op.slices && status == 0; i += nblocks) {
    if constexpr (kDir == kSlotSendsOnly) status = sendSlice<kType, kAligned>(L, op, codebooks, i, t);
    else if constexpr (kDir == kSlotRecvsOnly) status = recvSlice<kType, kAligned>(L, op, i, t);
    else status = op.send ? sendSlice<kType, kAligned>(L, op, codebooks, i, t) : recvSlice<kType, kAligned>(L, op, i, t);
    if (status != 0 && threadIdx.x == 0) failChannel(op.ch, status);
  }
  // A send completes once the receiver has drained its slices (docs/PIPELINE.md): then the
  // receiver's verdict (a count or type mismatch) reaches this side too.
  if (kDir != kSlotRecvsOnly && op.send && status == 0 && threadIdx.x == 0) {
#if SZ_PROFILE
    const uint64_t drainStart = globalTimer();
#endif
    for (uint64_t i = blockIdx.x - op.blockBegin; i < op.slices && status == 0; i += nblocks) {
      const uint64_t step = op.stepBase + i;
      status = waitWord(op.ch, &op.ch.credits[slotOf(step, op.ch.nslots)],
                        [step, &op](uint64_t c) { return c >= creditAfter(step, op.ch.nslots); }, L.timeoutNs);
    }
    if (status != 0) failChannel(op.ch, status);
#if SZ_PROFILE
    t.drainNs += globalTimer() - drainStart;
#endif
  }
  // Every failure above has gone through failChannel, which raises the peer's error word before
  // this kernel ends: direct reads (kSlotDirect) rely on it. An early return that skips it would
  // let a receiver read a buffer its caller has taken back.
  if (threadIdx.x == 0) t.end = globalTimer();
  __syncthreads();  // thread 32's start count and step advance come before this block's `done`
  finishBlock(op, status, t);
}

}  // namespace
}  // namespace sz
