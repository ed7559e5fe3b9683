// Making the SplitZip communicator of an NCCL communicator (szCommInitFromNccl), collectively.
//
// Where: at the end of the NCCL call that created the communicator (ncclCommInitRank*,
// ncclCommInitAll, ncclCommSplit), or, for one issued inside a group, at the end of the
// outermost ncclGroupEnd that ran it. Every rank of the new communicator is inside that call
// (NCCL's init does not return before all ranks joined), so the broadcast and splits that
// szCommInitFromNccl issues on it are matched on every rank and come before any operation of
// the program's. Never lazily at a first send: a rank that never sends or receives on a
// communicator would not take part.
// Whether: the handshake's verdict (handshake.h) for ncclCommInitRank*; the parent's state for a
// split (every rank of an interposed parent runs the interposer); always for ncclCommInitAll (one
// process). Afterwards all ranks agree with an NCCL all-reduce (min) whether every one of them
// made its SplitZip communicator: if one failed, all forward and the others abort theirs.
#pragma once

#include <vector>

#include "interpose/group_state.h"

namespace szi {

// Finishes the handshakes of `list` (initOk: the NCCL init's outcome on this rank) and makes and
// registers the SplitZip communicators that the verdicts allow, each communicator on its own
// thread when there are several (ranks of one process: their collectives must overlap).
void attachAll(const std::vector<PendingAttach>& list, bool initOk);

}  // namespace szi
