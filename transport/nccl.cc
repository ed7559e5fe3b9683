// The nccl wire: messages travel with ncclSend/ncclRecv between device buffers. NCCL needs
// matching counts while a frame's size is known only after it is encoded, so every message is
// an 8-byte size followed by the payload; a receive learns the size (one host round trip) before
// it posts the payload. The sizes travel on a communicator of their own, so the receiver posts
// the size receives of every queued message at once and each payload receive as soon as its
// size is known: the round trips overlap instead of one per message in turn (a payload and the
// next size on one communicator would be matched in order, the next size only after the
// payload). Traffic towards higher ranks and towards lower ranks uses separate communicators
// split from one, each on its own stream, so a payload send waiting for its receiver never
// blocks the receives the receiver is waiting for (no cycle between two ranks). With three or
// more ranks, messages to and from different peers share a direction's stream in posting
// order, and orders that differ across ranks can wait on each other until the timeout
// (docs/PIPELINE.md, differences from NCCL).
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/sm_copy.h"
#include "base/bootstrap.h"
#include "transport/event_pool.h"
#include "transport/wire.h"

namespace {

using Clock = std::chrono::steady_clock;

// NCCL's own account of a failure: ncclGetLastError (the calling thread's last NCCL message,
// "NCCL WARN ..." in NCCL's log), else the result code's string.
const char* ncclReason(ncclResult_t res, ncclComm_t comm) {
  const char* last = ncclGetLastError(comm);
  return last != nullptr && *last != '\0' ? last : ncclGetErrorString(res);
}

#define NCCLCHECK(call)                                                                    \
  do {                                                                                     \
    ncclResult_t sz_nccl_res_ = (call);                                                    \
    if (sz_nccl_res_ != ncclSuccess)                                                       \
      return szSetError(sz_nccl_res_ == ncclRemoteError ? szRemoteError : szSystemError,   \
                        "%s:%d NCCL error %d in %s: %s", __FILE__, __LINE__, (int)sz_nccl_res_, #call, \
                        ncclReason(sz_nccl_res_, nullptr));                                \
  } while (0)

constexpr int kSizeSlots = 1024;  // size messages in flight per direction

enum class State { Queued, SizePosted, Issued, Done, Failed };

// A non-blocking stream of the highest priority: the lanes' work goes ahead of bulk work.
szResult_t createLaneStream(cudaStream_t* stream) {
  int least = 0, greatest = 0;
  CUDACHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CUDACHECK(cudaStreamCreateWithPriority(stream, cudaStreamNonBlocking, greatest));
  return szSuccess;
}
struct NcclWire;

}  // namespace

struct szWireRequest {
  NcclWire* wire;
  bool send;
  int peer;
  void* data;
  size_t bytes;  // send: message size; receive: capacity, then the size received
  State state = State::Queued;
  cudaEvent_t event = nullptr;      // the payload's completion (data stream)
  cudaEvent_t sizeEvent = nullptr;  // the size message's completion (size stream)
  int slot = -1;
  szResult_t error = szSuccess;
  Clock::time_point posted;
};

