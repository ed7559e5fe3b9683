// Bootstrap (NCCL bootstrap.cc style): turns a unique id into a connected set of ranks over
// TCP, for exchanging the small messages that set up a communicator (wire addresses,
// configuration checks). The unique id carries the root's address and a random secret; a
// connection that does not present the secret is dropped. Sizes read from the network are
// bounded before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

struct szBootstrap;

// Fills `id` (szGetUniqueId): with SZ_COMM_ID=host:port set, that address and a secret derived
// from it (and SZ_COMM_SECRET); otherwise a fresh listening socket of this process, whose root
// thread serves the rendezvous, and a random secret.
szResult_t szBootstrapGetUniqueId(szUniqueId* id);

// Joins rank `rank` of `nranks` to the communicator named by `id`. The root's address serves
// the rendezvous: the process of rank 0 listens there when the id came from SZ_COMM_ID (or
// from szBootstrapGetUniqueId in this process); every rank connects, proves the secret, and
// learns every other rank's bootstrap address. Fails with szTimeout after `timeoutMs`.
szResult_t szBootstrapInit(const szUniqueId& id, int rank, int nranks, int timeoutMs,
                           szBootstrap** bootstrap);

// Every rank contributes `bytes` at data + rank * bytes; afterwards all ranks hold all slices.
szResult_t szBootstrapAllGather(szBootstrap* b, void* data, size_t bytes);

// Point-to-point messages between ranks, matched by (peer, tag) in order. The receiver gives
// the exact size expected; a different size is szInvalidUsage.
szResult_t szBootstrapSend(szBootstrap* b, int peer, int tag, const void* data, size_t bytes);
szResult_t szBootstrapRecv(szBootstrap* b, int peer, int tag, void* data, size_t bytes);

szResult_t szBootstrapBarrier(szBootstrap* b);

// The secret of the communicator's id (16 bytes), for wires that authenticate connections.
const uint8_t* szBootstrapSecret(const szBootstrap* b);
int szBootstrapRank(const szBootstrap* b);
int szBootstrapNranks(const szBootstrap* b);
int szBootstrapTimeoutMs(const szBootstrap* b);

szResult_t szBootstrapClose(szBootstrap* b);
