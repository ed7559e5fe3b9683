// The slot protocol over message wires, moved by a proxy (NCCL's net transport proxy and its
// connector FIFO). Where no one can write into the peer's slots directly (tcp, nccl; and host
// buffers on every wire), each rank keeps both ends of each of its channels locally: the rings
// in memory the message wire moves, and the credit words, error words and slot signals
// (SlotSignal) beside them. A sender (the slot kernels, or a CPU worker for host buffers) fills
// its local send slot and publishes it in its signal (bytes, then ready); the proxy ships header
// and payload as one message, in step order. The receiving proxy posts the receives of the next
// free slots ahead and publishes each landed slot to the receiver through its signal (written
// after the bytes). The credits the receiver writes travel back on a control connection and
// land in the sender's credit words, as do the error words. The senders and receivers are those
// of the direct wires (kernels/slot_format.h): only who moves the bytes differs.
//
// One proxy serves several channels per peer (the device channel of the tcp or nccl wire, and
// the host channel every communicator has), each on its own data connections, with one control
// connection. Device channels are progressed by the proxy's thread (kernels cannot call it);
// a proxy of host channels only has no thread: the CPU threads waiting on its words drive it.
//
// It is the one proxy loop of the communicator: the slot-area wires whose slots the host moves
// (ib's RDMA writes: szWire::progress) are driven by its passes too (drive), from its thread and
// from the CPU threads waiting on host slots.
#pragma once

#include <memory>
#include <vector>

#include "kernels/slot_format.h"
#include "src/proto/slot_end.h"
#include "transport/wire.h"

struct szBootstrap;

namespace sz {

struct SlotProxyChannel {
  const szWire* wire;  // moves the slots: a message wire (szWireMovesMessages)
  SlotMemory memory;
  uint64_t sliceBytes;  // a multiple of kSliceAlign
  uint32_t nslots;
  double linkGBps;  // tcp: pace the data connections (SZ_TCP_LINK_GBPS); 0: none
  void* ncclComm;   // nccl: a communicator to wrap, or null
  // Per rank, 1 where this channel serves the pair (wire_choice.h); empty: every peer. Rings and
  // words are allocated for the pairs served only.
  std::vector<uint8_t> peers;
  // Non-null (SZ_AUTH_DATA or SZ_ENCRYPT, a channel whose slots the kernels fill in host memory):
  // kSzKeyBytes of the session key; the proxy seals each slot as it ships it and opens each as it
  // lands, before the receiver may see it (src/proto/slot_seal.h). A slot that fails stops the
  // channel with szCorruptFrame. Not for kDevice memory (the CPU cannot reach it).
  const uint8_t* macKey = nullptr;
  bool encrypt = false;  // with macKey: the payload travels encrypted (SZ_ENCRYPT)
  // true: every served pair's ends are made at create, with receives posted from the start, for a
  // wire whose sends wait until the peer posts the matching receive (NCCL's: a send to a peer
  // that has not connected yet would hold every later operation of the proxy's stream). false:
  // a pair's ends are made at its first operations (channel()); the peer's messages wait in the
  // wire (tcp: its socket) until then.
  bool connectAtInit = false;
  // true on every rank alike: no pair of the communicator uses the channel (the host channel where
  // every pair's wire carries host buffers itself: ib), so its data wire is not connected at all;
  // with every channel unused, neither is the control wire.
  bool unused = false;
};

// A receive slice's place in its caller's buffer (SlotProxy::landInto): its raw bytes.
struct SlotLanding {
  uint8_t* data;
  uint64_t bytes;
};

class SlotProxy {
 public:
  // Collective over the bootstrap's ranks: connects every channel's data wire and `control`
  // (a message wire of host memory for the credits and error words: the communicator passes
  // tcp), allocates the rings and words of connectAtInit channels, and starts the thread if any
  // channel is not kHost.
  static szResult_t create(szBootstrap* b, const szWire* control, const std::vector<SlotProxyChannel>& channels,
                           std::unique_ptr<SlotProxy>* out);
  ~SlotProxy();  // after every sender and receiver using the channels has stopped
  SlotProxy(const SlotProxy&) = delete;
  SlotProxy& operator=(const SlotProxy&) = delete;

  // This rank's view of channel `chan` with `peer` (send = 1: its sends to the peer), in the
  // addresses its users take: host pointers for kHost, device pointers otherwise. The pair's
  // ring and words are allocated at the first call (once). Errors: szSystemError or
  // szUnhandledCudaError (memory), szInvalidArgument (a pair the channel does not serve).
  szResult_t channel(int chan, int peer, int send, SlotChannel* out);
  // Bytes of rings and words allocated so far (both ends of every connected pair, every channel).
  uint64_t slotBytes();
  // One pass over every peer, from a thread waiting on a host channel; returns at once if another
  // thread is in a pass. True if anything moved.
  bool progress();
  // Has every pass drive `wire`'s own proxy too (`wire->progress(wireComm)`, one call at a time),
  // and starts the thread if there is none, on the current device (if any). Before the first
  // operation; `wireComm` must outlive this proxy's passes (close the wire after destroying it).
  szResult_t drive(const szWire* wire, void* wireComm);
  // Whether what this rank's receiver owes `peer` on channel `chan` has left: the credits of
  // its steps below `steps` and its error words (a receiver returns only then: the sender's
  // completion waits for those credits). A broken peer has nothing more to send: true.
  bool flushed(int chan, int peer, uint64_t steps);

  // Zero-copy host channels (a SlotChannel with payloads): the steps from `first` of channel
  // `chan` with `peer`, one SlotLanding each (data null: in the slot), may land their payloads
  // straight in a receive's buffer; steps already posted land in their slots. Registrations come
  // in step order. The proxy records each landed slot's place in its SlotPayload before the
  // signal: a receiver whose slice arrived as a frame there decodes it from a copy.
  void landInto(int chan, int peer, uint64_t first, std::vector<SlotLanding> slices);
  // Before a failed host operation hands its caller's buffers back: drops the landings of its
  // steps (receive side, from `first`), and where a request of the pair's channel in that
  // direction may still touch a caller's buffer (a receive posted into one; a send shipped or
  // published from one), fails the pair: its wire drops every request with the peer
  // (szWire::failPeer) and the pair breaks (szRemoteError on both sides). Once this returns,
  // nothing the proxy moves touches those buffers.
  void releasePayloads(int chan, int peer, int send, uint64_t first);
  // Payload bytes shipped straight from callers' buffers, and landed straight in them, so far.
  void callerBytes(uint64_t* shipped, uint64_t* landed);

  struct State;

 private:
  SlotProxy() = default;
  std::unique_ptr<State> s_;
};

}  // namespace sz
