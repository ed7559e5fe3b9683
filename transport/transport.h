// The message wire interface (NCCL src/transport style): each wire fills one table of functions
// and the slot proxy (src/proto/slot_proxy.h) never asks which wire it drives. A wire moves whole messages between two
// ranks, in order per (peer, direction); a receive is posted with a capacity (the worst-case
// size) and reports the actual size, which fits message-based wires (tcp), NCCL (a size
// message, then the payload) and RDMA (one-sided write with immediate into a registered,
// pre-posted buffer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

struct szBootstrap;
struct szWireRequest;  // a wire's own request type

struct szWireConfig {
  int timeoutMs;       // connecting, and (idleRequests 0, tcp) a posted request that makes no progress this long: szTimeout
  int socketsPerPeer;  // tcp: connections per peer (SZ_NSOCKS)
  void* ncclComm;      // nccl: a communicator to wrap (ncclComm_t), or null to create one
  // 1: a posted request may wait any time for its message (the slot proxy posts the receives of
  // the peer's next slots ahead; the senders and receivers waiting on the slots time out
  // instead). A closed or reset connection still fails it at once.
  int idleRequests;
  // tcp: > 0 paces every connection (the kernel's SO_MAX_PACING_RATE) so that a peer's link moves
  // at most this many GB/s per direction: an emulated slower network, for measuring where
  // compression pays (SZ_TCP_LINK_GBPS). Other wires ignore it.
  double linkGBps;
};

struct szWire {
  const char* name;
  // 1 if isend/irecv take device memory (nccl), 0 if host memory (tcp).
  int deviceMemory;

  // Collective over all ranks of the bootstrap: connects this rank to every other one.
  szResult_t (*connect)(szBootstrap* bootstrap, const szWireConfig& config, void** wireComm);

  // Posts a send of `bytes` at `data` to `peer`. `data` must stay valid until test() says done.
  szResult_t (*isend)(void* wireComm, int peer, const void* data, size_t bytes, szWireRequest** request);
  // Posts a receive of at most `capacity` bytes from `peer` into `data`. A message larger than
  // `capacity` fails the request with szInvalidUsage.
  szResult_t (*irecv)(void* wireComm, int peer, void* data, size_t capacity, szWireRequest** request);
  // Advances the request; *done = 1 once complete, *bytes = the message size. A completed or
  // failed request is released by this call. Errors: szRemoteError (peer closed or reset),
  // szTimeout, szInvalidUsage (message larger than the receive's capacity), szSystemError.
  szResult_t (*test)(szWireRequest* request, int* done, size_t* bytes);

  // Orderly close after all requests completed; abort drops everything (after an error).
  szResult_t (*close)(void* wireComm);
  szResult_t (*abort)(void* wireComm);
};

// The wires this build has; null if `name` is unknown or not built (nccl without CUDA).
const szWire* szFindWire(const char* name);

extern const szWire szWireTcp;
#if SZ_HAVE_CUDA
extern const szWire szWireNccl;
#endif
