// The communicator: its resolved configuration, its wires and per-peer state. Operations run on
// the slot protocol: device buffers through the slot path (src/proto/slot_path.h), host buffers
// through the host slots (src/proto/host_slots.h) in the caller's thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/wire.h"
#include "src/comm_config.h"
#include "src/proto/auto_model.h"
#include "src/proto/codebook_drift.h"
#include "src/proto/op.h"
#include "splitzip.h"

struct szBootstrap;

namespace sz {

class SlotPath;
class SlotProxy;
class HostSlots;
struct SlotCompletion;

}  // namespace sz

struct szComm {
  int rank = 0, nranks = 0;
  sz::CommConfig cfg;
  szBootstrap* bootstrap = nullptr;
  // Every communicator: the slot proxy (src/proto/slot_proxy.h) with the host channel (host
  // buffers over tcp, for pairs on wires without host slots of their own: all but ib) and, on the
  // tcp or nccl wire with a GPU, the device channel, whose passes also drive ib's proxy; and the
  // host slots that run host operations on it (or on ib's host links).
  std::unique_ptr<sz::SlotProxy> proxy;
  std::unique_ptr<sz::HostSlots> hostSlots;
  // Device buffers travel through the slot path, on each pair's wire (src/wire_choice.h): its
  // slot areas (ipc, ib) or the proxy's device channel over its messages (tcp, nccl).
  std::vector<const szWire*> wires;  // the communicator's wires (every rank connects each)
  std::vector<void*> slotAreas;      // per wire: a slot-area wire's connection, else null
  std::vector<int> peerWire;         // per rank: the index of this rank's pair's wire (-1: itself)
  std::unique_ptr<sz::SlotPath> slotPath;
  int cudaDevice = -1;  // the GPU the communicator uses (current at init), -1 without one
  // SZ_CODEC_AUTO: frames or raw, per peer and message size, on each path: device buffers (the
  // GPU codec in the slot kernels) and host buffers (the CPU codec in the host slots).
  sz::AutoModel autoDevice, autoHost;
  std::unique_ptr<sz::CodebookDrift> codebooks;  // the senders' codebooks, per peer, type and segment group
  std::atomic<int> asyncError{szSuccess};  // szInProgress while a non-blocking init runs
  std::mutex errorMu;  // asyncError and its message (szSetCommError) change together
  std::thread initThread;    // a non-blocking init
  std::mutex statsMu;
  // The slot path's launches in flight and finished: a group's reap and enqueue, and a reap from
  // another thread (szCommGetAsyncError from a watchdog, as PyTorch's polls ncclCommGetAsyncError
  // while its main thread launches). Taken before statsMu.
  std::mutex slotMu;
  szStats_t stats{};
  uint64_t compressedElements = 0;  // sends: elements of compressed frames (stats.escapeRate)
  bool ownsNccl = false;
  ~szComm();
  void* ncclComm = nullptr;  // nccl wire: the NCCL communicator used
};

namespace sz {

// The wire this rank uses with `peer` (not itself: a send to self is a copy).
inline const szWire* commWire(const szComm* comm, int peer) { return comm->wires[size_t(comm->peerWire[size_t(peer)])]; }

// Whether SZ_AUTH_DATA / SZ_ENCRYPT can cover device buffers with `peer`: its bytes never leave
// the node (ipc), or the slot proxy seals them in host memory on their way (tcp); not where the
// kernels' slots go out from device memory (nccl) or through the NIC unseen (ib).
inline bool commDeviceSealable(const szComm* comm, int peer) {
  const szWire* w = commWire(comm, peer);
  return w->nodeLocal || (szWireMovesMessages(w) && !w->deviceMemory);
}

// Whether a call with no buffers to `peer` is stream-ordered, as ncclSend's: its wire moves
// device memory in its messages (NCCL's); with itself, where every wire of the communicator does.
inline bool commDeviceOnly(const szComm* comm, int peer) {
  bool all = true;
  for (const szWire* w : comm->wires) all = all && szWireMovesMessages(w) && w->deviceMemory;
  if (peer == comm->rank) return all;
  const szWire* w = commWire(comm, peer);
  return szWireMovesMessages(w) && w->deviceMemory;
}

// Drops the calling thread's pending group operations on `comm` (it is being destroyed); the
// group's szGroupEnd then fails with szInvalidUsage.
void groupDropComm(szComm* comm);

#if SZ_HAVE_CUDA
// Collective over an application's NCCL communicator (ncclComm_t): rank 0 makes a unique id and
// broadcasts it with NCCL. Also returns this rank and the rank count (src/init_nccl.cc).
szResult_t ncclShareUniqueId(void* ncclComm, szUniqueId* id, int* rank, int* nranks);
#endif

// Records the communicator's first asynchronous error and returns `res`.
szResult_t commFail(szComm* comm, szResult_t res);

// Collects the slot path's finished device operations (commAccount); a failed one fails the
// communicator. szSuccess without a slot path. query = false (a group's own reap, on the path of
// every operation): only the launches whose results say they finished, with no CUDA call.
// wait = false: returns szSuccess at once where another thread holds the slot path (its reap or
// enqueue will collect them).
szResult_t commReapSlots(szComm* comm, bool query = true, bool wait = true);

// Accounts a finished operation, device or host: stats, the auto model of its path, and for a
// device send of frames the codebook drift policy.
void commAccount(szComm* comm, const SlotCompletion& c, bool device);

}  // namespace sz
