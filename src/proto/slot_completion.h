// What a finished slot operation reports, device (src/proto/slot_path.h) or host
// (src/proto/host_slots.h): the communicator accounts both alike (stats, the auto model, the
// codebook drift policy).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/slot_format.h"
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
  bool replay = false;  // a CUDA graph's replay (src/proto/slot_graphs.h): not fed to the auto model
  // A host send in a group with receives of its type and size class, an exchange that SZ_CODEC=auto
  // judges as one (src/proto/auto_model.h): the later of its end and theirs (0: not an exchange).
  double exchangeSeconds = 0;
  // Host operations: from the group's last operation's end to the call's return (the caller's
  // wake), part of what the auto model judges (judgedSeconds).
  double tailSeconds = 0;
  // Where the send's peer sent this rank the same type and size class in the group (a pair's
  // exchange): the mode that receive came in, in this send's terms (1 frames, 0 raw; -1: no pair;
  // judgeExchanges), and whether this rank is the lower of the two, which leads (the higher one
  // follows).
  int exchangePairFrames = -1;
  bool exchangeLeads = false;
  // The time SZ_CODEC=auto judges the send by: its exchange's where it is one, else its own, and
  // the call's tail after either (0 on the device path).
  double judgedSeconds() const { return (exchangeSeconds > 0 ? exchangeSeconds : seconds) + tailSeconds; }
  uint64_t compressedElements() const {
    uint64_t n = 0;
    for (const SlotGroupResult& g : groups) n += g.compressedElements;
    return n;
  }
};

// A device operation's completion from the result its kernels wrote (`done` set).
inline void completeFromResult(SlotCompletion& c, const SlotOpResult& r) {
  c.status = r.done ? szResult_t(r.status) : szInternalError;
  c.wireBytes = r.wireBytes;
  c.compressedSlices = r.compressedSlices;
  c.seconds = r.endNs > r.startNs ? double(r.endNs - r.startNs) * 1e-9 : 0;
  if (!c.send) c.codecSeconds = c.seconds;  // a receive's kernel time is its decode
  c.escapes = 0;
  for (size_t g = 0; g < c.groups.size() && g < kSlotCodebooks; ++g) {
    c.groups[g].escapes = r.escapes[g];
    c.groups[g].compressedElements = r.compressedElems[g];
    c.escapes += r.escapes[g];
  }
}

}  // namespace sz