namespace {

// One direction of traffic (towards higher or towards lower ranks): payloads on one
// communicator and stream, their sizes on another.
struct Lane {
  ncclComm_t comm = nullptr, sizeComm = nullptr;
  cudaStream_t stream = nullptr, sizeStream = nullptr;
  uint64_t* sizeHost = nullptr;  // pinned
  uint64_t* sizeDev = nullptr;
  std::vector<int> freeSlots;
  std::deque<szWireRequest*> queue;  // in post order
  sz::EventPool events;  // the progress thread creates no event (event_pool.h)
};

struct NcclWire {
  int rank = 0, nranks = 0, timeoutMs = 0;
  ncclComm_t base = nullptr;
  bool ownsBase = false;
  Lane up, down;  // up: messages from a lower to a higher rank
  std::mutex mu;
  bool broken = false;
};

Lane& laneFor(NcclWire* w, bool send, int peer) {
  bool up = send ? peer > w->rank : peer < w->rank;
  return up ? w->up : w->down;
}

szResult_t initLane(NcclWire* w, Lane* l) {
  // Own resources and blocking calls whatever the parent's configuration: lanes sharing NCCL's
  // internal stream would order a send waiting for its receiver before the other lane's receive.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  config.splitShare = 0;
  NCCLCHECK(ncclCommSplit(w->base, 0, w->rank, &l->comm, &config));
  NCCLCHECK(ncclCommSplit(w->base, 0, w->rank, &l->sizeComm, &config));
  SZCHECK(createLaneStream(&l->stream));
  SZCHECK(createLaneStream(&l->sizeStream));
  CUDACHECK(cudaHostAlloc(&l->sizeHost, kSizeSlots * sizeof(uint64_t), cudaHostAllocMapped));
  CUDACHECK(cudaMalloc(&l->sizeDev, kSizeSlots * sizeof(uint64_t)));
  for (int i = kSizeSlots - 1; i >= 0; --i) l->freeSlots.push_back(i);
  // Two events per request: kSizeSlots requests hold slots, and finished ones keep theirs until
  // ncclTest reaps them (headroom).
  return l->events.fill(2 * kSizeSlots + 512);
}

void freeLane(Lane* l, bool abort) {
  for (szWireRequest* r : l->queue) {
    l->events.give(r->event);
    l->events.give(r->sizeEvent);
    delete r;
  }
  l->queue.clear();
  for (ncclComm_t c : {l->comm, l->sizeComm})
    if (c) abort ? ncclCommAbort(c) : ncclCommDestroy(c);
  for (cudaStream_t s : {l->stream, l->sizeStream})
    if (s) cudaStreamDestroy(s);
  cudaFreeHost(l->sizeHost);
  cudaFree(l->sizeDev);
}

szResult_t eventDone(cudaEvent_t e, bool* done) {
  cudaError_t err = cudaEventQuery(e);
  if (err == cudaErrorNotReady) {
    *done = false;
    return szSuccess;
  }
  CUDACHECK(err);
  *done = true;
  return szSuccess;
}

// Issues what can be issued, in order, and completes finished requests of one lane.
szResult_t progressLane(NcclWire* w, Lane& l) {
  if (w->broken) {  // nothing more is posted; what waits fails (a posted receive may still land)
    for (szWireRequest* r : l.queue)
      if (r->state != State::Done && r->state != State::Failed) {
        r->state = State::Failed;
        r->error = szSetError(szRemoteError, "nccl wire: rank %d: the wire failed earlier", w->rank);
      }
    return szSuccess;
  }
  bool blocked = false;  // an earlier receive still waits for its size: later payloads wait (matched in order)
  bool held = false;     // a send was held back: later requests wait too, so both streams keep the order
  for (szWireRequest* r : l.queue) {
    if (r->state == State::Done || r->state == State::Failed) continue;
    // A receive's size message goes out at once; a send (size and payload) waits while an earlier
    // receive has not posted its payload, and what follows a held send waits with it, so both
    // streams keep the lane's order (with three or more ranks a message overtaking another
    // could close a cycle of streams across ranks).
    if (r->state == State::Queued && r->send && blocked) held = true;
    if (r->state == State::Queued && !held) {
      if (l.freeSlots.empty()) break;
      r->slot = l.freeSlots.back();
      l.freeSlots.pop_back();
      SZCHECK(l.events.take(&r->event));
      SZCHECK(l.events.take(&r->sizeEvent));
      uint64_t* sizeDev = l.sizeDev + r->slot;
      if (r->send) {
        l.sizeHost[r->slot] = r->bytes;
        SZCHECK(sz::smCopyAsync(sizeDev, l.sizeHost + r->slot, sizeof(uint64_t), l.sizeStream));  // sm_copy.h
        NCCLCHECK(ncclSend(sizeDev, sizeof(uint64_t), ncclUint8, r->peer, l.sizeComm, l.sizeStream));
        if (r->bytes) NCCLCHECK(ncclSend(r->data, r->bytes, ncclUint8, r->peer, l.comm, l.stream));
        CUDACHECK(cudaEventRecord(r->event, l.stream));
        r->state = State::Issued;
      } else {
        NCCLCHECK(ncclRecv(sizeDev, sizeof(uint64_t), ncclUint8, r->peer, l.sizeComm, l.sizeStream));
        SZCHECK(sz::smCopyAsync(l.sizeHost + r->slot, sizeDev, sizeof(uint64_t), l.sizeStream));
        r->state = State::SizePosted;
      }
      CUDACHECK(cudaEventRecord(r->sizeEvent, l.sizeStream));
    }
    bool sizeKnown = false;
    if (r->state == State::SizePosted && !blocked) SZCHECK(eventDone(r->sizeEvent, &sizeKnown));
    if (r->state == State::SizePosted && !sizeKnown) blocked = true;
    if (r->state == State::SizePosted && sizeKnown) {
      uint64_t size = l.sizeHost[r->slot];
      if (size > r->bytes) {
        r->state = State::Failed;
        r->error = szSetError(szInvalidUsage, "nccl wire: rank %d received a %llu-byte message from rank %d "
                              "for a %zu-byte receive", w->rank, (unsigned long long)size, r->peer, r->bytes);
        w->broken = true;
        return r->error;
      }
      r->bytes = size;
      if (size) NCCLCHECK(ncclRecv(r->data, size, ncclUint8, r->peer, l.comm, l.stream));
      CUDACHECK(cudaEventRecord(r->event, l.stream));
      r->state = State::Issued;
    }
    if (r->state == State::Issued) {
      bool done = false, sizeDone = false;  // the slot is free once the size message is done too
      SZCHECK(eventDone(r->event, &done));
      if (done) SZCHECK(eventDone(r->sizeEvent, &sizeDone));
      if (done && sizeDone) {
        r->state = State::Done;
        l.freeSlots.push_back(r->slot);
      }
    }
  }
  for (ncclComm_t c : {l.comm, l.sizeComm}) {
    ncclResult_t async = ncclSuccess;
    NCCLCHECK(ncclCommGetAsyncError(c, &async));
    if (async != ncclSuccess) {
      w->broken = true;
      return szSetError(szRemoteError, "nccl wire: rank %d: NCCL reports '%s'", w->rank, ncclReason(async, c));
    }
  }
  return szSuccess;
}

// NCCL connects two ranks at their first send/receive (NCCL_RUNTIME_CONNECT), which allocates
// and maps memory and can synchronize the device. The progress thread must never do that while
// a user's stream waits for it (a deadlock), so every connection a lane carries is made here:
// one 8-byte message on each of its communicators to every peer this lane sends to, and from
// every peer it receives from.
szResult_t connectLane(NcclWire* w, Lane* l) {
  int k = 0;  // the two communicators receive into different slots
  for (auto [comm, stream] : {std::pair{l->comm, l->stream}, std::pair{l->sizeComm, l->sizeStream}}) {
    NCCLCHECK(ncclGroupStart());
    for (int p = 0; p < w->nranks; ++p) {
      if (p == w->rank) continue;
      uint64_t* slot = l->sizeDev + 1 + (size_t(k) * size_t(w->nranks) + size_t(p)) % (kSizeSlots - 1);
      if (&laneFor(w, true, p) == l) NCCLCHECK(ncclSend(l->sizeDev, sizeof(uint64_t), ncclUint8, p, comm, stream));
      if (&laneFor(w, false, p) == l) NCCLCHECK(ncclRecv(slot, sizeof(uint64_t), ncclUint8, p, comm, stream));
    }
    NCCLCHECK(ncclGroupEnd());
    ++k;
  }
  auto start = Clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(l->stream);
    if (e == cudaSuccess) e = cudaStreamQuery(l->sizeStream);
    if (e == cudaSuccess) return szSuccess;
    if (e != cudaErrorNotReady) CUDACHECK(e);
    if (w->timeoutMs > 0 && Clock::now() - start > std::chrono::milliseconds(w->timeoutMs))
      return szSetError(szTimeout, "nccl wire: rank %d: connecting to its peers took more than %d ms", w->rank,
                        w->timeoutMs);
  }
}

