// What a finished slot operation reports, device (src/proto/slot_path.h) or host
// (src/proto/host_slots.h): the communicator accounts both alike (stats, the auto model, the
// codebook drift policy).
#pragma once

#include <cstdint>
#include <vector>

#include "splitzip.h"

namespace sz {

// What a finished send of frames reports for one of its codebooks, for the drift policy.
struct SlotGroupResult {
  int group;
  szCodebook_t codebook;
  uint64_t elements;            // of the slices that encoded with it
  uint64_t compressedElements;  // of those, the ones in compressed frames
  uint64_t escapes;
  std::vector<unsigned long long> counts;  // calibrate: the group's exponent histogram (256)
};

// What a finished operation reports.
struct SlotCompletion {
  bool send;
  int peer;
  szDataType_t type;
  uint64_t count, bytes;
  bool frames;
  szResult_t status;
  uint64_t wireBytes, escapes, compressedSlices, slices;
  double seconds;  // first slice started to last slice finished (the GPU's clock, or the host's)
  double codecSeconds;  // encoding (send) or decoding (receive) time summed over slices
  std::vector<SlotGroupResult> groups;  // frames: per codebook, in the request's order
  // Host sends: each slice already fed the drift policy as it was encoded (the CPU codec
  // calibrates and re-encodes per slice: CodebookDrift::encodeHost); device sends feed it once
  // they are reaped.
  bool driftFed = false;
  uint64_t compressedElements() const {
    uint64_t n = 0;
    for (const SlotGroupResult& g : groups) n += g.compressedElements;
    return n;
  }
};

}  // namespace sz
