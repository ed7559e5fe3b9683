// The slot proxy (src/proto/slot_proxy.h).
#include "src/proto/slot_proxy.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "base/bootstrap.h"
#include "base/checks.h"
#include "src/proto/slot_seal.h"
#include "transport/slot_words.h"

namespace sz {
namespace {

// Control messages between the proxies of a pair, in order on their own (tcp) connection.
struct Ctrl {
  uint32_t kind;     // kCredit or kError
  int32_t code;      // kError: the error; its direction in `step` (0: for the receive side, 1: for the send side)
  uint64_t step;     // kCredit: the receiver drained every step up to this one
  uint32_t channel;  // the channel it concerns
  uint32_t pad;
};
constexpr uint32_t kCredit = 1, kError = 2;

// Where a receive's raw slices may land: its steps from `first`, each slice's place in the
// caller's buffer (data null: in the slot) and size (SlotProxy::landInto).
struct Landing {
  uint64_t first;
  std::vector<SlotLanding> slices;
};

// A posted receive and where its payload goes: the caller's buffer, or null (the slot).
struct Land {
  szWireRequest* request;
  uint8_t* in;
};

// One channel with one peer.
struct Chan {
  bool served = false;  // the channel serves this pair (SlotProxyChannel::peers)
  SlotEnd send, recv;
  uint64_t shipNext = 0, landPosted = 0, landNext = 0, creditNext = 0;
  uint64_t creditsIn = 0;  // the first shipped step whose credit has not come back
  uint64_t creditsHeld = 0;  // every step below this one credited by the peer (applied once its send completed)
  std::deque<szWireRequest*> sends;  // shipped slots, in step order
  std::deque<Land> lands;            // posted receives of steps landNext, landNext + 1, ...
  std::deque<Landing> landings;      // receives' places for steps not yet posted, in step order
  int sentErrors = 0;  // bit 0: the send side's peer error was forwarded, bit 1: the receive side's
  int ctrlPending = 0;  // this channel's control messages posted and not yet sent
  bool corrupt = false;  // a landed slot failed its seal: nothing more lands on this channel
  bool ready = false;    // its ends are allocated (at create, or at the pair's first operations)
  int pending[2] = {0, 0};  // errors for its receive side (0) and send side (1) before it was ready
};

struct Peer {
  std::vector<Chan> chans;
  struct CtrlSend {
    Ctrl msg;  // the buffer, alive (deque elements stay put) until the request completes
    szWireRequest* request;
  };
  std::deque<CtrlSend> ctrlSends;
  Ctrl ctrlIn{};
  szWireRequest* ctrlRecv = nullptr;
  std::atomic<bool> broken{false};
  // A data connection failed: the control connection is read a while longer (a peer that closes
  // after its last credits left may have its data connections' end overtake them), then the peer
  // breaks.
  bool dataFailed = false;
  std::chrono::steady_clock::time_point dataFailedAt;
};

struct ChanShape {
  SlotProxyChannel cfg;
  uint64_t stride;
  void* data = nullptr;  // the data wire's connections
};

}  // namespace

struct SlotProxy::State {
  struct Driven {
    const szWire* wire;
    void* comm;
  };
  std::vector<Driven> driven;  // slot-area wires whose own proxies the passes drive
  const szWire* ctrlWire = nullptr;
  void* ctrl = nullptr;
  int rank = 0, nranks = 0;
  std::vector<ChanShape> chans;
  std::vector<Peer> peers;
  std::mutex mu;  // one pass at a time
  uint64_t fromCallers = 0, intoCallers = 0;  // payload bytes shipped from, and landed in, callers' buffers
  std::atomic<bool> stop{false};
  std::thread thread;
};

namespace {

using State = SlotProxy::State;

// An error for one side of `c` (0: its receive side, 1: its send side); kept for when its ends
// exist if they do not yet. The first error stays.
void raiseChanError(Chan& c, int side, int code) {
  if (c.ready) slotRaiseError(side == 0 ? c.recv.error : c.send.error, code);
  else if (c.pending[side] == 0) c.pending[side] = code;
}

// Takes `send` and `recv` as the ends of `c` and raises the errors that came before them.
void installEnds(Chan* c, const SlotEnd& send, const SlotEnd& recv) {
  c->send = send;
  c->recv = recv;
  c->ready = true;
  for (int side = 0; side < 2; ++side)
    if (c->pending[side] != 0) raiseChanError(*c, side, c->pending[side]);
}

// Where step `st`'s payload lands: a registered place in the caller's buffer, or null (the slot).
// Drops the places of steps already posted.
SlotLanding landingOf(Chan& c, uint64_t st) {
  while (!c.landings.empty() && c.landings.front().first + c.landings.front().slices.size() <= st)
    c.landings.pop_front();
  if (c.landings.empty() || st < c.landings.front().first) return SlotLanding{nullptr, 0};
  return c.landings.front().slices[size_t(st - c.landings.front().first)];
}

// The peer's wire failed: every sender and receiver waiting on it stops (and any that starts).
void breakPeer(State* s, int peer, Peer& p) {
  p.broken = true;
  for (size_t ci = 0; ci < s->chans.size(); ++ci) {  // nothing the wire holds moves any more
    const ChanShape& shape = s->chans[ci];
    if (p.chans[ci].served && shape.data && shape.cfg.wire->failPeer)
      shape.cfg.wire->failPeer(shape.data, peer, szRemoteError, "the slot proxy broke the pair");
  }
  for (Chan& c : p.chans) {
    if (!c.served) continue;  // no words: the pair does not use this channel
    raiseChanError(c, 0, szRemoteError);
    raiseChanError(c, 1, szRemoteError);
  }
}

// Advances `r` (null: nothing posted); true once it completed (*bytes: the message size), *ok
// false if it failed.
bool done(const szWire* w, szWireRequest*& r, bool* ok, size_t* bytes = nullptr) {
  if (r == nullptr) return false;
  int finished = 0;
  size_t got = 0;
  if (w->test(r, &finished, &got) != szSuccess) {
    r = nullptr;
    *ok = false;
    return true;
  }
  if (finished) r = nullptr;
  if (bytes) *bytes = got;
  return finished != 0;
}

// Credits the peer gave for steps whose send request has completed (nothing reads their payload).
void applyCredits(Chan& c, uint32_t nslots) {
  const uint64_t through = std::min<uint64_t>(c.creditsHeld, c.shipNext - c.sends.size());
  for (; c.creditsIn < through; ++c.creditsIn) {
    uint64_t* credit = &c.send.credits[slotOf(c.creditsIn, nslots)];
    if (slotLoadAcquire(credit) < creditAfter(c.creditsIn, nslots)) slotStoreRelease(credit, creditAfter(c.creditsIn, nslots));
  }
}

bool sendCtrl(State* s, int peer, Peer& p, uint32_t kind, int code, uint64_t step, uint32_t chan) {
  ++p.chans[chan].ctrlPending;
  p.ctrlSends.push_back({Ctrl{kind, code, step, chan, 0}, nullptr});
  return szWireIsend(s->ctrlWire, s->ctrl, peer, &p.ctrlSends.back().msg, sizeof(Ctrl), &p.ctrlSends.back().request) ==
         szSuccess;
}

// One pass over one channel with one peer; false if the peer broke. *moved: anything moved.
bool progressChan(State* s, int peer, Peer& p, uint32_t ci, bool* moved) {
  const ChanShape& shape = s->chans[ci];
  Chan& c = p.chans[ci];
  const szWire* w = shape.cfg.wire;
  const uint32_t nslots = shape.cfg.nslots;
  bool ok = true;
  // Ship: each published send slot, header and payload as one message, in step order (the
  // slot is not written again before the peer's credit for it, which follows the landing).
  for (;;) {
    const uint64_t st = c.shipNext;
    const uint32_t j = slotOf(st, nslots);
    const SlotSignal& sig = c.send.signals[j];
    if (slotLoadAcquire(&sig.ready) != readyValue(st)) break;
    const uint64_t bytes = __atomic_load_n(&sig.bytes, __ATOMIC_RELAXED);
    if (bytes > shape.stride - kSlotHeaderBytes) return false;  // not what a sender writes
    if (shape.cfg.macKey) {  // the kernel's slot, sealed in place on its way out
      uint8_t* slot = c.send.ring + uint64_t(j) * shape.stride;
      SlotHeader* h = reinterpret_cast<SlotHeader*>(slot);
      if (st >= kSealMaxStep || h->step != st || h->bytes != bytes) return false;  // the nonce is the step
      h->flags |= kSlotMac | (shape.cfg.encrypt ? kSlotSealed : 0);
      sealSlot(shape.cfg.macKey, h, slot + kSlotHeaderBytes, s->rank, peer, ci);
    }
    szWireRequest* r = nullptr;
    uint8_t* slot = c.send.ring + uint64_t(j) * shape.stride;
    // A host sender's raw slice may still lie in its caller's buffer: header and payload travel
    // as one message of two pieces.
    uint8_t* payload = c.send.payloads != nullptr ? __atomic_load_n(&c.send.payloads[j].data, __ATOMIC_RELAXED) : nullptr;
    const szWirePiece pieces[2] = {{slot, payload ? kSlotHeaderBytes : kSlotHeaderBytes + bytes}, {payload, bytes}};
    if (w->isend(shape.data, peer, pieces, payload ? 2 : 1, &r) != szSuccess) return false;
    if (payload) s->fromCallers += bytes;
    c.sends.push_back(r);
    ++c.shipNext;
    *moved = true;
  }
  // Land: post the receive of each next step whose slot the receiver returned; publish them in
  // step order as they complete (the signal is written after the bytes landed).
  while (!c.corrupt && c.landPosted - c.landNext < nslots &&
         slotFree(slotLoadAcquire(&c.recv.credits[slotOf(c.landPosted, nslots)]), c.landPosted)) {
    szWireRequest* r = nullptr;
    uint8_t* slot = c.recv.ring + uint64_t(slotOf(c.landPosted, nslots)) * shape.stride;
    // A receive that registered its place (landInto): the header in the slot, the payload in the
    // caller's buffer, at most the slice's raw size (a sender's frame is never larger).
    const SlotLanding to = c.recv.payloads != nullptr ? landingOf(c, c.landPosted) : SlotLanding{nullptr, 0};
    const szWirePiece pieces[2] = {{slot, to.data ? kSlotHeaderBytes : shape.stride}, {to.data, to.bytes}};
    if (w->irecv(shape.data, peer, pieces, to.data ? 2 : 1, &r) != szSuccess) return false;
    c.lands.push_back(Land{r, to.data});
    ++c.landPosted;
    *moved = true;
  }
  size_t got = 0;
  while (!c.corrupt && !c.lands.empty() && done(w, c.lands.front().request, &ok, &got)) {
    if (!ok || got < kSlotHeaderBytes) return false;  // a failed wire, or a message no proxy sends
    uint8_t* landedIn = c.lands.front().in;
    c.lands.pop_front();
    if (landedIn) s->intoCallers += got - kSlotHeaderBytes;
    if (shape.cfg.macKey) {  // opened before the receiver may see it; a changed slot stops the channel
      uint8_t* slot = c.recv.ring + uint64_t(slotOf(c.landNext, nslots)) * shape.stride;
      SlotHeader h;
      memcpy(&h, slot, sizeof(h));
      if (h.bytes != got - kSlotHeaderBytes || h.step != c.landNext || !(h.flags & kSlotMac) ||
          bool(h.flags & kSlotSealed) != shape.cfg.encrypt ||
          !openSlot(shape.cfg.macKey, h, slot + kSlotHeaderBytes, peer, s->rank, ci)) {
        slotRaiseError(c.recv.error, szCorruptFrame);
        slotRaiseError(c.recv.peerError, szRemoteError);
        c.corrupt = true;  // its receiver stops; the posted receives go with the connection
        *moved = true;
        break;
      }
    }
    // What landed, for a receiver to hold the header's size against (host channels do), and where.
    if (c.recv.payloads != nullptr) __atomic_store_n(&c.recv.payloads[slotOf(c.landNext, nslots)].data, landedIn, __ATOMIC_RELAXED);
    SlotSignal& sig = c.recv.signals[slotOf(c.landNext, nslots)];
    __atomic_store_n(&sig.bytes, uint64_t(got - kSlotHeaderBytes), __ATOMIC_RELAXED);
    slotStoreRelease(&sig.ready, readyValue(c.landNext));
    ++c.landNext;
    *moved = true;
  }
  // Credits the receiver gave back, and error words, to the peer's proxy.
  // One message for every step drained since the last (a credit covers the steps before it).
  uint64_t drained = c.creditNext;
  while (drained < c.landNext && slotLoadAcquire(&c.recv.credits[slotOf(drained, nslots)]) >= creditAfter(drained, nslots))
    ++drained;
  if (drained > c.creditNext) {
    if (!sendCtrl(s, peer, p, kCredit, 0, drained - 1, ci)) return false;
    c.creditNext = drained;
    *moved = true;
  }
  for (int side = 0; side < 2; ++side) {  // 0: this rank's send side, 1: its receive side
    int e = slotLoadError(side == 0 ? c.send.peerError : c.recv.peerError);
    if (e == 0 || (c.sentErrors & (1 << side))) continue;
    c.sentErrors |= 1 << side;
    if (!sendCtrl(s, peer, p, kError, e, side == 0 ? 0 : 1, ci)) return false;
    *moved = true;
  }
  // Finished sends, in order (their buffers: slots, held until the peer's credit).
  while (!c.sends.empty() && done(w, c.sends.front(), &ok)) {
    c.sends.pop_front();
    *moved = true;
  }
  applyCredits(c, nslots);
  return ok;
}

// Control messages from the peer: credits into this side's senders' words, errors into its error
// words. False if the control connection failed or carried what no proxy sends (a credit for a
// step not shipped). `hostOnly`: only host channels' messages count as movement.
bool receiveCtrl(State* s, int peer, Peer& p, bool hostOnly, bool* moved) {
  const szWire* cw = s->ctrlWire;
  bool ok = true;
  if (p.ctrlRecv == nullptr && szWireIrecv(cw, s->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), &p.ctrlRecv) != szSuccess)
    return false;
  size_t got = 0;
  while (done(cw, p.ctrlRecv, &ok, &got)) {
    if (!ok || got != sizeof(Ctrl) || p.ctrlIn.channel >= s->chans.size()) return false;
    Chan& c = p.chans[p.ctrlIn.channel];
    if (!c.served) return false;  // no proxy sends for a channel the pair does not use
    const uint32_t nslots = s->chans[p.ctrlIn.channel].cfg.nslots;
    if (p.ctrlIn.kind == kCredit) {  // every shipped step up to `step` drained
      if (!c.ready || p.ctrlIn.step >= c.shipNext || p.ctrlIn.step < c.creditsHeld)
        return false;  // a credit for nothing shipped, or again
      c.creditsHeld = p.ctrlIn.step + 1;
      applyCredits(c, nslots);
    } else if (p.ctrlIn.kind == kError) {
      raiseChanError(c, p.ctrlIn.step == 0 ? 0 : 1, p.ctrlIn.code);
    } else {
      return false;
    }
    if (!hostOnly || s->chans[p.ctrlIn.channel].cfg.memory == SlotMemory::kHost) *moved = true;
    if (szWireIrecv(cw, s->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), &p.ctrlRecv) != szSuccess) return false;
  }
  return true;
}