szResult_t ncclConnect(szBootstrap* b, const szWireConfig& cfg, void** wireComm) {
  auto* w = new NcclWire();
  w->rank = szBootstrapRank(b);
  w->nranks = szBootstrapNranks(b);
  w->timeoutMs = cfg.timeoutMs;
  szResult_t res = szSuccess;
  if (cfg.ncclComm) {
    w->base = static_cast<ncclComm_t>(cfg.ncclComm);
  } else {
    std::vector<ncclUniqueId> ids(static_cast<size_t>(w->nranks));
    ncclResult_t nres = w->rank == 0 ? ncclGetUniqueId(&ids[0]) : ncclSuccess;
    if (nres != ncclSuccess) res = szSetError(szSystemError, "nccl wire: ncclGetUniqueId failed: %s", ncclReason(nres, nullptr));
    if (res == szSuccess) res = szBootstrapAllGather(b, ids.data(), sizeof(ncclUniqueId));
    if (res == szSuccess) nres = ncclCommInitRank(&w->base, w->nranks, ids[0], w->rank);
    if (res == szSuccess && nres != ncclSuccess)  // two ranks on one GPU: "Duplicate GPU detected"
      res = szSetError(szSystemError, "nccl wire: ncclCommInitRank failed on rank %d: %s (SZ_WIRE=tcp or ipc "
                       "serve ranks that NCCL cannot)", w->rank, ncclReason(nres, nullptr));
    w->ownsBase = res == szSuccess;
  }
  if (res == szSuccess) res = initLane(w, &w->up);
  if (res == szSuccess) res = initLane(w, &w->down);
  if (res == szSuccess) res = connectLane(w, &w->up);
  if (res == szSuccess) res = connectLane(w, &w->down);
  if (res != szSuccess) {
    freeLane(&w->up, true);
    freeLane(&w->down, true);
    if (w->ownsBase) ncclCommAbort(w->base);
    delete w;
    return res;
  }
  *wireComm = w;
  return szSuccess;
}

