// The segment groups of one szSendv (its buffer list): the codebooks that follow the data
// (codebook_drift.h) are kept per peer, type and segment group, so K and V, or early and late
// layers, may each get their own codebook. A buffer's group comes from its position alone, with
// no new API: the parity of its index (K and V of a list that interleaves them, K0 V0 K1 V1 ...)
// and which quarter of the list it lies in (K and V of a list that holds all K first, and groups
// of layers in either layout): 2 x 4 = 8 groups. szSend, and a list of one buffer, is group 0.
// A slice (one frame) takes the group of the buffer it starts in.
#pragma once

#include <cstddef>

namespace sz {

constexpr int kSegmentQuarters = 4;
constexpr int kSegmentGroups = 2 * kSegmentQuarters;

// The group of buffer `index` (0-based, counting empty ones) of a list of `count` buffers.
constexpr int segmentGroup(size_t index, size_t count) {
  return int(index % 2) * kSegmentQuarters + int(index * kSegmentQuarters / (count ? count : 1));
}

}  // namespace sz