// One pass over one peer; false if it broke. Control messages first: a peer that found a
// mismatch sends its verdict, then may close its data connections under this side's sends.
// `hostOnly`: host channels only (a CPU thread waiting on one: the device channels' wires, NCCL's,
// are driven by the proxy's thread on the communicator's device).
bool progressPeer(State* s, int peer, Peer& p, bool hostOnly, bool* moved) {
  if (!receiveCtrl(s, peer, p, hostOnly, moved)) return false;
  for (uint32_t ci = 0; ci < s->chans.size() && !p.dataFailed; ++ci) {
    if (!p.chans[ci].ready || (hostOnly && s->chans[ci].cfg.memory != SlotMemory::kHost)) continue;
    if (!progressChan(s, peer, p, ci, moved)) {
      p.dataFailed = true;
      p.dataFailedAt = std::chrono::steady_clock::now();
    }
  }
  if (p.dataFailed && std::chrono::steady_clock::now() - p.dataFailedAt > std::chrono::seconds(1)) return false;
  bool ok = true;
  while (!p.ctrlSends.empty() && done(s->ctrlWire, p.ctrlSends.front().request, &ok)) {
    if (!ok) return false;
    const uint32_t ci = p.ctrlSends.front().msg.channel;
    --p.chans[ci].ctrlPending;
    p.ctrlSends.pop_front();
    if (!hostOnly || s->chans[ci].cfg.memory == SlotMemory::kHost) *moved = true;
  }
  return ok;
}

