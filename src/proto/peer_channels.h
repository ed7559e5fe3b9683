// This rank's slot channels with every peer and the next step of each (kernels/slot_format.h):
// operations to one peer take consecutive steps in call order, on both sides alike, as in NCCL.
// Shared by the device slot path (src/proto/slot_path.h) and the host slots
// (src/proto/host_slots.h), each over its own channels.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/checks.h"
#include "kernels/slot_format.h"

namespace sz {

// This rank's channel with `peer` (send = 1: its sends), from the wire or proxy that provides it.
using ChannelSource = std::function<szResult_t(int peer, int send, SlotChannel* channel)>;

class PeerChannels {
 public:
  // Takes every peer's two channels from `source` (none for `rank` itself).
  szResult_t connect(const ChannelSource& source, int rank, int nranks) {
    send_.assign(size_t(nranks), SlotChannel{});
    recv_.assign(size_t(nranks), SlotChannel{});
    sendStep_.assign(size_t(nranks), 0);
    recvStep_.assign(size_t(nranks), 0);
    for (int peer = 0; peer < nranks; ++peer) {
      if (peer == rank) continue;
      SZCHECK(source(peer, 1, &send_[size_t(peer)]));
      SZCHECK(source(peer, 0, &recv_[size_t(peer)]));
    }
    return szSuccess;
  }
  const SlotChannel& channel(bool send, int peer) const { return send ? send_[size_t(peer)] : recv_[size_t(peer)]; }
  // The first of `slices` consecutive steps of the channel, taken for an operation.
  uint64_t takeSteps(bool send, int peer, uint64_t slices) {
    uint64_t& next = send ? sendStep_[size_t(peer)] : recvStep_[size_t(peer)];
    const uint64_t first = next;
    next += slices;
    return first;
  }

 private:
  std::vector<SlotChannel> send_, recv_;       // per peer
  std::vector<uint64_t> sendStep_, recvStep_;  // next channel step per peer
};

}  // namespace sz
