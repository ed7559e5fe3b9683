// Send/receive to self (peer == own rank), as NCCL allows them: within one group the n-th send
// to self is matched with the n-th receive from self, and the data is copied in memory, never
// through a wire. Host buffers: memcpy at szGroupEnd. Device buffers: a stream-ordered copy by
// the multiprocessors (kernels/sm_copy.h, never the copy engines) on the receive's stream, with
// the send's stream joined to it before and after when the two differ.
#pragma once

#include <memory>
#include <vector>

#include "src/comm.h"

namespace sz {

// Takes the self operations out of `ops`, checks that they pair up (szInvalidUsage for a send
// without its receive in the group, or a count or type that differs; szInvalidArgument for a
// pair mixing host and device buffers), and only then copies every pair. Nothing is copied
// when an error is returned.
szResult_t runSelfOps(szComm* comm, std::vector<std::shared_ptr<Op>>& ops);

}  // namespace sz