bool pass(State* s, bool hostOnly) {
  bool moved = false;
  for (int peer = 0; peer < s->nranks && s->ctrl != nullptr; ++peer) {  // no control wire: no channel in use
    Peer& p = s->peers[size_t(peer)];
    if (peer == s->rank || p.broken) continue;
    if (!progressPeer(s, peer, p, hostOnly, &moved)) {
      breakPeer(s, peer, p);
      moved = true;
    }
  }
  for (const State::Driven& d : s->driven) moved |= d.wire->progress(d.comm, hostOnly);
  return moved;
}

constexpr int kSpinPasses = 1024;  // idle passes of the proxy's thread before it sleeps between passes

void proxyLoop(State* s, int device) {
#if SZ_HAVE_CUDA
  if (device >= 0) cudaSetDevice(device);  // the message wire may launch work (nccl)
#else
  (void)device;
#endif
  int idle = 0;
  while (!s->stop.load(std::memory_order_relaxed)) {
    bool moved;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      moved = pass(s, false);
    }
    idle = moved ? 0 : idle + 1;  // spins a while after the last move, as NCCL's proxy, then naps
    if (idle > kSpinPasses) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

SlotProxy::~SlotProxy() {
  if (!s_) return;
  s_->stop = true;
  if (s_->thread.joinable()) s_->thread.join();
  // Requests may still be posted (the next steps' receives): drop them with the connections.
  for (ChanShape& c : s_->chans)
    if (c.data) c.cfg.wire->abort(c.data);
  if (s_->ctrl) s_->ctrlWire->abort(s_->ctrl);
  for (Peer& p : s_->peers)
    for (size_t ci = 0; ci < p.chans.size(); ++ci) {
      if (!p.chans[ci].ready) continue;
      freeSlotEnd(s_->chans[ci].cfg.memory, p.chans[ci].send);
      freeSlotEnd(s_->chans[ci].cfg.memory, p.chans[ci].recv);
    }
#if SZ_HAVE_CUDA
  cudaGetLastError();
#endif
}

szResult_t SlotProxy::create(szBootstrap* b, const szWire* control, const std::vector<SlotProxyChannel>& channels,
                             std::unique_ptr<SlotProxy>* out) {
  std::unique_ptr<SlotProxy> proxy(new SlotProxy());
  proxy->s_.reset(new State());
  State* s = proxy->s_.get();
  if (control == nullptr || !szWireMovesMessages(control) || control->deviceMemory)
    return szSetError(szInternalError, "slot proxy: the control wire must move messages in host memory");
  s->ctrlWire = control;
  s->rank = szBootstrapRank(b);
  s->nranks = szBootstrapNranks(b);
  bool needThread = false;
  for (const SlotProxyChannel& c : channels) {
    if (c.wire == nullptr || !szWireMovesMessages(c.wire) || c.sliceBytes == 0 || c.sliceBytes % kSliceAlign != 0 || c.sliceBytes > (uint64_t(1) << 32) ||
        c.nslots == 0 || c.nslots > (1u << 20) || (!c.peers.empty() && c.peers.size() != size_t(s->nranks)))
      return szSetError(szInternalError, "slot proxy: a channel without a message wire, slice size or slots");
    s->chans.push_back(ChanShape{c, slotStride(c.sliceBytes), nullptr});
  }
  s->peers = std::vector<Peer>(size_t(s->nranks));
  for (int peer = 0; peer < s->nranks; ++peer) {
    if (peer == s->rank) continue;
    Peer& p = s->peers[size_t(peer)];
    p.chans.resize(s->chans.size());
    for (size_t ci = 0; ci < s->chans.size(); ++ci) {
      const std::vector<uint8_t>& serves = s->chans[ci].cfg.peers;
      p.chans[ci].served = !s->chans[ci].cfg.unused && (serves.empty() || serves[size_t(peer)] != 0);
      if (!p.chans[ci].served) continue;
      needThread |= s->chans[ci].cfg.memory != SlotMemory::kHost;  // kernels cannot progress the proxy
      if (s->chans[ci].cfg.connectAtInit) {
        const ChanShape& shape = s->chans[ci];
        SlotEnd send, recv;
        SZCHECK(makeSlotEnds(shape.cfg.memory, shape.stride, shape.cfg.nslots, &send, &recv));
        installEnds(&p.chans[ci], send, recv);
      }
    }
  }
  // Every posted receive waits for the peer's next operation, however long that takes; a closed
  // or reset connection still fails it at once (senders and receivers time out on their own).
  bool anyUsed = false;
  for (ChanShape& c : s->chans) {
    if (c.cfg.unused) continue;
    anyUsed = true;
    szWireConfig wc{szBootstrapTimeoutMs(b), 0, c.cfg.ncclComm, 1, c.cfg.linkGBps, 0, 0,
                    c.cfg.peers.empty() ? nullptr : c.cfg.peers.data(), nullptr, 0, 0};
    SZCHECK(c.cfg.wire->connect(b, wc, &c.data));
  }
  szWireConfig wc{szBootstrapTimeoutMs(b), 0, nullptr, 1, 0, 0, 0, nullptr, nullptr, 0, 0};  // the control messages are not the link under test
  if (anyUsed) SZCHECK(s->ctrlWire->connect(b, wc, &s->ctrl));
  int device = -1;
#if SZ_HAVE_CUDA
  if (needThread) {
    if (cudaGetDevice(&device) != cudaSuccess) return szSetError(szUnhandledCudaError, "slot proxy: no current CUDA device");
  }
#endif
  if (needThread) s->thread = std::thread(proxyLoop, s, device);
  *out = std::move(proxy);
  return szSuccess;
}

szResult_t SlotProxy::channel(int chan, int peer, int send, SlotChannel* ch) {
  State* s = s_.get();
  if (chan < 0 || size_t(chan) >= s->chans.size() || peer < 0 || peer >= s->nranks || peer == s->rank)
    return szSetError(szInvalidArgument, "slot proxy: no channel %d with rank %d", chan, peer);
  const ChanShape& shape = s->chans[size_t(chan)];
  const SlotMemory m = shape.cfg.memory;
  std::unique_lock<std::mutex> lock(s->mu);  // the proxy's passes see the ends whole or not at all
  Chan& c = s->peers[size_t(peer)].chans[size_t(chan)];
  if (!c.served) return szSetError(szInvalidArgument, "slot proxy: channel %d does not serve rank %d", chan, peer);
  if (!c.ready) {
    // Allocated (pinned memory: 2 x 66 MiB for a tcp device pair at the defaults) without the
    // lock, so that the proxy's thread keeps serving the other peers meanwhile, and never waits
    // inside the driver's allocator behind another rank's device-wide sync while it holds it.
    lock.unlock();
    SlotEnd sendEnd, recvEnd;
    SZCHECK(makeSlotEnds(shape.cfg.memory, shape.stride, shape.cfg.nslots, &sendEnd, &recvEnd));
    lock.lock();
    if (c.ready) {  // another thread of this rank connected it meanwhile
      freeSlotEnd(shape.cfg.memory, sendEnd);
      freeSlotEnd(shape.cfg.memory, recvEnd);
    } else {
      installEnds(&c, sendEnd, recvEnd);
    }
  }
  const SlotEnd& e = send ? c.send : c.recv;
  *ch = SlotChannel{};
  ch->ring = m == SlotMemory::kDevice ? e.ring : static_cast<uint8_t*>(slotUserAddress(m, e.ring));
  ch->signals = static_cast<SlotSignal*>(slotUserAddress(m, e.signals));
  ch->credits = static_cast<uint64_t*>(slotUserAddress(m, e.credits));
  ch->localError = static_cast<int*>(slotUserAddress(m, e.error));
  ch->peerError = static_cast<int*>(slotUserAddress(m, e.peerError));
  // Payloads in the caller's buffers where the wire can drop a pair's requests (releasePayloads).
  if (shape.cfg.wire->failPeer != nullptr) ch->payloads = e.payloads;
  ch->stride = shape.stride;
  ch->sliceBytes = shape.cfg.sliceBytes;
  ch->nslots = shape.cfg.nslots;
  if (!ch->ring || !ch->signals || !ch->credits || !ch->localError || !ch->peerError)
    return szSetError(szUnhandledCudaError, "slot proxy: pinned memory has no device address");
  return szSuccess;
}

szResult_t SlotProxy::drive(const szWire* wire, void* wireComm) {
  State* s = s_.get();
  if (wire == nullptr || wire->progress == nullptr || wireComm == nullptr)
    return szSetError(szInternalError, "slot proxy: a wire without a proxy of its own to drive");
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->driven.push_back(State::Driven{wire, wireComm});
  }
  if (!s->thread.joinable()) {  // its slots move with nobody waiting on them (credits, heartbeats)
    int device = -1;
#if SZ_HAVE_CUDA
    if (cudaGetDevice(&device) != cudaSuccess) {
      cudaGetLastError();
      device = -1;  // a rank without a GPU
    }
#endif
    s->thread = std::thread(proxyLoop, s, device);
  }
  return szSuccess;
}

