// The unique id and the rendezvous: how ranks that hold the same id find each other and
// receive the communicator's session key.
//
// The id carries the root's address and an id key: random for an id from szGetUniqueId
// (so only those the id was given to hold it), HMAC-SHA256(SZ_COMM_SECRET, SZ_COMM_ID) for one
// from SZ_COMM_ID (without SZ_COMM_SECRET anyone who knows the address can compute it, as
// anyone who can reach NCCL_COMM_ID can join an NCCL job; a WARN says so).
//
// At the rendezvous each rank answers the root's challenge with an HMAC under the id key
// (auth.h style, over its rank, nranks and listen address). Only then does the root look at
// what the greeting says: nranks must lie in 1..kSzMaxRanks and agree with every other rank's,
// and only then is anything sized by it allocated. Once all ranks arrived the root sends each
// the table of listen addresses and the session key: 32 random bytes made by the root for this
// communicator alone, never derivable from the id, masked with an HMAC of both nonces under
// the id key and proven by an HMAC over the whole reply, the address table included (rendezvous
// version 3), so the rank knows it met the real root and that no byte changed on the path. A
// greeting of another version is answered with the root's version only.
#pragma once

#include <cstdint>
#include <vector>

#include "base/auth.h"
#include "base/socket.h"
#include "splitzip.h"

// The most ranks a communicator may have (szCommInitRank refuses more, and the root refuses
// any greeting that says more before it allocates anything).
constexpr int kSzMaxRanks = 1 << 16;

// szGetUniqueId: with SZ_COMM_ID=host:port set, that address and its derived id key;
// otherwise a fresh listening socket of this process, whose root thread serves one
// rendezvous (at most SZ_TIMEOUT_MS), and a random id key.
szResult_t szRendezvousNewId(szUniqueId* id);

// Rank `rank` of `nranks` meets the others at the root of `id` (rank 0 starts the root when the
// id came from SZ_COMM_ID). On success `peers` holds every rank's `myListen` and `sessionKey`
// the communicator's key.
// Errors: szInvalidArgument (not an id), szInvalidUsage (ranks disagree on nranks, or two claim
// one rank), szTimeout (not all arrived by `deadline`), szRemoteError (the address is not this
// communicator's root), szSystemError.
szResult_t szRendezvousJoin(const szUniqueId& id, int rank, int nranks, const szSocketAddress& myListen,
                            szDeadline deadline, std::vector<szSocketAddress>* peers,
                            uint8_t sessionKey[kSzKeyBytes]);
