// The slot kernels (docs/PIPELINE.md, "Slot protocol"): one launch per (group, communicator)
// runs all of the group's device operations, on its first operation's stream. Each block takes
// slices of one operation in turn: a send block waits for the slot's credit, encodes (or copies)
// the slice straight into the receiver's slot and publishes it; a receive block waits for its
// slot, checks the slot header, decodes (or copies) into the user's buffer and returns the
// credit. Blocks wait on flags in device memory, as NCCL's kernels do: no host thread is on the
// data path.
#pragma once

#include <cstdint>

#include "slot_format.h"
#include "splitzip.h"

namespace sz {

// One operation of a launch. The kernel reads it from its parameters; `segs`, `slices` (buffer
// lists) and `codebooks` from device-readable memory that lives until the launch has finished.
// A send of frames carries one codebook per segment group its slices take (kSlotCodebooks at
// most): the one in the parameters when it has one, else a table its blocks read once.
struct SlotOp {
  SlotChannel ch;
  SlotSegment seg0;         // nsegs == 1: the buffer
  const SlotSegment* segs;  // nsegs > 1: the buffers
  const SlotSlice* sliceOf;  // nsegs > 1: each slice's first segment and codebook
  uint32_t nsegs;
  int send;
  int type;
  int compress;  // send: encode compressible slices into frames (else raw bytes)
  uint64_t count, bytes, slices;
  // The operation's first channel step. The host writes its offset from the channel's step word
  // at the launch's start (operations of one channel in a launch follow each other in call
  // order); the kernel adds the word. The word lives in device memory and the device advances
  // it (stepAdvance), so a launch replayed from a CUDA graph takes fresh steps each time.
  uint64_t stepBase;
  uint64_t* stepWord;    // device: this side's next step of the channel
  uint64_t stepAdvance;  // the channel's last operation in the launch: the launch's steps on it, else 0
  uint64_t sliceBytes;  // opSliceBytes(bytes, channel slice)
  uint32_t blockBegin, blockEnd;  // the blocks of the launch that work on this operation
  SlotOpAccum* accum;             // device memory, zero
  SlotOpResult* result;           // mapped pinned memory
  const SlotCodebook* codebooks;  // ncodebooks > 1: the send's codebooks, SlotSlice::codebook indexes them
  SlotCodebook codebook;          // ncodebooks == 1: the send's codebook
  uint32_t ncodebooks;            // send frames: 1 to kSlotCodebooks
};

constexpr uint32_t kMaxSlotOps = 32;
// Operations carried in the launch's parameters; the others of a larger group in device-readable
// memory (`pool`, one entry per operation in flight). The parameters stay under 1 KiB (all 32
// in them made 8 KiB).
constexpr uint32_t kInlineSlotOps = 2;
constexpr uint32_t kSlotThreads = 512;

struct SlotLaunch {
  uint32_t nops;
  uint64_t timeoutNs;       // a wait that sees no progress this long fails with szTimeout
  uint8_t* scratch;         // sliceBytes per block: gathers and scatters of buffer lists
  uint64_t scratchStride;
  // recordsStride per block: the escape records of an FP16 or E4M3 slice being encoded
  // (kernels/escape_slots.h narrowScratchBytes); launches with such sends only.
  uint8_t* records;
  uint64_t recordsStride;
  uint32_t blockEnd[kMaxSlotOps];   // each operation's SlotOp::blockEnd: a block finds its operation here
  const SlotOp* pool;               // operations kInlineSlotOps.. nops - 1 are pool[poolIndex[k]]
  uint16_t poolIndex[kMaxSlotOps];
  SlotOp ops[kInlineSlotOps];
};

// Operation k of a launch (`pool` is mapped host memory, the same address on both sides).
SZ_HD const SlotOp& slotOpAt(const SlotLaunch& L, uint32_t k) {
  return k < kInlineSlotOps ? L.ops[k] : L.pool[L.poolIndex[k]];
}

// Launches `blocks` blocks (at least nops) on `stream`.
szResult_t launchSlotOps(const SlotLaunch& launch, uint32_t blocks, cudaStream_t stream);

}  // namespace sz
