// What the interposer's two export files share: the calling thread's last SplitZip error (for
// ncclGetLastError) and the settings test.
#pragma once

#include "interpose/nccl_compat.h"

#include <string>

namespace szi {

// The message of the calling thread's last failed intercepted call; cleared when a forwarded
// call fails after it, so ncclGetLastError names the newest failure.
std::string& threadSzError();

// The interposer is on (SZ_INTERPOSE, SZ_CODEC valid and not off): otherwise every export is a
// plain forward.
bool on();

// Whether a config (may be null) makes a blocking communicator (NCCL's default, unless
// NCCL_COMM_BLOCKING=0). Non-blocking communicators are forwarded whole.
bool blockingConfig(const ncclConfig_t* config);

}  // namespace szi
