// Which point-to-point operation the interposer sends through SplitZip and which it forwards to
// NCCL untouched. Pure logic, no NCCL or CUDA: tested on the CPU (tests/interpose_route_test.cc).
//
// Both ranks of a send/recv pair must decide alike without talking, or one side would speak
// SplitZip's protocol to a peer listening for NCCL's. So a decision reads only what NCCL already
// requires both sides to agree on (element type and count) and what the handshake made equal
// on every rank of the communicator (whether it is interposed; the policy below). It never
// reads the buffer (device or host memory is a property of one side only).
#pragma once

#include <cstddef>
#include <cstdint>

namespace szi {

// The process's interposer settings: SZ_INTERPOSE, SZ_CODEC and SZ_AUTO_MIN_BYTES.
struct Policy {
  bool enabled = true;      // SZ_INTERPOSE (default 1); 0: every call goes to NCCL untouched
  int codec = 2;            // SZ_CODEC_OFF / ON / AUTO (splitzip.h)
  uint64_t minBytes = 0;    // messages below this many bytes go to NCCL
  bool valid = true;        // false: SZ_CODEC names no mode (the reason is in `error`)
  const char* error = "";
};

// Reads the settings once per call (the process's copy is policy()).
Policy readPolicy();
const Policy& policy();

// Whether this process makes SplitZip communicators at all: enabled, a valid SZ_CODEC, and a
// codec that is not off (SplitZip's raw path never beats NCCL's own).
bool interposing(const Policy& p);

// The settings every rank of a communicator must share (the handshake compares them).
uint64_t policyDigest(const Policy& p);

enum class Route { Forward, Intercept };
struct Decision {
  Route route;
  const char* reason;  // why, for SZ_DEBUG=TRACE
};

// The route of a send or receive of `count` elements of ncclDataType_t `type` to `peer` on a
// communicator (`interposed`: it has a SplitZip communicator; `rank`: this rank in it).
// `capturing`: the stream is being captured into a CUDA graph: forwarded, since the interposed
// communicator's wire may be nccl, whose operations SplitZip cannot capture (docs/PIPELINE.md,
// "CUDA graphs"); both sides of a pair capture alike, as NCCL's own graph use requires.
Decision decide(bool interposed, int type, size_t count, int peer, int rank, bool capturing, const Policy& p);

// The ncclResult_t value for a szResult_t value (the numbering of both enums is public; NCCL has
// no codes for a corrupt frame or a timeout: both are reported as ncclSystemError, with
// SplitZip's message in ncclGetLastError).
int toNcclResult(int szResult);

}  // namespace szi
