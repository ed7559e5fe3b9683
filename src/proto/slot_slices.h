// The slices of a device operation's buffer list (docs/PIPELINE.md, "Per-segment codebooks"): a
// slice (one frame) starts in one segment and takes that segment's group, whose codebook it
// encodes with. Pure arithmetic over the segment table, shared by the slot path (its per-slice
// table), the host slots' gathers and scatters (src/proto/host_slots.cc) and the planning of a
// send's codebooks (src/group.cc); unit-tested on the CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/slot_format.h"

namespace sz {

// Calls visit(slice, segment) for each of `slices` slices of `sliceBytes` over `segs` (in
// message order): `segment` is the index of the one holding the slice's first byte.
template <class Visit>
void forEachSliceStart(const std::vector<SlotSegment>& segs, uint64_t sliceBytes, uint64_t slices, Visit visit) {
  if (segs.empty()) return;
  size_t k = 0;
  for (uint64_t i = 0; i < slices; ++i) {
    const uint64_t off = i * sliceBytes;
    while (k + 1 < segs.size() && segs[k].offset + segs[k].bytes <= off) ++k;
    visit(i, uint32_t(k));
  }
}

// Where the message's bytes [off, off + n) lie when `seg` (the segment holding byte `off`) holds
// them all; null when they run into the next segment.
inline uint8_t* slicePlace(const SlotSegment& seg, uint64_t off, uint64_t n) {
  return seg.offset + seg.bytes >= off + n ? seg.ptr + (off - seg.offset) : nullptr;
}

// Calls fn(pointer, position in the range, length) for the pieces of the message's bytes
// [off, off + n) over `segs`, of which segment `first` holds byte `off` (the host's counterpart
// of the kernels' copyPieces).
template <class Piece>
void forEachPiece(const std::vector<SlotSegment>& segs, uint32_t first, uint64_t off, uint64_t n, Piece fn) {
  uint64_t done = 0;
  for (size_t k = first; done < n && k < segs.size(); ++k) {
    const uint64_t from = off + done - segs[k].offset;
    const uint64_t len = segs[k].bytes - from < n - done ? segs[k].bytes - from : n - done;
    fn(segs[k].ptr + from, done, len);
    done += len;
  }
}

// The segment groups that slices of `sliceBytes` start in (bit g: group g), `groups[k]` being
// segs[k]'s: the groups a send needs codebooks for. One pass over the segments, none over slices.
inline uint32_t sliceGroupMask(const std::vector<SlotSegment>& segs, const std::vector<int>& groups,
                               uint64_t sliceBytes) {
  uint32_t mask = 0;
  for (size_t k = 0; k < segs.size(); ++k) {
    const uint64_t firstStart = (segs[k].offset + sliceBytes - 1) / sliceBytes * sliceBytes;
    if (firstStart < segs[k].offset + segs[k].bytes) mask |= 1u << groups[k];
  }
  return mask;
}

}  // namespace sz
