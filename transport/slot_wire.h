// Slot wires: wires that give the slot protocol (kernels/slot_format.h) its memory. Where the
// transport table of transport.h moves messages (isend/irecv), a slot wire connects each pair of
// ranks once and hands out, per (peer, direction), a SlotChannel: the receiver's slot ring, the
// sender's credit words and both sides' error words, as this rank's kernels address them. After
// that the kernels move the data themselves; a wire whose memory the GPU cannot reach directly
// would add a proxy here (docs/PIPELINE.md).
#pragma once

#include <cstdint>

#include "kernels/slot_format.h"
#include "splitzip.h"

struct szBootstrap;

struct szSlotWireConfig {
  uint64_t sliceBytes;  // bytes of one slice: a multiple of sz::kSliceAlign
  uint32_t nslots;      // slots per (peer, direction)
  double linkGBps;      // > 0: emulate a link of this many GB/s per direction (ipc, testing)
  void* ncclComm;       // nccl: a communicator to wrap (ncclComm_t), or null to create one
};

struct szSlotWire {
  const char* name;
  // Defaults where SZ_SLOT_SLICE_BYTES / SZ_SLOT_BLOCKS are 0: a slice's bytes, and the most
  // blocks per launch (0: the GPU's multiprocessor count). Proxied wires want fewer, larger
  // slices (each costs the proxy a message) and leave multiprocessors to the wire's own kernels.
  uint64_t defaultSliceBytes;
  uint32_t defaultMaxBlocks;
  // Collective over all ranks of the bootstrap: allocates this rank's rings and credits (once:
  // nothing is allocated or registered per operation) and maps every peer's.
  szResult_t (*connect)(szBootstrap* bootstrap, const szSlotWireConfig& config, void** wireComm);
  // This rank's view of its channel with `peer`: send = 1 for this rank's sends to the peer.
  szResult_t (*channel)(void* wireComm, int peer, int send, sz::SlotChannel* channel);
  // After every kernel using the channels has finished.
  szResult_t (*close)(void* wireComm);
};

#if SZ_HAVE_CUDA
// CUDA IPC between ranks of one node (NVLink or PCIe peer access; ranks of one process share
// pointers directly, also on one GPU).
extern const szSlotWire szSlotWireIpc;
#endif

#if SZ_HAVE_CUDA && SZ_HAVE_IBVERBS
// RDMA NICs through raw ibverbs (InfiniBand or RoCE; libibverbs opened at connect): one-sided
// RDMA writes into the receiver's slot ring, moved by a proxy thread (docs/PIPELINE.md).
extern const szSlotWire szSlotWireIb;
#endif

// The slot wire named `name`, or null if it is unknown or not built.
const szSlotWire* szFindSlotWire(const char* name);
