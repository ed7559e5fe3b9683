// NCCL's header with the calls newer than the oldest release SplitZip builds against (2.19).
// The interposer exports and forwards them whatever header it is compiled with, and the real
// NCCL is resolved at run time (real_nccl.h), so each such call is declared here too: a header
// that has it sees an identical redeclaration, one that lacks it (the H200 image's 2.28.3 has no
// ncclCommRevoke) gets it from here.
#pragma once

#include <nccl.h>

extern "C" {
// NCCL 2.28.x: stops a communicator's operations in flight; revokeFlags must be 0.
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
}
