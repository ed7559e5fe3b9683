// One end of a slot proxy channel (src/proto/slot_proxy.h): its ring of slots, and the credit
// words, error words and slot signals beside it, in the memory its users reach; for host
// channels also where each slot's payload lies when it is not in the slot (SlotPayload).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/slot_format.h"
#include "splitzip.h"

namespace sz {

// Where a channel's rings and words live.
enum class SlotMemory {
  kHost,    // plain host memory: CPU senders and receivers (host buffers)
  kPinned,  // mapped pinned host memory: slot kernels, a message wire of host memory (tcp)
  kDevice,  // device rings (a message wire of device memory: nccl), words in mapped pinned memory
};

struct SlotEnd {
  uint8_t* ring = nullptr;
  uint64_t* credits = nullptr;
  int* error = nullptr;      // the local error word
  int* peerError = nullptr;  // what the local side wants the peer to know
  SlotSignal* signals = nullptr;
  SlotPayload* payloads = nullptr;  // kHost: nslots entries (zeroed); null otherwise
};

// Bytes of an end's words: nslots credits, two error words (apart, 64 bytes each), nslots
// signals and nslots payload pointers.
size_t slotEndWordBytes(uint32_t nslots);
// Allocates both ends of a channel of `nslots` slots `stride` bytes apart, credits at their
// initial values; nothing is left allocated on failure. Pinned ends take ring and words in one
// mapping (kernels/pinned_host.h: no wait for running kernels). Errors: szInvalidArgument (a ring
// too large), szSystemError, szUnhandledCudaError.
szResult_t makeSlotEnds(SlotMemory m, uint64_t stride, uint32_t nslots, SlotEnd* send, SlotEnd* recv);
void freeSlotEnd(SlotMemory m, SlotEnd& e);  // and clears it
// `p`'s address for the channel's users: itself for kHost, the device's view of pinned memory
// otherwise (null without CUDA).
void* slotUserAddress(SlotMemory m, void* p);

}  // namespace sz
