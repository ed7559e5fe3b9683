// What a failed work completion means for the slot protocol, in the codes the tcp wire uses for
// the same failures: the peer went away or refused (its process ended, its queue pair or memory
// is gone, the link is down) is szRemoteError, as a reset connection is on tcp; a request this
// side got wrong is szInternalError; the device failing is szSystemError. Pure mapping,
// unit-tested (tests/ib_verbs_test.cc).
#pragma once

#include <infiniband/verbs.h>

#include "splitzip.h"

szResult_t szIbWcResult(enum ibv_wc_status status);
// A short reason for the log and the error message ("the peer stopped answering ...").
const char* szIbWcReason(enum ibv_wc_status status);
