// One point-to-point operation (szSend, szRecv, szSendv, szRecvv) as the slot protocol runs it:
// the group layer (src/group.cc) checks the call and builds it, decides frames or raw and, for a
// device send of frames, the codebooks; the slot path (device buffers, slot_path.h) or the host
// slots (host buffers, host_slots.h) run it and report a SlotCompletion (slot_completion.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/slot_format.h"
#include "splitzip.h"

namespace sz {

// A send's codebook for one segment group (segment_groups.h): the slices that start in the
// group's buffers encode with it (slot_slices.h).
struct SlotGroupCodebook {
  int group = 0;
  szCodebook_t codebook{};
  bool calibrate = false;  // also take the exponent histogram of the group's data (its start)
};

struct Op {
  const char* api = "szSend";  // the call that made it, for messages
  bool send = false;
  int peer = -1;
  szDataType_t type = szUint8;
  uint64_t count = 0;             // elements in all segments
  std::vector<SlotSegment> segs;  // the user's buffers with their place in the message (none empty)
  std::vector<int> segGroups;     // the segment group of each
  bool device = false;            // segs are device memory
  cudaStream_t stream = nullptr;  // device operations: the user's stream
  bool frames = false;            // send: compressible slices travel as frames
  // Host receive: frames may arrive (a compressible type with the codec not off); the host slots'
  // pool joins only operations with codec work, as copies alone go no faster on more threads.
  bool mayDecode = false;
  // Device send of frames: one per segment group that slices start in (sliceGroupMask), or one of
  // any group for a send of no element; at most kSlotCodebooks.
  std::vector<SlotGroupCodebook> codebooks;

  // Whether its path compresses its type, the one test of it for both paths: host buffers are
  // coded by the CPU codec, device buffers by the slot kernels, and both take every type with an
  // exponent (BF16, FP32 and FP8 E5M2 with 4-bit codes, FP16 and E4M3 with 3- or 4-bit ones).
  bool compressible() const { return szTypeIsCompressible(type) != 0; }
};

}  // namespace sz
