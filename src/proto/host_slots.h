// Host buffers on the slot protocol (docs/PIPELINE.md, "Slot protocol"): the CPU counterpart of
// the slot kernels. A send's slice waits for its slot's credit, is encoded by the CPU codec (or
// copied) straight into the slot, gets its slot header and is published; a receive's slice waits
// for its slot, has its header checked (kernels/slot_format.h's checkSlotHeader, as the kernels
// do), is decoded (or copied) into the user's buffers, and its credit goes back. A peer's slots
// are the host channel of the communicator's slot proxy (src/proto/slot_proxy.h), which moves
// them over tcp, or a slot-area wire's host slots (ib: RDMA writes by the wire's proxy thread),
// as the channel source gives them. A group's host operations run together in the calling thread, with up to
// `workers - 1` pool threads joining where there is codec work over more than one slice; the caller returns
// once all have finished. Nothing here knows the communicator.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/slot_format.h"
#include "src/proto/codebook_drift.h"
#include "src/proto/op.h"
#include "src/proto/peer_channels.h"
#include "src/proto/slot_completion.h"
#include "src/proto/slot_proxy.h"

namespace sz {

// Whether the credits of a peer's receives up to `steps` have left this rank, and its error words
// (the slot proxy's, for its host channel: SlotProxy::flushed; a wire that moves them itself and
// drains them at close: always true).
using SlotsFlushed = std::function<bool(int peer, uint64_t steps)>;

struct HostSlotConfig {
  int channel;          // the host channel's number (the seal's nonce: src/proto/slot_seal.h)
  uint64_t sliceBytes;  // the channel's: a multiple of kSliceAlign
  int workers;          // threads per group, the caller's included (>= 1)
  int timeoutMs;        // a wait that sees no progress this long fails with szTimeout
  bool crc;             // CRC32C on every slot payload, sent and required
  // Non-null (SZ_AUTH_DATA=1 or SZ_ENCRYPT=1): kSzKeyBytes of the session key; every slot carries
  // an AES-256-GCM tag of its header and payload, with its sender, receiver and step as the nonce.
  const uint8_t* macKey;
  bool encrypt;  // SZ_ENCRYPT=1 (with macKey): the payload travels as AES-256-GCM ciphertext
};

// The slot proxy's channel `chan` as the host slots' channel source, and its flushed().
ChannelSource proxyChannelSource(SlotProxy* proxy, int chan);
SlotsFlushed proxyFlushed(SlotProxy* proxy, int chan);

class HostSlots {
 public:
  // `source` gives each peer's host channels at the first operation with it; `proxy` is driven
  // while operations wait (its host channel's peers). `codebooks`: the senders' codebooks (may be
  // null when no send has frames).
  static szResult_t create(SlotProxy* proxy, const ChannelSource& source, const SlotsFlushed& flushed, int rank,
                           int nranks, const HostSlotConfig& config, CodebookDrift* codebooks,
                           std::unique_ptr<HostSlots>* out);
  ~HostSlots();
  HostSlots(const HostSlots&) = delete;
  HostSlots& operator=(const HostSlots&) = delete;

  // Runs `reqs` to completion together; `done` gets one completion per request, in order. The
  // first failure seen on this rank is returned (with its message), else the first szRemoteError
  // (the peer failed); a failed operation stops its channel with the
  // peer for good, as on the device path. Calls from several threads run one at a time (as
  // NCCL's, a communicator's operations that must progress together belong in one group).
  szResult_t run(std::vector<Op> reqs, std::vector<SlotCompletion>* done);

  // How many times a run woke the pool threads: at its start where sends encode frames, or at
  // the first frame a receive met. A run of raw slices never does.
  uint64_t poolWakes() const { return poolWakes_.load(); }

  struct Run;

 private:
  HostSlots() = default;
  void workerLoop();

  SlotProxy* proxy_ = nullptr;
  SlotsFlushed flushed_;
  int rank_ = 0, nranks_ = 0;
  HostSlotConfig cfg_{};
  CodebookDrift* codebooks_ = nullptr;
  PeerChannels channels_;
  std::mutex runMu_;  // one run at a time: the channels' steps are claimed in call order
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Run> run_;  // the run the pool works on, or null
  std::atomic<uint64_t> poolWakes_{0};
  bool stop_ = false;
  std::vector<std::thread> pool_;
};

}  // namespace sz
