// The proxied slot wires (src/proto/slot_proxy.h) over the tcp and nccl wires.
#include "src/proto/slot_proxy.h"

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "kernels/cuda_check.h"
#include "base/bootstrap.h"
#include "base/checks.h"
#include "transport/slot_words.h"

namespace sz {
namespace {

// Control messages between the proxies of a pair, in order on their own (tcp) connection.
struct Ctrl {
  uint32_t kind;  // kCredit or kError
  int32_t code;   // kError: the error; its direction in `step` (0: for the receive side, 1: for the send side)
  uint64_t step;  // kCredit: the step the receiver drained
};
constexpr uint32_t kCredit = 1, kError = 2;

// One channel end: its ring (device memory when the message wire moves device memory, else
// pinned host memory), and in pinned host memory its credit words, error words and signals.
struct End {
  uint8_t* ring = nullptr;
  uint64_t* credits = nullptr;
  int* error = nullptr;      // the kernels' local error word
  int* peerError = nullptr;  // what the kernels want the peer to know
  SlotSignal* signals = nullptr;
};

struct Peer {
  End send, recv;
  unsigned long long* linkClock = nullptr;  // device memory: the kernels' (unused) link clock
  uint64_t shipNext = 0, landPosted = 0, landNext = 0, creditNext = 0;
  std::deque<szWireRequest*> sends;  // shipped slots, in step order
  std::deque<szWireRequest*> lands;  // posted receives of steps landNext, landNext + 1, ...
  struct CtrlSend {
    Ctrl msg;  // the buffer, alive (deque elements stay put) until the request completes
    szWireRequest* request;
  };
  std::deque<CtrlSend> ctrlSends;
  Ctrl ctrlIn{};
  szWireRequest* ctrlRecv = nullptr;
  int sentErrors = 0;  // bit 0: the send side's peer error was forwarded, bit 1: the receive side's
  bool broken = false;
};

struct ProxyComm {
  const szWire* wire = nullptr;  // moves the slots
  const szWire* ctrlWire = nullptr;
  void* data = nullptr;  // slots (header and payload, one message each)
  void* ctrl = nullptr;  // credits and errors
  int rank = 0, nranks = 0;
  uint32_t nslots = 0;
  uint64_t stride = 0, sliceBytes = 0;
  std::vector<Peer> peers;
  std::atomic<bool> stop{false};
  std::thread thread;
};

// The peer's wire failed: every kernel waiting on it stops.
void breakPeer(Peer& p) {
  p.broken = true;
  slotRaiseError(p.send.error, szRemoteError);
  slotRaiseError(p.recv.error, szRemoteError);
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

// One pass over one peer; true if anything moved.
bool progressPeer(ProxyComm* c, int peer, Peer& p) {
  const szWire* w = c->wire;
  bool moved = false, ok = true;
  // Ship: each published send slot, header and payload as one message, in step order (the
  // slot is not written again before the peer's credit for it, which follows the landing).
  for (;;) {
    const uint64_t s = p.shipNext;
    const uint32_t j = slotOf(s, c->nslots);
    const SlotSignal& sig = p.send.signals[j];
    if (slotLoadAcquire(&sig.ready) != readyValue(s)) break;
    const uint64_t bytes = __atomic_load_n(&sig.bytes, __ATOMIC_RELAXED);
    if (bytes > c->stride - kSlotHeaderBytes) {  // not what a kernel writes
      breakPeer(p);
      return true;
    }
    szWireRequest* r = nullptr;
    if (w->isend(c->data, peer, p.send.ring + uint64_t(j) * c->stride, kSlotHeaderBytes + bytes, nullptr, &r) !=
        szSuccess) {
      breakPeer(p);
      return true;
    }
    p.sends.push_back(r);
    ++p.shipNext;
    moved = true;
  }
  // Land: post the receive of each next step whose slot the kernels returned; publish them to
  // the kernels in step order as they complete (the signal is written after the bytes landed).
  while (p.landPosted - p.landNext < c->nslots &&
         slotFree(slotLoadAcquire(&p.recv.credits[slotOf(p.landPosted, c->nslots)]), p.landPosted)) {
    szWireRequest* r = nullptr;
    uint8_t* slot = p.recv.ring + uint64_t(slotOf(p.landPosted, c->nslots)) * c->stride;
    if (w->irecv(c->data, peer, slot, c->stride, nullptr, &r) != szSuccess) {
      breakPeer(p);
      return true;
    }
    p.lands.push_back(r);
    ++p.landPosted;
    moved = true;
  }
  size_t got = 0;
  while (!p.lands.empty() && done(w, p.lands.front(), &ok, &got)) {
    if (!ok || got < kSlotHeaderBytes) {  // a failed wire, or a message no proxy sends
      breakPeer(p);
      return true;
    }
    p.lands.pop_front();
    slotStoreRelease(&p.recv.signals[slotOf(p.landNext, c->nslots)].ready, readyValue(p.landNext));
    ++p.landNext;
    moved = true;
  }
  // Credits the kernels gave back, and error words, to the peer's proxy.
  const szWire* cw = c->ctrlWire;
  auto sendCtrl = [&](uint32_t kind, int code, uint64_t step) {
    p.ctrlSends.push_back({Ctrl{kind, code, step}, nullptr});
    return cw->isend(c->ctrl, peer, &p.ctrlSends.back().msg, sizeof(Ctrl), nullptr, &p.ctrlSends.back().request) ==
           szSuccess;
  };
  while (p.creditNext < p.landNext &&
         slotLoadAcquire(&p.recv.credits[slotOf(p.creditNext, c->nslots)]) >= creditAfter(p.creditNext, c->nslots)) {
    if (!sendCtrl(kCredit, 0, p.creditNext)) {
      breakPeer(p);
      return true;
    }
    ++p.creditNext;
    moved = true;
  }
  for (int side = 0; side < 2; ++side) {  // 0: this rank's send side, 1: its receive side
    int e = slotLoadError(side == 0 ? p.send.peerError : p.recv.peerError);
    if (e == 0 || (p.sentErrors & (1 << side))) continue;
    p.sentErrors |= 1 << side;
    if (!sendCtrl(kError, e, side == 0 ? 0 : 1)) breakPeer(p);
    moved = true;
  }
  // Control messages from the peer.
  if (p.ctrlRecv == nullptr && cw->irecv(c->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), nullptr, &p.ctrlRecv) != szSuccess) {
    breakPeer(p);
    return true;
  }
  while (done(cw, p.ctrlRecv, &ok)) {
    if (!ok) {
      breakPeer(p);
      return true;
    }
    if (p.ctrlIn.kind == kCredit) {
      slotStoreRelease(&p.send.credits[slotOf(p.ctrlIn.step, c->nslots)], creditAfter(p.ctrlIn.step, c->nslots));
    } else if (p.ctrlIn.kind == kError) {
      slotRaiseError(p.ctrlIn.step == 0 ? p.recv.error : p.send.error, p.ctrlIn.code);
    }
    moved = true;
    if (cw->irecv(c->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), nullptr, &p.ctrlRecv) != szSuccess) {
      breakPeer(p);
      return true;
    }
  }
  // Finished sends, in order (their buffers: slots, held until the peer's credit, and control
  // messages, held here).
  while (!p.sends.empty() && done(w, p.sends.front(), &ok)) {
    p.sends.pop_front();
    moved = true;
  }
  while (ok && !p.ctrlSends.empty() && done(cw, p.ctrlSends.front().request, &ok)) {
    p.ctrlSends.pop_front();
    moved = true;
  }
  if (!ok) breakPeer(p);
  return moved;
}

void proxyLoop(ProxyComm* c, int device) {
  cudaSetDevice(device);  // the message wire may launch work (nccl)
  while (!c->stop.load(std::memory_order_relaxed)) {
    bool moved = false;
    for (int peer = 0; peer < c->nranks; ++peer)
      if (peer != c->rank && !c->peers[size_t(peer)].broken) moved |= progressPeer(c, peer, c->peers[size_t(peer)]);
    if (!moved) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

szResult_t pinned(size_t bytes, void** p) {
  CUDACHECK(cudaHostAlloc(p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(*p, 0, bytes);
  return szSuccess;
}

// The words of an end: nslots credits, two error words (apart, 64 bytes each), nslots signals.
size_t wordBytes(uint32_t nslots) { return size_t(nslots) * (8 + sizeof(SlotSignal)) + 256; }

szResult_t makeEnd(ProxyComm* c, End* e) {
  const size_t ringBytes = c->stride * c->nslots;
  if (c->wire->deviceMemory) {
    CUDACHECK(cudaMalloc(reinterpret_cast<void**>(&e->ring), ringBytes));
    CUDACHECK(cudaMemset(e->ring, 0, ringBytes));
  } else {
    SZCHECK(pinned(ringBytes, reinterpret_cast<void**>(&e->ring)));
  }
  SZCHECK(pinned(wordBytes(c->nslots), reinterpret_cast<void**>(&e->credits)));
  for (uint32_t j = 0; j < c->nslots; ++j) e->credits[j] = initialCredit(j);
  e->error = reinterpret_cast<int*>(e->credits + c->nslots);
  e->peerError = e->error + 16;
  e->signals = reinterpret_cast<SlotSignal*>(e->error + 64);
  return szSuccess;
}

void freeEnd(const ProxyComm* c, End& e) {
  if (e.ring) c->wire->deviceMemory ? cudaFree(e.ring) : cudaFreeHost(e.ring);
  if (e.credits) cudaFreeHost(e.credits);
}

szResult_t proxyClose(void* wireComm) {
  ProxyComm* c = static_cast<ProxyComm*>(wireComm);
  if (c == nullptr) return szSuccess;
  c->stop = true;
  if (c->thread.joinable()) c->thread.join();
  // Requests may still be posted (the next steps' receives): drop them with the connections.
  if (c->data) c->wire->abort(c->data);
  if (c->ctrl) c->ctrlWire->abort(c->ctrl);
  for (Peer& p : c->peers) {
    freeEnd(c, p.send);
    freeEnd(c, p.recv);
    if (p.linkClock) cudaFree(p.linkClock);
  }
  cudaGetLastError();
  delete c;
  return szSuccess;
}

szResult_t proxyConnect(const char* wireName, szBootstrap* b, const szSlotWireConfig& config, void** wireComm) {
  ProxyComm* c = new ProxyComm();
  c->wire = szFindWire(wireName);
  c->ctrlWire = szFindWire("tcp");
  c->rank = szBootstrapRank(b);
  c->nranks = szBootstrapNranks(b);
  c->nslots = config.nslots;
  c->sliceBytes = config.sliceBytes;
  c->stride = slotStride(config.sliceBytes);
  c->peers.resize(size_t(c->nranks));
  szResult_t res = c->wire ? szSuccess : szSetError(szInvalidArgument, "slot proxy: no wire '%s' in this build", wireName);
  int device = 0;
  if (res == szSuccess && cudaGetDevice(&device) != cudaSuccess)
    res = szSetError(szUnhandledCudaError, "%s slot wire: no current CUDA device", wireName);
  // Every posted receive waits for the peer's next operation, however long that takes; a closed
  // or reset connection still fails it at once (the kernels time out on their own).
  szWireConfig wc{szBootstrapTimeoutMs(b), 0, config.ncclComm, 1, config.linkGBps};
  for (int peer = 0; peer < c->nranks && res == szSuccess; ++peer) {
    if (peer == c->rank) continue;
    Peer& p = c->peers[size_t(peer)];
    res = makeEnd(c, &p.send);
    if (res == szSuccess) res = makeEnd(c, &p.recv);
    if (res == szSuccess && cudaMalloc(&p.linkClock, 256) == cudaSuccess) cudaMemset(p.linkClock, 0, 256);
    else if (res == szSuccess) res = szSetError(szUnhandledCudaError, "%s slot wire: cudaMalloc failed", wireName);
  }
  if (res == szSuccess) res = c->wire->connect(b, wc, &c->data);
  wc.ncclComm = nullptr;
  wc.linkGBps = 0;  // the control messages are not the link under test
  if (res == szSuccess) res = c->ctrlWire->connect(b, wc, &c->ctrl);
  if (res == szSuccess && cudaDeviceSynchronize() != cudaSuccess)
    res = szSetError(szUnhandledCudaError, "%s slot wire: device synchronization at connect failed", wireName);
  if (res != szSuccess) {
    proxyClose(c);
    return res;
  }
  c->thread = std::thread(proxyLoop, c, device);
  *wireComm = c;
  return szSuccess;
}

template <class T>
T* onDevice(T* host) {
  void* d = nullptr;
  return cudaHostGetDevicePointer(&d, host, 0) == cudaSuccess ? static_cast<T*>(d) : nullptr;
}

szResult_t proxyChannel(void* wireComm, int peer, int send, SlotChannel* ch) {
  ProxyComm* c = static_cast<ProxyComm*>(wireComm);
  if (peer < 0 || peer >= c->nranks || peer == c->rank)
    return szSetError(szInvalidArgument, "%s slot wire: no channel with rank %d", c->wire->name, peer);
  Peer& p = c->peers[size_t(peer)];
  const End& e = send ? p.send : p.recv;
  *ch = SlotChannel{};
  ch->ring = c->wire->deviceMemory ? e.ring : onDevice(e.ring);
  ch->signals = onDevice(e.signals);
  ch->credits = onDevice(e.credits);
  ch->localError = onDevice(e.error);
  ch->peerError = onDevice(e.peerError);
  ch->linkClock = p.linkClock;
  ch->stride = c->stride;
  ch->sliceBytes = c->sliceBytes;
  ch->nslots = c->nslots;
  if (!ch->ring || !ch->signals || !ch->credits || !ch->localError || !ch->peerError)
    return szSetError(szUnhandledCudaError, "%s slot wire: pinned memory has no device address", c->wire->name);
  return szSuccess;
}

szResult_t connectTcp(szBootstrap* b, const szSlotWireConfig& config, void** wireComm) {
  return proxyConnect("tcp", b, config, wireComm);
}
szResult_t connectNccl(szBootstrap* b, const szSlotWireConfig& config, void** wireComm) {
  return proxyConnect("nccl", b, config, wireComm);
}

}  // namespace

const szSlotWire kSlotWireTcpProxy = {"tcp", 256 << 10, 0, connectTcp, proxyChannel, proxyClose};
const szSlotWire kSlotWireNcclProxy = {"nccl", 1 << 20, 32, connectNccl, proxyChannel, proxyClose};

}  // namespace sz