szResult_t post(void* wireComm, bool send, int peer, void* data, size_t bytes, szWireRequest** request) {
  auto* w = static_cast<NcclWire*>(wireComm);
  std::lock_guard<std::mutex> lock(w->mu);
  if (w->broken) return szSetError(szRemoteError, "nccl wire: rank %d: the wire failed earlier", w->rank);
  auto* r = new szWireRequest{w, send, peer, data, bytes, State::Queued, nullptr, nullptr, -1, szSuccess, Clock::now()};
  laneFor(w, send, peer).queue.push_back(r);
  *request = r;
  return szSuccess;
}

// Device memory in one piece: a message of NCCL is one buffer.
szResult_t onePiece(const szWirePiece* pieces, int npieces) {
  if (pieces == nullptr || npieces != 1)
    return szSetError(szInvalidArgument, "nccl wire: a message is one piece of device memory (%d given)", npieces);
  return szSuccess;
}

szResult_t ncclIsend(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  SZCHECK(onePiece(pieces, npieces));
  return post(wireComm, true, peer, pieces[0].data, pieces[0].bytes, request);
}

szResult_t ncclIrecv(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  SZCHECK(onePiece(pieces, npieces));
  return post(wireComm, false, peer, pieces[0].data, pieces[0].bytes, request);
}

szResult_t ncclTest(szWireRequest* r, int* done, size_t* bytes) {
  *done = 0;
  NcclWire* w = r->wire;
  std::lock_guard<std::mutex> lock(w->mu);
  Lane& l = laneFor(w, r->send, r->peer);
  szResult_t res = progressLane(w, l);
  if (res != szSuccess && r->state != State::Done) {  // another request broke the wire: this one ends too
    r->state = State::Failed;
    r->error = res;
  }
  if (r->state == State::Failed) res = r->error;
  if (r->state == State::Done || r->state == State::Failed) {
    *done = r->state == State::Done;
    *bytes = r->bytes;
    for (auto it = l.queue.begin(); it != l.queue.end(); ++it)
      if (*it == r) {
        l.queue.erase(it);
        break;
      }
    l.events.give(r->event);
    l.events.give(r->sizeEvent);
    delete r;
  }
  return res;
}

szResult_t closeWire(void* wireComm, bool abort) {
  auto* w = static_cast<NcclWire*>(wireComm);
  freeLane(&w->up, abort);
  freeLane(&w->down, abort);
  if (w->ownsBase) abort ? ncclCommAbort(w->base) : ncclCommDestroy(w->base);
  delete w;
  return szSuccess;
}

szResult_t ncclClose(void* wireComm) { return closeWire(wireComm, false); }
szResult_t ncclAbortWire(void* wireComm) { return closeWire(wireComm, true); }

}  // namespace

// The slot proxy's device channel: 1 MiB slices (each a message) on at most 32 blocks, leaving
// multiprocessors to NCCL's own kernels.
// name, needsGpu, deviceMemory, nodeLocal, sendsWaitForReceives, defaultSliceBytes, defaultMaxBlocks, defaultSlotsPerBlock, connect, connectPeers, channel, hostChannel, progress, isend, irecv, test, failPeer, close, abort
const szWire szWireNccl = {"nccl", 1, 1, 0, 1, 1 << 20, 32, 2, ncclConnect, nullptr, nullptr, nullptr, nullptr, ncclIsend, ncclIrecv, ncclTest, nullptr, ncclClose, ncclAbortWire};
