// The interposer's routing decision and settings (route.h).
#include "interpose/route.h"

#include <strings.h>

#include <cstdlib>

#include "base/param.h"
#include "codec/dtype.h"
#include "splitzip.h"

namespace szi {

namespace {
SZ_PARAM(Interpose, "INTERPOSE", 1)
}  // namespace

Policy readPolicy() {
  Policy p;
  p.enabled = szParamInterpose() != 0;
  const char* c = getenv("SZ_CODEC");
  if (c == nullptr || *c == '\0' || strcasecmp(c, "auto") == 0) p.codec = SZ_CODEC_AUTO;
  else if (strcasecmp(c, "on") == 0) p.codec = SZ_CODEC_ON;
  else if (strcasecmp(c, "off") == 0) p.codec = SZ_CODEC_OFF;
  else {
    p.valid = false;
    p.error = "SZ_CODEC names no codec mode (on, off or auto)";
  }
  // auto: what SplitZip's own auto mode sends raw in any case; on: everything with an element.
  p.minBytes = p.codec == SZ_CODEC_AUTO ? uint64_t(szParamAutoMinBytes()) : 1;
  return p;
}

const Policy& policy() {
  static const Policy p = readPolicy();
  return p;
}

bool interposing(const Policy& p) { return p.enabled && p.valid && p.codec != SZ_CODEC_OFF; }

uint64_t policyDigest(const Policy& p) { return (p.minBytes << 2) | uint64_t(p.codec & 3); }

Decision decide(bool interposed, int type, size_t count, int peer, int rank, bool capturing, const Policy& p) {
  if (!interposing(p)) return {Route::Forward, "interposer off"};
  if (!interposed) return {Route::Forward, "communicator not interposed"};
  if (type < 0 || type >= szNumTypes || !sz::gpuCodecType(type))
    return {Route::Forward, "type not compressed by SplitZip"};
  size_t es = szTypeSize(szDataType_t(type));
  if (count == 0 || count > SIZE_MAX / es || count * es < p.minBytes)
    return {Route::Forward, "empty, or below SZ_AUTO_MIN_BYTES"};
  if (peer == rank) return {Route::Forward, "peer is this rank"};
  if (capturing) return {Route::Forward, "stream capturing a CUDA graph"};
  return {Route::Intercept, "compressible"};
}

int toNcclResult(int szResult) {
  switch (szResult) {
    case szSuccess: return 0;               // ncclSuccess
    case szUnhandledCudaError: return 1;    // ncclUnhandledCudaError
    case szInternalError: return 3;         // ncclInternalError
    case szInvalidArgument: return 4;       // ncclInvalidArgument
    case szInvalidUsage: return 5;          // ncclInvalidUsage
    case szRemoteError: return 6;           // ncclRemoteError
    case szInProgress: return 7;            // ncclInProgress
    default: return 2;                      // ncclSystemError: system, corrupt frame, timeout
  }
}

}  // namespace szi
