// Result codes: their names, the per-thread last detailed error message, and each
// communicator's asynchronous error message.
#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "base/checks.h"

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

const char* szResultName(szResult_t res) {
  static const char* const kNames[] = {
      "szSuccess",      "szUnhandledCudaError", "szSystemError", "szInternalError", "szInvalidArgument",
      "szInvalidUsage", "szRemoteError",        "szInProgress",  "szCorruptFrame",  "szTimeout"};
  return res >= 0 && res < szNumResults ? kNames[res] : "unknown szResult_t";
}

const char* szThreadLastError() { return tLastError; }

namespace {
std::mutex gCommMu;
std::map<const void*, std::string> gCommErrors;  // a communicator's asynchronous error message
}  // namespace

void szSetCommError(const szComm* comm, const char* message) {
  std::lock_guard<std::mutex> lock(gCommMu);
  if (message) gCommErrors[comm] = message;
  else gCommErrors.erase(comm);
}

extern "C" const char* szGetLastError(szComm_t comm) {
  if (comm != nullptr) {
    std::lock_guard<std::mutex> lock(gCommMu);
    auto it = gCommErrors.find(comm);
    if (it != gCommErrors.end()) return it->second.c_str();  // stable until szSetCommError(comm, ...)
  }
  return tLastError;
}
