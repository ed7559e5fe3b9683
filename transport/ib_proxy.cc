// The ib wire's proxy (NCCL's net proxy): passes over every link of every peer (the device link's
// slots are the kernels', the host link's the CPU codec's: the same moves), driven by the
// communicator's slot proxy (src/proto/slot_proxy.h: its thread, and threads waiting on host slots)
// through szWire::progress, as it drives every proxied wire.
//
//   ship     the next step's send slot is published in its SlotSignal (the kernels wrote bytes,
//            then ready): RDMA_WRITE_WITH_IMM of exactly header + payload into the same slot of
//            the peer's receive ring, on the step's stripe; the immediate names slot and step
//   land     a receive completion with an immediate: the slot landed (after a GPUDirect flush
//            where the GPU needs one): ready goes into this rank's receive SlotSignal
//   credits  the kernels drained a landed slot: its credit goes back by an inline RDMA write
//            into the sender's credit word
//   errors   a kernel's error for the peer goes out the same way; the peer's, written into this
//            rank's control memory, is raised in the kernels' error words
//   liveness an empty write on every stripe each 100 ms: a peer that vanished fails it (retry
//            exceeded) even while nothing else is in flight, and every failed completion stops
//            the peer's channels with the tcp wire's code (transport/ib_status.h)
#include <arpa/inet.h>
#include <cuda_runtime.h>

#include <cstring>
#include <thread>

#include "base/checks.h"
#include "transport/ib_comm.h"
#include "transport/ib_status.h"
#include "transport/slot_words.h"

