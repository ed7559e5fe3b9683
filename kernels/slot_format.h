// The one-sided slot protocol's in-memory format (docs/PIPELINE.md, "Slot protocol"), shared by
// the slot kernels, the wires that provide slot memory and the host side of the protocol.
//
// Per (peer, direction) a channel: a ring of `nslots` slots in memory the receiver owns, and
// `nslots` credit words in memory the sender owns. An operation takes consecutive steps of the
// channel, one per slice; step s uses slot s % nslots. The sender may fill slot j for step s
// once credits[j] >= s (the receiver has drained step s - nslots; credits start at j), writes
// the payload and the slot header, then publishes with header.ready = s + 1 (a release store,
// written last). The receiver waits for ready == s + 1, decodes, and returns the slot with
// credits[j] = s + nslots. Everything the receiver needs travels in-band: the slot header
// (operation count, type and slice count, payload bytes, raw or frame) and the self-describing
// frame. Each side also owns an error word the peer may set: a count/type mismatch found by the
// receiver, or a side that failed, stops the other side's blocks at once.
// Pure data and arithmetic: compiled for the host and the GPU, unit-tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/dtype.h"

namespace sz {

constexpr uint64_t kSlotHeaderBytes = 128;
constexpr uint32_t kSlotFrame = 0x1;  // the payload is a SplitZip frame (else the raw bytes)
constexpr uint32_t kSlotCrc = 0x2;    // `crc` holds the payload's CRC32C (host channels, SZ_CRC=1)
constexpr uint32_t kSlotMac = 0x4;    // `mac` holds an AES-256-GCM tag (SZ_AUTH_DATA=1 or SZ_ENCRYPT=1: host slots, tcp device slots)
constexpr uint32_t kSlotSealed = 0x8; // the payload is AES-256-GCM ciphertext (SZ_ENCRYPT=1)
// The raw slice stayed in the sender's buffer at `src` (SlotChannel::directRead: ranks that are
// threads of one process on one GPU); the receiver copies it from there, and the payload is empty.
constexpr uint32_t kSlotDirect = 0x10;
// The slot protocol's version: in every slot header and in the init handshake (src/comm.cc). A
// rank of another version fails init, naming both. 5: a raw device slice between threads of one
// process on one GPU stays in the sender's buffer (kSlotDirect; 4: a slot proxy's credit covers every step up
// to its own, and a raw host slice may travel from and land in the caller's buffer; 3: pairs
// connected at their first operations, the seal's nonce carries the proxy channel; 2: host
// buffers on slots; 1: the slice pipeline).
constexpr uint32_t kSlotProtocolVersion = 5;

struct SlotHeader {
  uint64_t ready;    // step + 1 once the slot holds that step's slice (written last)
  uint64_t bytes;    // payload bytes after the header
  uint64_t opCount;  // the operation's element count
  uint64_t opSlices; // the operation's slice count
  uint32_t opType;   // szDataType_t
  uint32_t flags;    // kSlotFrame
  uint64_t step;     // the channel step the slot holds (a slot of another step is corrupt)
  uint32_t version;  // kSlotProtocolVersion
  uint32_t crc;      // kSlotCrc: CRC32C of the payload
  uint8_t mac[32];   // kSlotMac: the GCM tag (16 bytes, then zeros) of the header's fields and payload
  uint64_t src;      // kSlotDirect: the slice's first byte in the sender's buffer (this process's address)
  uint64_t reserved[4];
};
static_assert(sizeof(SlotHeader) == kSlotHeaderBytes, "one slot header");

// Slices are cut at multiples of this many bytes, so every slice starts 16-byte aligned relative
// to its buffer and holds whole elements of every type.
constexpr uint64_t kSliceAlign = 4096;

// Slot stride for slices of `sliceBytes`: the header and the largest frame of a slice (raw
// bytes plus the frame header), rounded up to 256 bytes.
SZ_HD constexpr uint64_t slotStride(uint64_t sliceBytes) {
  return (kSlotHeaderBytes + SZ_FRAME_HEADER_BYTES + sliceBytes + 255) / 256 * 256;
}
// The slice size of an operation of `bytes` bytes: the channel's slice (`maxSlice`) for large
// operations; smaller ones are cut into about kTargetSlices slices (of at least kMinSlice), so
// that many blocks share them (one block works on one slice). A function of the size alone:
// both sides cut alike.
constexpr uint64_t kTargetSlices = 64;
constexpr uint64_t kMinSlice = 4 * kSliceAlign;
SZ_HD constexpr uint64_t opSliceBytes(uint64_t bytes, uint64_t maxSlice) {
  const uint64_t even = ((bytes + kTargetSlices - 1) / kTargetSlices + kSliceAlign - 1) / kSliceAlign * kSliceAlign;
  return even < kMinSlice ? (kMinSlice < maxSlice ? kMinSlice : maxSlice) : even > maxSlice ? maxSlice : even;
}
// Slices of an operation of `bytes` bytes in slices of `sliceBytes`; a zero-byte operation still
// takes one (empty) step, which carries its count and type to the receiver.
SZ_HD constexpr uint64_t opSlices(uint64_t bytes, uint64_t sliceBytes) {
  return bytes == 0 ? 1 : (bytes + sliceBytes - 1) / sliceBytes;
}
SZ_HD constexpr uint32_t slotOf(uint64_t step, uint32_t nslots) { return uint32_t(step % nslots); }
SZ_HD constexpr uint64_t initialCredit(uint32_t slot) { return slot; }
SZ_HD constexpr bool slotFree(uint64_t credit, uint64_t step) { return credit >= step; }
SZ_HD constexpr uint64_t creditAfter(uint64_t step, uint32_t nslots) { return step + nslots; }
SZ_HD constexpr uint64_t readyValue(uint64_t step) { return step + 1; }

// The verdict of the receiver on the slot header of its step `step`: 0 if it matches, else the
// error both sides report (szInvalidUsage for a count/type mismatch, szCorruptFrame otherwise).
// `direct`: the channel's SlotChannel::directRead; a kSlotDirect slice anywhere else is corrupt.
SZ_HD int checkSlotHeader(const SlotHeader& h, uint64_t step, uint64_t count, int type, uint64_t slices,
                          uint64_t sliceBytesExpected, uint64_t capacity, bool direct = false) {
  if (h.step != step || h.version != kSlotProtocolVersion) return szCorruptFrame;
  if (h.opCount != count || h.opType != uint32_t(type) || h.opSlices != slices) return szInvalidUsage;
  if (h.flags & ~(kSlotFrame | kSlotCrc | kSlotMac | kSlotSealed | kSlotDirect)) return szCorruptFrame;
  if (h.flags & kSlotDirect)
    return direct && h.flags == kSlotDirect && h.src != 0 && h.src + h.bytes > h.src && h.bytes == sliceBytesExpected
               ? 0
               : szCorruptFrame;
  if (h.flags & kSlotFrame) return h.bytes <= capacity ? 0 : szCorruptFrame;
  return h.bytes == sliceBytesExpected ? 0 : szCorruptFrame;
}

// Per slot, for wires whose proxy moves the slots (NCCL's connector FIFO): host-visible words
// that take the place of the header's ready word. The sender's kernel writes `bytes`, then
// `ready` (release) into its own signals, and the proxy reads both to ship header and payload
// as one message; the receiving proxy writes `ready` into the receiver's signals once the
// message has landed. The ring's own ready word is then never written.
struct SlotSignal {
  uint64_t ready;
  uint64_t bytes;
};

// Host channels of the slot proxy over a wire that can fail a peer (tcp): where a slot's payload
// lies when not in the slot. A host sender leaves a raw slice in its caller's buffer (set before
// the slot's ready word is released; null: in the slot), and the proxy may land a receive's raw
// slice straight in its caller's buffer (set before the signal's ready word; null: in the slot).
struct SlotPayload {
  uint8_t* data;
};

// One side's view of a channel (device pointers: local memory, or the peer's mapped memory).
struct SlotChannel {
  uint8_t* ring;        // nslots slots of `stride` bytes (receiver's memory)
  SlotSignal* signals;  // nslots signals (this side's, host-visible), or null: ready in the ring
  uint64_t* credits;    // nslots words (sender's memory)
  int* localError;      // this side's error word: nonzero stops every block on the channel
  int* peerError;       // the peer's error word for this channel
  unsigned long long* linkClock;  // sender, emulated link: when the link is next free (ns)
  double nsPerByte;     // emulated link: 0 when there is none (docs/PIPELINE.md)
  uint64_t stride;
  uint64_t sliceBytes;
  uint32_t nslots;
  uint32_t maxBlocks;   // host side: the most blocks one operation on the channel takes (0: no cap)
  // 1: the peer may write the receive ring at any time (ib: RDMA writes under its rkey), so a host
  // receiver copies a landed slot out before it checks and decodes it, and nothing the peer
  // writes afterwards can change what was checked.
  uint32_t peerWritable;
  // 1: every reader and writer of the channel's slots, ready words and credits is a kernel on
  // this GPU (ipc between ranks of one device): a slice is published and credited behind a
  // device-scope fence. 0: the peer is another GPU or a host proxy, which a system-scope fence
  // reaches (1.6-1.8 us a slice at 4 KiB on one H100, perf/results/2026-12-06_h100_latency_profile.md).
  uint32_t deviceScope;
  // 1: the peer is a thread of this process on this GPU (ipc), so either side's buffers are
  // readable from the other's kernels: a raw slice of a one-buffer send stays in the sender's
  // buffer (kSlotDirect) and the receiver copies it straight into its own, one copy instead of
  // two. The send still completes only once the receiver has credited the slice (it has read it).
  uint32_t directRead;
  // Host channels of the slot proxy whose wire can fail a peer: nslots entries (SlotPayload);
  // null: every payload lies in its slot.
  SlotPayload* payloads;
};

// A piece of a szSendv/szRecvv buffer list.
struct SlotSegment {
  uint8_t* ptr;
  uint64_t bytes;
  uint64_t offset;  // where it starts in the message
};

// The codebooks one send's slices may encode with: one per segment group of its buffer list
// (src/proto/segment_groups.h; a slice takes the group of the buffer it starts in).
constexpr uint32_t kSlotCodebooks = 8;

// A codebook as the slot kernels take it (szCodebook_t without its type: the operation's).
struct SlotCodebook {
  uint8_t exponents[SZ_CODEBOOK_SIZE];
  uint32_t used;
};

// Per slice of a buffer list: the segment holding its first byte, and the operation's codebook
// it encodes with (send frames; 0 otherwise).
struct SlotSlice {
  uint32_t seg;
  uint32_t codebook;
};

// Per operation, written by its last block to mapped pinned memory for the host, `done` last
// (behind a system fence). Escapes and elements of compressed frames are counted per codebook (the drift
// policy follows each group).
struct SlotOpResult {
  int status;                // szResult_t
  int done;                  // 1 once the operation's blocks have finished (finishBlock)
  uint64_t wireBytes;        // slot payload bytes published (send) or drained (receive)
  uint64_t compressedSlices;
  uint64_t startNs, endNs;   // global timer: first slice started, last slice finished
  uint64_t escapes[kSlotCodebooks];
  uint64_t compressedElems[kSlotCodebooks];
#if SZ_PROFILE
  uint64_t waitNs, workNs, pubNs, drainNs;  // sums over the operation's blocks (base/profile.h)
  uint64_t doneNs;                          // global timer: just before `done` was written
#endif
};

// Per operation, accumulated in device memory by its blocks (zero before and after use).
struct SlotOpAccum {
  unsigned long long wireBytes, compressedSlices, blocksDone, endNs;
  unsigned long long startNs;  // 0: none yet (the global timer is never 0)
  unsigned long long launchBlocks;  // the launch's first operation only: its blocks started (countBlockStart)
  unsigned long long escapes[kSlotCodebooks], compressedElems[kSlotCodebooks];
#if SZ_PROFILE
  unsigned long long waitNs, workNs, pubNs, drainNs;
#endif
  int status;
  int pad;
};

}  // namespace sz
