// The ib slot wire's state (transport/ib_wire.cc sets it up, transport/ib_proxy.cc moves the
// slots). Per peer up to two links, each one slot channel per direction with queue pairs of its
// own: the device link for the slot kernels (pairs of two GPU ranks) and the host link for the
// CPU codec's host slots (every pair the wire serves, GPUs or not). Per link, in memory allocated
// and registered once at the pair's first operations:
//
//   send ring   nslots slots the kernels or the CPU codec fill (device link: GPU memory or pinned
//               host memory; host link: host memory), read by the NIC
//   recv ring   nslots slots the peer's NIC writes into (registered for remote writes)
//   control     host memory (pinned on the device link): first what the peer writes (registered
//               for remote writes: this rank's send credits and the peer's error words), then
//               this rank's own words (its SlotSignals, the receive side's credit words, the
//               senders' and receivers' error words)
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/ib_memory.h"
#include "transport/ib_qp.h"
#include "transport/ib_sendq.h"
#include "transport/ib_steps.h"

struct szBootstrap;

namespace sz {

// Offsets into a peer's control memory (64-byte aligned parts).
struct IbControlLayout {
  uint64_t sendCredits, sendErrorIn, recvErrorIn, remoteBytes;  // the peer writes [0, remoteBytes)
  uint64_t sendSignals, recvSignals, recvCredits, sendError, recvError, sendPeerError, recvPeerError, bytes;
  explicit IbControlLayout(uint32_t nslots) {
    const uint64_t words = (uint64_t(nslots) * 8 + 63) / 64 * 64, signals = uint64_t(nslots) * sizeof(SlotSignal);
    sendCredits = 0;
    sendErrorIn = words;
    recvErrorIn = sendErrorIn + 64;
    remoteBytes = recvErrorIn + 64;
    sendSignals = remoteBytes;
    recvSignals = sendSignals + (signals + 63) / 64 * 64;
    recvCredits = recvSignals + (signals + 63) / 64 * 64;
    sendError = recvCredits + words;
    recvError = sendError + 64;
    sendPeerError = recvError + 64;
    recvPeerError = sendPeerError + 64;
    bytes = recvPeerError + 64;
  }
};

// Where the peer's memory is, per stripe (its rkeys are per port).
struct IbRemote {
  uint64_t ring = 0, control = 0;
  uint32_t ringRkey = 0, controlRkey = 0;
};

enum IbLinkKind : int { kIbDeviceLink = 0, kIbHostLink = 1, kIbLinkKinds = 2 };

// A link's slots: the same on both ranks of a pair (checked at connect).
struct IbLinkShape {
  uint64_t sliceBytes = 0, stride = 0;
  uint32_t nslots = 0;
};

// One link with one peer.
struct IbLink {
  szIbBuffer sendRing, recvRing, control;
  std::vector<szIbQp> qps;  // one per local port; the first `stripes` are connected
  std::vector<IbSendQueue> sendq;
  std::vector<IbRemote> remote;
  uint32_t stripes = 0;
  IbLanding landing;
  uint64_t shipNext = 0;
  bool served = false;     // the wire serves this pair with this link (szWireConfig::peers, hostPeers)
  bool attempted = false;  // set up (or tried: a failed link is not tried again)
  int forwarded = 0;  // bit 0: the send side's error went to the peer; bit 1: the receive side's
  bool broken = false;
  std::chrono::steady_clock::time_point lastBeat{};
};

struct IbComm {
  szBootstrap* bootstrap = nullptr;  // the communicator's: pairs connect over it (ibConnectPeers)
  const szIbVerbs* verbs = nullptr;
  std::vector<szIbPort> ports;
  int rank = 0, nranks = 0, device = -1;  // device: -1 on a rank without a GPU
  IbLinkShape shape[kIbLinkKinds];
  bool gpuDirect = false, needFlush = false;
  std::vector<std::array<IbLink, kIbLinkKinds>> links;  // per peer
  // Per (rank, link kind): the link is set up and connected (ibConnectPeers, at the first
  // operations that use it); the proxy touches a link only after reading true here.
  std::unique_ptr<std::atomic<bool>[]> ready;
  // Per link kind, one connect at a time (the device path and the host slots connect their own
  // links: neither waits for the other's exchange, which one lock would make wait in a circle
  // across two ranks). The two kinds' exchanges share the bootstrap, which threads may share.
  std::mutex connectMu[kIbLinkKinds];
};

inline bool linkReady(const IbComm* c, int peer, int kind) {
  return c->ready[size_t(peer) * kIbLinkKinds + size_t(kind)].load(std::memory_order_acquire);
}

template <class T>
T* ibWord(const szIbBuffer& control, uint64_t offset) {
  return reinterpret_cast<T*>(control.addr + offset);
}

// One pass of the wire's proxy over every connected link: ships published send slots, lands the
// peer's writes, forwards credits and error words, watches each peer with heartbeats (`stopping`:
// signalled ones, so that the queues drain). Callers take turns (the slot proxy's lock); true if
// anything moved. `hostOnly`: the host links only (a thread waiting on host slots: a device
// link's landing may need a GPUDirect flush on the communicator's device).
bool ibProgress(IbComm* comm, bool stopping, bool hostOnly);
// At close, once nothing else drives the wire: passes until what is left was forwarded and the
// posted writes completed, at most 2 s.
void ibDrain(IbComm* comm);

}  // namespace sz
