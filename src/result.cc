// Result codes: their names and the per-thread last detailed error message (a communicator's
// own is in comm.cc).
#include <cstdarg>
#include <cstdio>

#include "checks.h"

namespace {
thread_local char tLastError[1024];
}

szResult_t szSetError(szResult_t res, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tLastError, sizeof(tLastError), fmt, ap);
  va_end(ap);
  INFO(SZ_ALL, "error %d: %s", (int)res, tLastError);
  return res;
}

extern "C" const char* szGetErrorString(szResult_t result) {
  switch (result) {
    case szSuccess: return "no error";
    case szUnhandledCudaError: return "unhandled cuda error (run with SZ_DEBUG=INFO for details)";
    case szSystemError: return "unhandled system error (run with SZ_DEBUG=INFO for details)";
    case szInternalError: return "internal error - please report this issue to the SplitZip developers";
    case szInvalidArgument: return "invalid argument (szGetLastError or SZ_DEBUG=INFO for details)";
    case szInvalidUsage: return "invalid usage (szGetLastError or SZ_DEBUG=INFO for details)";
    case szRemoteError: return "remote process exited or there was a network error";
    case szInProgress: return "SplitZip operation in progress";
    case szCorruptFrame: return "corrupt frame: validation or checksum failed";
    case szTimeout: return "operation timed out";
    default: return "unknown result code";
  }
}

const char* szThreadLastError() { return tLastError; }
