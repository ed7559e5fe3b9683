// The proxied slot wire (src/proto/slot_proxy.h) over the tcp wire.
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

namespace sz {
namespace {

// Control messages between the proxies of a pair, in order on their own connection.
struct Ctrl {
  uint32_t kind;  // kCredit or kError
  int32_t code;   // kError: the error; its direction in `step` (0: for the receive side, 1: for the send side)
  uint64_t step;  // kCredit: the step the receiver drained
};
constexpr uint32_t kCredit = 1, kError = 2;

// One channel end in pinned host memory: ring (or nothing), credit words, error words.
struct End {
  uint8_t* ring = nullptr;
  uint64_t* credits = nullptr;
  int* error = nullptr;      // the kernels' local error word
  int* peerError = nullptr;  // what the kernels want the peer to know
};

struct Peer {
  End send, recv;
  unsigned long long* linkClock = nullptr;  // device memory: the kernels' (unused) link clock
  std::vector<SlotHeader> shipHeaders;      // headers in flight, one per slot (ready cleared)
  uint64_t shipNext = 0, landNext = 0, creditNext = 0;
  std::deque<szWireRequest*> sends;         // shipped headers and payloads
  struct CtrlSend {
    Ctrl msg;  // the buffer, alive (deque elements stay put) until the request completes
    szWireRequest* request;
  };
  std::deque<CtrlSend> ctrlSends;
  szWireRequest* landHeader = nullptr;
  szWireRequest* landPayload = nullptr;
  Ctrl ctrlIn{};
  szWireRequest* ctrlRecv = nullptr;
  int sentErrors = 0;  // bit 0: the send side's peer error was forwarded, bit 1: the receive side's
  bool broken = false;
};

struct ProxyComm {
  const szWire* wire = nullptr;
  void* data = nullptr;  // slot headers and payloads
  void* ctrl = nullptr;  // credits and errors
  int rank = 0, nranks = 0;
  uint32_t nslots = 0;
  uint64_t stride = 0, sliceBytes = 0;
  std::vector<Peer> peers;
  std::atomic<bool> stop{false};
  std::thread thread;
};

uint64_t loadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void storeRelease(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
int loadInt(const int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void setError(int* p, int code) {
  int zero = 0;
  __atomic_compare_exchange_n(p, &zero, code, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

// The peer's wire failed: every kernel waiting on it stops.
void breakPeer(Peer& p) {
  p.broken = true;
  setError(p.send.error, szRemoteError);
  setError(p.recv.error, szRemoteError);
}

// Advances `r` (null: nothing posted); true once it completed, *ok false if it failed.
bool done(const szWire* w, szWireRequest*& r, bool* ok) {
  if (r == nullptr) return false;
  int finished = 0;
  if (w->test(r, &finished, nullptr) != szSuccess) {
    r = nullptr;
    *ok = false;
    return true;
  }
  if (finished) r = nullptr;
  return finished != 0;
}

// One pass over one peer; true if anything moved.
bool progressPeer(ProxyComm* c, int peer, Peer& p) {
  const szWire* w = c->wire;
  bool moved = false, ok = true;
  // Ship: the next published send slot, its header (ready cleared) then its payload.
  for (;;) {
    const uint64_t s = p.shipNext;
    const uint32_t j = slotOf(s, c->nslots);
    uint8_t* slot = p.send.ring + uint64_t(j) * c->stride;
    SlotHeader* h = reinterpret_cast<SlotHeader*>(slot);
    if (loadAcquire(&h->ready) != readyValue(s)) break;
    SlotHeader& copy = p.shipHeaders[j];
    memcpy(&copy, h, sizeof(copy));
    copy.ready = 0;
    const uint64_t bytes = copy.bytes <= c->stride - kSlotHeaderBytes ? copy.bytes : 0;
    szWireRequest *r1 = nullptr, *r2 = nullptr;
    if (w->isend(c->data, peer, &copy, sizeof(copy), nullptr, &r1) != szSuccess ||
        w->isend(c->data, peer, slot + kSlotHeaderBytes, bytes, nullptr, &r2) != szSuccess) {
      breakPeer(p);
      return true;
    }
    p.sends.push_back(r1);
    p.sends.push_back(r2);
    ++p.shipNext;
    moved = true;
  }
  // Land: the next step into its receive slot once the kernels returned that slot.
  for (;;) {
    const uint64_t s = p.landNext;
    const uint32_t j = slotOf(s, c->nslots);
    uint8_t* slot = p.recv.ring + uint64_t(j) * c->stride;
    if (p.landHeader == nullptr && p.landPayload == nullptr) {
      if (!slotFree(loadAcquire(&p.recv.credits[j]), s)) break;
      if (w->irecv(c->data, peer, slot, kSlotHeaderBytes, nullptr, &p.landHeader) != szSuccess ||
          w->irecv(c->data, peer, slot + kSlotHeaderBytes, c->stride - kSlotHeaderBytes, nullptr, &p.landPayload) !=
              szSuccess) {
        breakPeer(p);
        return true;
      }
    }
    bool headerDone = p.landHeader == nullptr || done(w, p.landHeader, &ok);
    bool payloadDone = headerDone && (p.landPayload == nullptr || done(w, p.landPayload, &ok));
    if (!ok) {
      breakPeer(p);
      return true;
    }
    if (!payloadDone || p.landHeader != nullptr || p.landPayload != nullptr) break;
    storeRelease(&reinterpret_cast<SlotHeader*>(slot)->ready, readyValue(s));  // after the bytes
    ++p.landNext;
    moved = true;
  }
  // Credits the kernels gave back, and error words, to the peer's proxy.
  auto sendCtrl = [&](uint32_t kind, int code, uint64_t step) {
    p.ctrlSends.push_back({Ctrl{kind, code, step}, nullptr});
    return w->isend(c->ctrl, peer, &p.ctrlSends.back().msg, sizeof(Ctrl), nullptr, &p.ctrlSends.back().request) ==
           szSuccess;
  };
  while (p.creditNext < p.landNext &&
         loadAcquire(&p.recv.credits[slotOf(p.creditNext, c->nslots)]) >= creditAfter(p.creditNext, c->nslots)) {
    if (!sendCtrl(kCredit, 0, p.creditNext)) {
      breakPeer(p);
      return true;
    }
    ++p.creditNext;
    moved = true;
  }
  for (int side = 0; side < 2; ++side) {  // 0: this rank's send side, 1: its receive side
    int e = loadInt(side == 0 ? p.send.peerError : p.recv.peerError);
    if (e == 0 || (p.sentErrors & (1 << side))) continue;
    p.sentErrors |= 1 << side;
    if (!sendCtrl(kError, e, side == 0 ? 0 : 1)) breakPeer(p);
    moved = true;
  }
  // Control messages from the peer.
  if (p.ctrlRecv == nullptr && w->irecv(c->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), nullptr, &p.ctrlRecv) != szSuccess) {
    breakPeer(p);
    return true;
  }
  while (done(w, p.ctrlRecv, &ok)) {
    if (!ok) {
      breakPeer(p);
      return true;
    }
    if (p.ctrlIn.kind == kCredit) {
      storeRelease(&p.send.credits[slotOf(p.ctrlIn.step, c->nslots)], creditAfter(p.ctrlIn.step, c->nslots));
    } else if (p.ctrlIn.kind == kError) {
      setError(p.ctrlIn.step == 0 ? p.recv.error : p.send.error, p.ctrlIn.code);
    }
    moved = true;
    if (w->irecv(c->ctrl, peer, &p.ctrlIn, sizeof(Ctrl), nullptr, &p.ctrlRecv) != szSuccess) {
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
  while (ok && !p.ctrlSends.empty() && done(w, p.ctrlSends.front().request, &ok)) {
    p.ctrlSends.pop_front();
    moved = true;
  }
  if (!ok) breakPeer(p);
  return moved;
}

void proxyLoop(ProxyComm* c) {
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

szResult_t makeEnd(ProxyComm* c, bool withRing, End* e) {
  if (withRing) SZCHECK(pinned(c->stride * c->nslots, reinterpret_cast<void**>(&e->ring)));
  SZCHECK(pinned(c->nslots * 8 + 256, reinterpret_cast<void**>(&e->credits)));
  for (uint32_t j = 0; j < c->nslots; ++j) e->credits[j] = initialCredit(j);
  e->error = reinterpret_cast<int*>(e->credits + c->nslots);
  e->peerError = e->error + 16;
  return szSuccess;
}

void freeEnd(End& e) {
  if (e.ring) cudaFreeHost(e.ring);
  if (e.credits) cudaFreeHost(e.credits);
}

szResult_t proxyClose(void* wireComm) {
  ProxyComm* c = static_cast<ProxyComm*>(wireComm);
  if (c == nullptr) return szSuccess;
  c->stop = true;
  if (c->thread.joinable()) c->thread.join();
  // Requests may still be posted (the next step's receives): drop them with the connections.
  if (c->data) c->wire->abort(c->data);
  if (c->ctrl) c->wire->abort(c->ctrl);
  for (Peer& p : c->peers) {
    freeEnd(p.send);
    freeEnd(p.recv);
    if (p.linkClock) cudaFree(p.linkClock);
  }
  cudaGetLastError();
  delete c;
  return szSuccess;
}

szResult_t proxyConnect(szBootstrap* b, const szSlotWireConfig& config, void** wireComm) {
  ProxyComm* c = new ProxyComm();
  c->wire = szFindWire("tcp");
  c->rank = szBootstrapRank(b);
  c->nranks = szBootstrapNranks(b);
  c->nslots = config.nslots;
  c->sliceBytes = config.sliceBytes;
  c->stride = slotStride(config.sliceBytes);
  c->peers.resize(size_t(c->nranks));
  szResult_t res = szSuccess;
  // Every posted receive waits for the peer's next operation, however long that takes; a closed
  // or reset connection still fails it at once.
  szWireConfig wc{szBootstrapTimeoutMs(b), 0, nullptr, 1};
  for (int peer = 0; peer < c->nranks && res == szSuccess; ++peer) {
    if (peer == c->rank) continue;
    Peer& p = c->peers[size_t(peer)];
    p.shipHeaders.resize(c->nslots);
    res = makeEnd(c, true, &p.send);
    if (res == szSuccess) res = makeEnd(c, true, &p.recv);
    if (res == szSuccess && cudaMalloc(&p.linkClock, 256) == cudaSuccess) cudaMemset(p.linkClock, 0, 256);
    else if (res == szSuccess) res = szSetError(szUnhandledCudaError, "tcp slot wire: cudaMalloc failed");
  }
  if (res == szSuccess) res = c->wire->connect(b, wc, &c->data);
  if (res == szSuccess) res = c->wire->connect(b, wc, &c->ctrl);
  if (res == szSuccess && cudaDeviceSynchronize() != cudaSuccess)
    res = szSetError(szUnhandledCudaError, "tcp slot wire: device synchronization at connect failed");
  if (res != szSuccess) {
    proxyClose(c);
    return res;
  }
  c->thread = std::thread(proxyLoop, c);
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
    return szSetError(szInvalidArgument, "tcp slot wire: no channel with rank %d", peer);
  Peer& p = c->peers[size_t(peer)];
  const End& e = send ? p.send : p.recv;
  *ch = SlotChannel{};
  ch->ring = onDevice(e.ring);
  ch->credits = onDevice(e.credits);
  ch->localError = onDevice(e.error);
  ch->peerError = onDevice(e.peerError);
  ch->linkClock = p.linkClock;
  ch->stride = c->stride;
  ch->sliceBytes = c->sliceBytes;
  ch->nslots = c->nslots;
  if (!ch->ring || !ch->credits || !ch->localError || !ch->peerError)
    return szSetError(szUnhandledCudaError, "tcp slot wire: pinned memory has no device address");
  return szSuccess;
}

}  // namespace

const szSlotWire kSlotWireTcpProxy = {"tcp", proxyConnect, proxyChannel, proxyClose};

}  // namespace sz
