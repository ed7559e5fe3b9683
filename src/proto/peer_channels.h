// This rank's slot channels with every peer and the next step of each (kernels/slot_format.h):
// operations to one peer take consecutive steps in call order, on both sides alike, as in NCCL.
// A peer's channels are connected at the first operations with it (NCCL connects p2p peers
// lazily too), so a rank holds slot memory only for the peers it talks to. Shared by the device
// slot path (src/proto/slot_path.h) and the host slots (src/proto/host_slots.h), each over its
// own channels. The host slots take their steps here (takeSteps); the device slot path keeps
// its channels' next steps in device memory, advanced by its kernels (src/proto/slot_steps.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/checks.h"
#include "kernels/slot_format.h"

namespace sz {

// Connects this rank's channels with `peers` (distinct, none connected yet, never this rank) and
// gives each peer's two channels, its sends' then its receives', in `peers`' order (2 x peers
// entries). Connecting may wait for each of those peers to connect with this rank too (ipc and ib
// exchange their slot areas pairwise): every rank connects all the peers of one group at once.
using ChannelSource = std::function<szResult_t(const std::vector<int>& peers, std::vector<SlotChannel>* channels)>;

class PeerChannels {
 public:
  // `sliceBytes` per rank: the payload bytes of the slots with that peer, 0 where this rank has
  // no channel with it (itself included). Nothing is connected yet.
  void init(const ChannelSource& source, int rank, std::vector<uint64_t> sliceBytes) {
    source_ = source;
    rank_ = rank;
    sliceBytes_ = std::move(sliceBytes);
    const size_t n = sliceBytes_.size();
    send_.assign(n, SlotChannel{});
    recv_.assign(n, SlotChannel{});
    sendStep_.assign(n, 0);
    recvStep_.assign(n, 0);
  }
  // Connects the channels with those of `peers` that have a channel and are not connected yet.
  // Errors: the source's (the peers stay unconnected).
  szResult_t connect(const std::vector<int>& peers) {
    std::vector<int> fresh;
    for (int p : peers)
      if (reaches(p) && !connected(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end()) fresh.push_back(p);
    if (fresh.empty()) return szSuccess;
    std::vector<SlotChannel> got;
    SZCHECK(source_(fresh, &got));
    if (got.size() != 2 * fresh.size())
      return szSetError(szInternalError, "slot channels: %zu channels for %zu peers", got.size(), fresh.size());
    for (size_t i = 0; i < fresh.size(); ++i)  // all checked before any is taken
      if (got[2 * i].ring == nullptr || got[2 * i + 1].ring == nullptr)
        return szSetError(szInternalError, "slot channels: rank %d's channel has no ring", fresh[i]);
    for (size_t i = 0; i < fresh.size(); ++i) {
      send_[size_t(fresh[i])] = got[2 * i];
      recv_[size_t(fresh[i])] = got[2 * i + 1];
    }
    return szSuccess;
  }
  // Whether this rank has channels with `peer` (connected or not).
  bool reaches(int peer) const {
    return peer >= 0 && size_t(peer) < sliceBytes_.size() && peer != rank_ && sliceBytes_[size_t(peer)] != 0;
  }
  bool connected(int peer) const { return send_[size_t(peer)].ring != nullptr; }
  uint64_t sliceBytes(int peer) const { return sliceBytes_[size_t(peer)]; }
  // A connected peer's channel.
  const SlotChannel& channel(bool send, int peer) const { return send ? send_[size_t(peer)] : recv_[size_t(peer)]; }
  // The first of `slices` consecutive steps of the channel, taken for an operation.
  uint64_t takeSteps(bool send, int peer, uint64_t slices) {
    uint64_t& next = send ? sendStep_[size_t(peer)] : recvStep_[size_t(peer)];
    const uint64_t first = next;
    next += slices;
    return first;
  }

 private:
  ChannelSource source_;
  int rank_ = 0;
  std::vector<uint64_t> sliceBytes_;
  std::vector<SlotChannel> send_, recv_;       // per peer, ring null until connected
  std::vector<uint64_t> sendStep_, recvStep_;  // next channel step per peer
};

}  // namespace sz