uint64_t SlotProxy::slotBytes() {
  std::lock_guard<std::mutex> lock(s_->mu);
  uint64_t bytes = 0;
  for (const Peer& p : s_->peers)
    for (size_t ci = 0; ci < p.chans.size(); ++ci)
      if (p.chans[ci].ready) {
        const ChanShape& shape = s_->chans[ci];
        bytes += 2 * (shape.stride * shape.cfg.nslots + slotEndWordBytes(shape.cfg.nslots));
      }
  return bytes;
}

bool SlotProxy::progress() {
  std::unique_lock<std::mutex> lock(s_->mu, std::try_to_lock);
  return lock.owns_lock() && pass(s_.get(), true);
}

bool SlotProxy::flushed(int chan, int peer, uint64_t steps) {
  std::lock_guard<std::mutex> lock(s_->mu);
  const Peer& p = s_->peers[size_t(peer)];
  if (p.broken) return true;
  const Chan& c = p.chans[size_t(chan)];
  if (!c.ready) return true;
  return c.creditNext >= steps && c.ctrlPending == 0 &&
         (slotLoadError(c.send.peerError) == 0 || (c.sentErrors & 1)) &&
         (slotLoadError(c.recv.peerError) == 0 || (c.sentErrors & 2));
}

void SlotProxy::landInto(int chan, int peer, uint64_t first, std::vector<SlotLanding> slices) {
  std::lock_guard<std::mutex> lock(s_->mu);
  Chan& c = s_->peers[size_t(peer)].chans[size_t(chan)];
  if (!c.ready || slices.empty()) return;
  auto at = std::find_if(c.landings.begin(), c.landings.end(), [first](const Landing& l) { return l.first > first; });
  c.landings.insert(at, Landing{first, std::move(slices)});
}