namespace sz {
namespace {

constexpr auto kHeartbeat = std::chrono::milliseconds(100);
constexpr auto kDrainLimit = std::chrono::seconds(2);
constexpr int kPollBatch = 32;

struct Proxy {
  IbComm* c;
  IbControlLayout layout[kIbLinkKinds];
  struct Landed {
    uint32_t slot;
    uint64_t step, bytes;  // bytes: the payload's (the write's, less the slot header)
  };
  std::vector<Landed> landed;  // this pass, per link
};

const char* const kLinkName[kIbLinkKinds] = {"device", "host"};

// Stops both channels of a link with `peer` (their senders and receivers see `code`); logged once.
void breakPeer(Proxy& x, int peer, int kind, szResult_t code, const char* why) {
  IbLink& p = x.c->links[size_t(peer)][kind];
  if (!p.broken)  // INFO, not WARN: a peer that closed its communicator first ends this way too
    INFO(SZ_NET, "ib wire: rank %d: the %s link with rank %d failed (%s): %s", x.c->rank, kLinkName[kind], peer,
         szResultName(code), why);
  p.broken = true;
  slotRaiseError(ibWord<int>(p.control, x.layout[kind].sendError), code);
  slotRaiseError(ibWord<int>(p.control, x.layout[kind].recvError), code);
}

// Posts one RDMA write on `stripe` (the caller checked that its queue has room): `sge` null
// for an empty write, `inlineData` for control words, `imm` >= 0 for a slot.
bool postWrite(Proxy& x, int peer, int kind, uint32_t stripe, ibv_sge* sge, bool inlineData, int64_t imm,
               uint64_t remoteAddr, uint32_t rkey, bool force) {
  IbLink& p = x.c->links[size_t(peer)][kind];
  ibv_send_wr wr{}, *bad = nullptr;
  const bool signal = p.sendq[stripe].post(force, &wr.wr_id);
  wr.sg_list = sge;
  wr.num_sge = sge ? 1 : 0;
  wr.opcode = imm >= 0 ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
  wr.send_flags = (signal ? IBV_SEND_SIGNALED : 0) | (inlineData ? IBV_SEND_INLINE : 0);
  wr.imm_data = htonl(uint32_t(imm));
  wr.wr.rdma.remote_addr = remoteAddr;
  wr.wr.rdma.rkey = rkey;
  const int rc = ibv_post_send(p.qps[stripe].qp, &wr, &bad);
  if (rc != 0) breakPeer(x, peer, kind, szSystemError, strerror(rc));
  return rc == 0;
}

bool postRecv(Proxy& x, int peer, int kind, uint32_t stripe) {
  ibv_recv_wr wr{}, *bad = nullptr;  // wr_id 0: a receive (every send's id is >= 1)
  const int rc = ibv_post_recv(x.c->links[size_t(peer)][kind].qps[stripe].qp, &wr, &bad);
  if (rc != 0) breakPeer(x, peer, kind, szSystemError, strerror(rc));
  return rc == 0;
}

// Completions of every stripe; landed slots are published after one flush for all of them.
bool poll(Proxy& x, int peer, int kind) {
  IbLink& p = x.c->links[size_t(peer)][kind];
  x.landed.clear();
  bool moved = false;
  for (uint32_t s = 0; s < p.stripes && !p.broken; ++s) {
    ibv_wc wc[kPollBatch];
    const int n = ibv_poll_cq(p.qps[s].cq, kPollBatch, wc);
    if (n < 0) breakPeer(x, peer, kind, szSystemError, "ibv_poll_cq failed");
    for (int i = 0; i < n && !p.broken; ++i) {
      moved = true;
      if (wc[i].status != IBV_WC_SUCCESS) {
        breakPeer(x, peer, kind, szIbWcResult(wc[i].status), szIbWcReason(wc[i].status));
      } else if (wc[i].wr_id != 0) {
        p.sendq[s].complete(wc[i].wr_id);
      } else {
        uint32_t slot = 0;
        uint64_t step = 0;
        if (!(wc[i].wc_flags & IBV_WC_WITH_IMM) || wc[i].byte_len < kSlotHeaderBytes ||
            p.landing.land(ntohl(wc[i].imm_data), &slot, &step) != szSuccess)
          breakPeer(x, peer, kind, szRemoteError, "a write named a slot or step out of turn, or held no slot header");
        else if (postRecv(x, peer, kind, s))
          x.landed.push_back({slot, step, uint64_t(wc[i].byte_len) - kSlotHeaderBytes});
      }
    }
  }
  if (x.landed.empty() || p.broken) return moved;
  if (p.recvRing.gpu && x.c->needFlush) szIbFlushGpuWrites();
  SlotSignal* signals = ibWord<SlotSignal>(p.control, x.layout[kind].recvSignals);
  for (const Proxy::Landed& l : x.landed) {
    // What landed, for a host receiver to hold the header's size against (as over tcp).
    __atomic_store_n(&signals[l.slot].bytes, l.bytes, __ATOMIC_RELAXED);
    slotStoreRelease(&signals[l.slot].ready, readyValue(l.step));
  }
  return true;
}

bool ship(Proxy& x, int peer, int kind) {
  IbComm* c = x.c;
  IbLink& p = c->links[size_t(peer)][kind];
  const IbLinkShape& shape = c->shape[kind];
  SlotSignal* signals = ibWord<SlotSignal>(p.control, x.layout[kind].sendSignals);
  bool moved = false;
  while (!p.broken) {
    const uint64_t s = p.shipNext;
    const uint32_t j = slotOf(s, shape.nslots), stripe = ibStripeOf(s, p.stripes);
    if (slotLoadAcquire(&signals[j].ready) != readyValue(s) || p.sendq[stripe].full()) break;
    const uint64_t bytes = ibWriteBytes(reinterpret_cast<volatile uint64_t*>(&signals[j].bytes)[0], shape.stride);
    if (bytes == 0) {
      breakPeer(x, peer, kind, szInternalError, "a send slot's signal holds more bytes than a slot");
      break;
    }
    ibv_sge sge{uint64_t(p.sendRing.addr + uint64_t(j) * shape.stride), uint32_t(bytes), p.sendRing.mrs[stripe]->lkey};
    const IbRemote& r = p.remote[stripe];
    if (!postWrite(x, peer, kind, stripe, &sge, false, ibImm(j, s), r.ring + uint64_t(j) * shape.stride, r.ringRkey,
                   false))
      break;
    ++p.shipNext;
    moved = true;
  }
  return moved;
}

// Credits and error words to the peer, the peer's error words to the kernels.
bool control(Proxy& x, int peer, int kind) {
  IbLink& p = x.c->links[size_t(peer)][kind];
  const IbControlLayout& l = x.layout[kind];
  bool moved = false;
  uint32_t slot = 0;
  uint64_t credit = 0;
  const uint64_t* credits = ibWord<uint64_t>(p.control, l.recvCredits);
  while (!p.broken && p.landing.drained(credits, &slot, &credit)) {
    const uint32_t stripe = slot % p.stripes;
    if (p.sendq[stripe].full()) break;
    ibv_sge sge{uint64_t(&credit), sizeof(credit), 0};  // inline: copied at the post
    const IbRemote& r = p.remote[stripe];
    if (!postWrite(x, peer, kind, stripe, &sge, true, -1, r.control + l.sendCredits + 8 * uint64_t(slot),
                   r.controlRkey, false))
      break;
    p.landing.creditSent();
    moved = true;
  }
  for (int side = 0; side < 2 && !p.broken; ++side) {  // 0: this rank's send side, 1: its receive side
    int e = slotLoadError(ibWord<int>(p.control, side == 0 ? l.sendPeerError : l.recvPeerError));
    if (e == 0 || (p.forwarded & (1 << side)) || p.sendq[0].full()) continue;
    ibv_sge sge{uint64_t(&e), sizeof(e), 0};
    const uint64_t to = side == 0 ? l.recvErrorIn : l.sendErrorIn;  // the peer's other side
    if (postWrite(x, peer, kind, 0, &sge, true, -1, p.remote[0].control + to, p.remote[0].controlRkey, false))
      p.forwarded |= 1 << side;
    moved = true;
  }
  for (int side = 0; side < 2; ++side) {
    const int e = slotLoadError(ibWord<int>(p.control, side == 0 ? l.sendErrorIn : l.recvErrorIn));
    if (e != 0) slotRaiseError(ibWord<int>(p.control, side == 0 ? l.sendError : l.recvError), e);
  }
  return moved;
}

// An empty write on every stripe each kHeartbeat; `force`: signalled, so that the queue can drain.
void heartbeat(Proxy& x, int peer, int kind, bool force) {
  IbLink& p = x.c->links[size_t(peer)][kind];
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - p.lastBeat < kHeartbeat) return;
  p.lastBeat = now;
  for (uint32_t s = 0; s < p.stripes && !p.broken; ++s)
    if (!p.sendq[s].full() && (!force || !p.sendq[s].tailSignalled()))
      postWrite(x, peer, kind, s, nullptr, false, -1, p.remote[s].control, p.remote[s].controlRkey, force);
}

bool drainedAll(const Proxy& x) {
  for (int peer = 0; peer < x.c->nranks; ++peer) {
    if (peer == x.c->rank) continue;
    for (int kind = 0; kind < kIbLinkKinds; ++kind) {
      const IbLink& p = x.c->links[size_t(peer)][kind];
      if (!linkReady(x.c, peer, kind) || p.broken) continue;
      uint32_t slot;
      uint64_t credit;
      if (p.landing.drained(ibWord<uint64_t>(p.control, x.layout[kind].recvCredits), &slot, &credit)) return false;
      for (uint32_t s = 0; s < p.stripes; ++s)
        if (!p.sendq[s].idle()) return false;
    }
  }
  return true;
}

}  // namespace

