// The wire interface (NCCL's ncclTransport, UCX's uct_iface_ops): every wire fills one table, and
// the layers above (the slot protocol in src/proto, the communicator) use the table only, never a
// wire's name. A wire carries the slot protocol (kernels/slot_format.h) in one of two ways, and
// the table says which by the functions it fills:
//
//   slot areas  `connectPeers` / `channel`: at the first operations with a peer (as NCCL connects
//               p2p peers lazily), connectPeers allocates and registers the pair's slot rings,
//               credit words and error words and exchanges them with the peer; channel hands
//               them out as SlotChannels. After that the slot kernels write into the peer's
//               memory themselves (ipc: CUDA IPC over NVLink or PCIe), or the wire's own proxy
//               moves the slots (ib: RDMA writes).
//   messages    `isend` / `irecv` / `test`: the wire moves whole messages between two ranks, in
//               order per (peer, direction); the slot proxy (src/proto/slot_proxy.h) keeps both
//               ends of each channel locally and ships every published slot as one message
//               (tcp, nccl). A receive is posted with a capacity (the worst-case size) and
//               reports the actual size.
//
// Every wire fills name, the flags, connect, close and abort.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/slot_format.h"
#include "splitzip.h"

struct szBootstrap;
struct szWireRequest;  // a message wire's own request type

// One piece of a message (isend, irecv): a message is the concatenation of its pieces, so a slot's
// header and a payload that lives elsewhere (the caller's buffer) travel as one message without
// a copy. isend only reads `data`.
struct szWirePiece {
  void* data;
  size_t bytes;
};
constexpr int kSzWireMaxPieces = 2;

struct szWireConfig {
  int timeoutMs;       // connecting, and (idleRequests 0, tcp) a posted request that makes no progress this long: szTimeout
  int socketsPerPeer;  // tcp: connections per peer (SZ_NSOCKS)
  void* ncclComm;      // nccl: a communicator to wrap (ncclComm_t), or null to create one
  // Message wires, 1: a posted request may wait any time for its message (the slot proxy posts
  // the receives of the peer's next slots ahead; the senders and receivers waiting on the slots
  // time out instead). A closed or reset connection still fails it at once.
  int idleRequests;
  // > 0: the wire moves at most this many GB/s per direction and peer, an emulated slower link
  // for measuring where compression pays (tcp paces its connections: SZ_TCP_LINK_GBPS; ipc's
  // kernels pace their slot writes: SZ_IPC_LINK_GBPS). nccl and ib ignore it.
  double linkGBps;
  // Slot-area wires: the slots' payload bytes (a multiple of sz::kSliceAlign) and the slots per
  // (peer, direction) that connectPeers allocates, once per peer. Message wires ignore them.
  uint64_t sliceBytes;
  uint32_t nslots;
  // Per rank (nranks entries), 1 where this rank uses the wire with that rank; null: with every
  // other rank. Every rank of the bootstrap still calls connect (it is collective), and each pair
  // agrees (wire_choice.h), so a wire connects, allocates and registers for the pairs it serves
  // only. nccl and tcp connect every pair (their connect is one collective). Copied by connect.
  const uint8_t* peers;
  // Wires with host slots (hostChannel, ib): per rank, 1 where this rank's host buffers travel
  // with that rank on this wire (null: none), whether the two have GPUs or not; the host slots'
  // payload bytes and count per (peer, direction). Copied by connect.
  const uint8_t* hostPeers;
  uint64_t hostSliceBytes;
  uint32_t hostSlots;
};

// Whether `config` has this rank use the wire with `peer`.
inline bool szWireServes(const szWireConfig& config, int peer) { return config.peers == nullptr || config.peers[peer] != 0; }

struct szWire {
  const char* name;
  // 1: the wire needs a CUDA device at init (ipc, nccl); tcp and ib serve ranks without one.
  int needsGpu;
  // 1: a message wire whose isend/irecv take device memory (nccl); 0: host memory (tcp).
  int deviceMemory;
  // 1: the bytes never leave the node (ipc): nothing on it is readable off the machine, so
  // SZ_ENCRYPT accepts device buffers on it.
  int nodeLocal;
  // Message wires, 1: a send completes only once the peer has posted the matching receive, and
  // holds the wire's later operations until then (nccl: one stream). The slot proxy then posts
  // every served pair's receives from init (SlotProxyChannel::connectAtInit); 0: a message waits
  // in the wire for its receive (tcp: in the socket) and pairs connect at their first operations.
  int sendsWaitForReceives;
  // The slot protocol's defaults where SZ_SLOT_SLICE_BYTES / SZ_SLOT_BLOCKS are 0: a slice's
  // bytes, and the most blocks per launch (0: half the GPU's multiprocessors, which is also the
  // most any wire gets: src/comm.cc). Proxied wires want fewer, larger slices (each costs a
  // message) and leave multiprocessors to their own work.
  uint64_t defaultSliceBytes;
  uint32_t defaultMaxBlocks;
  // Slots per block where SZ_SLOT_COUNT is 0. ipc: 1 (one H100, 1 GiB, two ranks as threads,
  // 2026-12-06, 132 blocks: 132 slots moved 336.3 GB/s raw and 301.2 with the codec, 264 slots 335.1
  // and 300.3, at half the memory); the proxied wires and ib keep 2 (unmeasured: their
  // rings also cover the wire's latency).
  uint32_t defaultSlotsPerBlock;

