// The channel steps of one slot launch's operations (kernels/slot_format.h). A channel's next
// step lives in a device word that the launch's last block to start advances (kernels/slot_ops.cuh,
// countBlockStart), so the host plans steps relative to it: operations of one channel in a launch
// take consecutive steps in call order, as the peer's matching calls do. Pure arithmetic,
// unit-tested on the CPU.
#pragma once

#include <cstdint>
#include <vector>

namespace sz {

// A (peer, direction) channel's index among a rank's step words.
inline int stepChannel(int peer, bool send) { return 2 * peer + (send ? 1 : 0); }

// For operations k = 0.. of a launch, in call order, on channel `channel[k]` with `slices[k]`
// steps: offset[k], its first step's offset from the channel's word at the launch's start; and
// advance[k], what the launch adds to that word: the launch's steps on the channel on the
// channel's last operation of the launch, 0 on its others.
inline void planLaunchSteps(const std::vector<int>& channel, const std::vector<uint64_t>& slices,
                            std::vector<uint64_t>* offset, std::vector<uint64_t>* advance) {
  const size_t n = channel.size();
  offset->assign(n, 0);
  advance->assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    size_t last = k;  // the channel's last operation so far
    for (size_t i = 0; i < k; ++i)
      if (channel[i] == channel[k]) last = i;
    if (last != k) {
      (*offset)[k] = (*offset)[last] + slices[last];
      (*advance)[last] = 0;
    }
    (*advance)[k] = (*offset)[k] + slices[k];
  }
}

}  // namespace sz
