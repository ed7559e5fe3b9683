// One error path (NCCL checks.h style): SZCHECK returns early on failure and logs the call
// site at SZ_DEBUG=INFO; SZCHECKGOTO unwinds through a label; szSetError records the
// thread's last detailed message.
#pragma once

#include "splitzip.h"
#include "base/debug.h"

// Records `fmt` as the calling thread's last error message and returns `res`.
szResult_t szSetError(szResult_t res, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The code's enum name ("szInvalidUsage"), for messages that nest another error's: its
// szGetErrorString would repeat the "(szGetLastError or SZ_DEBUG=INFO ...)" hint.
const char* szResultName(szResult_t res);
// The calling thread's last error message ("" if none).
const char* szThreadLastError();
// Sets (message) or forgets (NULL) the message szGetLastError(comm) returns for `comm`.
void szSetCommError(const szComm* comm, const char* message);

#define SZCHECK(call)                                                  \
  do {                                                                 \
    szResult_t sz_res_ = (call);                                       \
    if (sz_res_ != szSuccess) {                                        \
      INFO(SZ_ALL, "%s:%d -> %d", __FILE__, __LINE__, (int)sz_res_);   \
      return sz_res_;                                                  \
    }                                                                  \
  } while (0)

#define SZCHECKGOTO(call, res, label)                                  \
  do {                                                                 \
    (res) = (call);                                                    \
    if ((res) != szSuccess) {                                          \
      INFO(SZ_ALL, "%s:%d -> %d", __FILE__, __LINE__, (int)(res));     \
      goto label;                                                      \
    }                                                                  \
  } while (0)