void SlotProxy::releasePayloads(int chan, int peer, int send, uint64_t first) {
  std::lock_guard<std::mutex> lock(s_->mu);  // no pass is moving anything meanwhile
  Peer& p = s_->peers[size_t(peer)];
  Chan& c = p.chans[size_t(chan)];
  if (p.broken || !c.ready) return;
  const ChanShape& shape = s_->chans[size_t(chan)];
  const uint32_t nslots = shape.cfg.nslots;
  bool inBuffers = false;
  if (send) {  // shipped and not through, or published and not shipped, from a caller's buffer
    const SlotPayload* pl = c.send.payloads;
    for (uint64_t st = c.shipNext - c.sends.size(); pl && st < c.shipNext; ++st)
      inBuffers |= __atomic_load_n(&pl[slotOf(st, nslots)].data, __ATOMIC_RELAXED) != nullptr;
    for (uint64_t st = c.shipNext; pl && slotLoadAcquire(&c.send.signals[slotOf(st, nslots)].ready) == readyValue(st); ++st)
      inBuffers |= __atomic_load_n(&pl[slotOf(st, nslots)].data, __ATOMIC_RELAXED) != nullptr;
  } else {
    for (auto it = c.landings.begin(); it != c.landings.end();)
      it = it->first >= first ? c.landings.erase(it) : it + 1;
    for (const Land& l : c.lands) inBuffers |= l.in != nullptr;
  }
  if (inBuffers) breakPeer(s_.get(), peer, p);  // which fails the pair on every wire that can
}

void SlotProxy::callerBytes(uint64_t* shipped, uint64_t* landed) {
  std::lock_guard<std::mutex> lock(s_->mu);
  *shipped = s_->fromCallers;
  *landed = s_->intoCallers;
}

}  // namespace sz