bool ibProgress(IbComm* c, bool stopping, bool hostOnly) {
  thread_local Proxy x{nullptr, {IbControlLayout(0), IbControlLayout(0)}, {}};
  x.c = c;
  for (int kind = 0; kind < kIbLinkKinds; ++kind) x.layout[kind] = IbControlLayout(c->shape[kind].nslots);
  bool moved = false;
  for (int peer = 0; peer < c->nranks; ++peer) {
    if (peer == c->rank) continue;
    for (int kind = hostOnly ? int(kIbHostLink) : 0; kind < kIbLinkKinds; ++kind) {
      if (!linkReady(c, peer, kind) || c->links[size_t(peer)][kind].broken) continue;
      moved |= poll(x, peer, kind);
      moved |= ship(x, peer, kind);
      moved |= control(x, peer, kind);
      heartbeat(x, peer, kind, stopping);
    }
  }
  return moved;
}

void ibDrain(IbComm* c) {
  int saved = -1;  // the flush acts on the current device: the communicator's, the caller's restored
  const bool flush = c->gpuDirect && c->needFlush && cudaGetDevice(&saved) == cudaSuccess && saved != c->device;
  if (flush) cudaSetDevice(c->device);
  const auto until = std::chrono::steady_clock::now() + kDrainLimit;
  Proxy x{c, {IbControlLayout(c->shape[kIbDeviceLink].nslots), IbControlLayout(c->shape[kIbHostLink].nslots)}, {}};
  while (ibProgress(c, true, false), !drainedAll(x) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  if (flush) cudaSetDevice(saved);
}

}  // namespace sz