  // Collective over all ranks of the bootstrap: connects this rank to every other one (message
  // wires); opens what every peer shares (slot-area wires: the devices, nothing per peer). The
  // bootstrap outlives the wire's connection.
  szResult_t (*connect)(szBootstrap* bootstrap, const szWireConfig& config, void** wireComm);

  // Slot-area wires (null for message wires). connectPeers sets up this rank's slot areas with
  // `peers` (distinct, served by the wire, none set up before), once each:
  // allocates and registers their rings and words
  // and exchanges them with each peer over the bootstrap (szBootstrapExchange). Pairwise: it
  // returns once each of `peers` has called it with this rank too, in any call of its own.
  // Errors: szTimeout (a peer did not connect within timeoutMs),
  // szRemoteError, szInvalidUsage (the peer's slots differ, or it is on another node: ipc),
  // szUnhandledCudaError, szSystemError.
  // `host` 1: the slot areas of the host slots (hostChannel) with those peers, 0: the device
  // path's (channel); each kind connects at its own first use.
  szResult_t (*connectPeers)(void* wireComm, const int* peers, int npeers, int host);
  // This rank's view of its channel with a connected `peer`, send = 1 for this rank's sends to
  // the peer, in the addresses the slot kernels take.
  szResult_t (*channel)(void* wireComm, int peer, int send, sz::SlotChannel* channel);
  // Slot-area wires with host slots (ib; null otherwise): as channel, for the host slots (the CPU
  // codec's, src/proto/host_slots.h) of the pairs in szWireConfig::hostPeers, in host addresses.
  // Host buffers of a wire without it travel through the slot proxy's host channel over tcp.
  szResult_t (*hostChannel)(void* wireComm, int peer, int send, sz::SlotChannel* channel);
  // Slot-area wires whose slots the host moves (ib: RDMA writes posted by a proxy; null where the
  // kernels write the peer's memory themselves, ipc): one pass of that proxy, true if anything
  // moved. The communicator's slot proxy drives it from its thread and from threads waiting on
  // host slots, one call at a time (src/proto/slot_proxy.h: one proxy loop for every wire);
  // `hostOnly` (a thread waiting on host slots): only what host slots use, counted as moved.
  bool (*progress)(void* wireComm, bool hostOnly);

  // Message wires (null for slot-area wires). isend posts a send to `peer` of the message made of
  // `npieces` (1 to kSzWireMaxPieces; the list is copied, the memory stays valid until test()
  // says done). irecv posts a receive from `peer` of at most the pieces' total bytes, filling
  // them in order; a larger message fails the request with szInvalidUsage. Wires of device
  // memory take one piece (szInvalidArgument otherwise). test advances a request: *done = 1 once
  // complete, *bytes = the message size; a completed or failed request is released by the call.
  // Errors: szRemoteError (peer closed or reset), szTimeout, szInvalidUsage (message larger than
  // the receive's capacity), szSystemError.
  szResult_t (*isend)(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request);
  szResult_t (*irecv)(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request);
  szResult_t (*test)(szWireRequest* request, int* done, size_t* bytes);
  // Message wires whose requests may point into memory a caller hands back early (tcp, the
  // host slots' payloads in the user's buffers; null elsewhere): fails every request posted with
  // `peer` with `code` and every later one at once, and breaks the pair's connections; once it
  // returns, the wire touches none of those requests' memory again.
  szResult_t (*failPeer)(void* wireComm, int peer, szResult_t code, const char* why);

  // close: orderly, after every request completed and every kernel using the channels finished;
  // abort: drops everything (after an error; requests may still be posted).
  szResult_t (*close)(void* wireComm);
  szResult_t (*abort)(void* wireComm);
};

// Whether the slot protocol rides `w` as messages through the slot proxy (else through slot areas).
inline bool szWireMovesMessages(const szWire* w) { return w->isend != nullptr; }

// One-piece isend / irecv.
inline szResult_t szWireIsend(const szWire* w, void* comm, int peer, const void* data, size_t bytes,
                              szWireRequest** request) {
  const szWirePiece piece{const_cast<void*>(data), bytes};
  return w->isend(comm, peer, &piece, 1, request);
}
inline szResult_t szWireIrecv(const szWire* w, void* comm, int peer, void* data, size_t capacity,
                              szWireRequest** request) {
  const szWirePiece piece{data, capacity};
  return w->irecv(comm, peer, &piece, 1, request);
}

// The wire named `name` that this build has; null if it is unknown or not built (ipc and nccl
// need CUDA, ib CUDA and rdma-core's headers).
const szWire* szFindWire(const char* name);

extern const szWire szWireTcp;
#if SZ_HAVE_CUDA
extern const szWire szWireNccl;
// CUDA IPC between ranks of one node (NVLink or PCIe peer access; ranks of one process share
// pointers directly, also on one GPU).
extern const szWire szWireIpc;
#endif
#if SZ_HAVE_CUDA && SZ_HAVE_IBVERBS
// RDMA NICs through raw ibverbs (InfiniBand or RoCE; libibverbs opened at connect): one-sided
// RDMA writes into the receiver's slot ring, moved by the wire's proxy thread (docs/PIPELINE.md).
extern const szWire szWireIb;
#endif
