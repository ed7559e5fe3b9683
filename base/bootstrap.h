// Bootstrap (NCCL bootstrap.cc style): turns a unique id into a connected set of ranks over
// TCP, for exchanging the small messages that set up a communicator (wire addresses,
// configuration checks). The rendezvous (rendezvous.h) authenticates every rank with the id's
// key and hands out a random session key; every later connection between ranks proves that
// key (auth.h) before a byte of it is trusted, and a second connection claiming a place that
// is taken is refused. Sizes read from the network are bounded before anything is allocated.
// Threads may share a bootstrap: point-to-point calls and exchanges run concurrently as long
// as concurrent ones use different tags with a peer (messages with one tag from one peer are
// received in the order they came); the collectives (all-gather, barrier) are one thread's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

struct szBootstrap;

// Fills `id` (szGetUniqueId): see szRendezvousNewId.
szResult_t szBootstrapGetUniqueId(szUniqueId* id);

// Joins rank `rank` of `nranks` to the communicator named by `id`. The root's address serves
// the rendezvous: the process of rank 0 listens there when the id came from SZ_COMM_ID (or
// from szBootstrapGetUniqueId in this process); every rank connects, proves the id's key, and
// learns every other rank's bootstrap address and the session key. At most kSzMaxRanks
// (65536) ranks. Fails with szTimeout after `timeoutMs`.
szResult_t szBootstrapInit(const szUniqueId& id, int rank, int nranks, int timeoutMs,
                           szBootstrap** bootstrap);

// Every rank contributes `bytes` at data + rank * bytes; afterwards all ranks hold all slices.
szResult_t szBootstrapAllGather(szBootstrap* b, void* data, size_t bytes);

// Point-to-point messages between ranks, matched by (peer, tag) in order. The receiver gives
// the exact size expected; a different size is szInvalidUsage.
szResult_t szBootstrapSend(szBootstrap* b, int peer, int tag, const void* data, size_t bytes);
szResult_t szBootstrapRecv(szBootstrap* b, int peer, int tag, void* data, size_t bytes);

// A pairwise exchange with `npeers` peers (each peer calls it with this rank, in any order of
// its own peers): sends `bytes` at mine + i * bytes to peers[i] for every i first, then receives
// peers[i]'s into theirs + i * bytes, so peers that wait on each other's exchanges cannot wait in
// a circle. Errors: those of szBootstrapSend and szBootstrapRecv (szTimeout, szRemoteError).
szResult_t szBootstrapExchange(szBootstrap* b, const int* peers, int npeers, int tag, const void* mine, void* theirs,
                               size_t bytes);

szResult_t szBootstrapBarrier(szBootstrap* b);

// The communicator's session key (kSzKeyBytes, random, made at the rendezvous), for wires
// that authenticate their connections (szAuthConnect / szAuthCheckHello).
const uint8_t* szBootstrapSessionKey(const szBootstrap* b);
int szBootstrapRank(const szBootstrap* b);
int szBootstrapNranks(const szBootstrap* b);
int szBootstrapTimeoutMs(const szBootstrap* b);

szResult_t szBootstrapClose(szBootstrap* b);
