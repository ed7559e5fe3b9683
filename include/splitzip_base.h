/*
 * splitzip_base.h — SplitZip's version, result codes, data types and error strings: the bottom
 * of the public C API (include <splitzip.h>, which includes every part; arXiv 2605.01708).
 *
 * Conventions (as in nccl.h), for every function of every part:
 *  - every call that can fail returns szResult_t; szGetErrorString() names the code and
 *    szGetLastError(NULL) returns the calling thread's last detailed message;
 *  - "count" is always a number of ELEMENTS of the given szDataType_t, "bytes" is bytes;
 *  - szDataType_t uses ncclDataType_t's numbering, so (szDataType_t)ncclBfloat16 works;
 *  - each function's comment states, besides what it does: the units of its sizes, the
 *    alignment its pointers need ("any alignment" where none), whether it is host-only and
 *    returns when done or stream-ordered (what it enqueues, when its buffers may be reused),
 *    each error code it returns and when, and the paper section it implements ("Paper: none"
 *    for a utility).
 */
#ifndef SPLITZIP_BASE_H_
#define SPLITZIP_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same declaration as in cuda_runtime_api.h, so this header compiles without CUDA. */
typedef struct CUstream_st* cudaStream_t;

#define SZ_MAJOR 0
#define SZ_MINOR 1
#define SZ_PATCH 0
#define SZ_VERSION_CODE (SZ_MAJOR * 10000 + SZ_MINOR * 100 + SZ_PATCH)

typedef enum {
  szSuccess = 0,
  szUnhandledCudaError = 1, /* a CUDA call failed (or no CUDA device / build without CUDA) */
  szSystemError = 2,        /* a system call failed (file, socket, memory allocation) */
  szInternalError = 3,      /* a bug in SplitZip: please report it */
  szInvalidArgument = 4,    /* a bad argument: NULL pointer, bad type, too-small buffer */
  szInvalidUsage = 5,       /* a call that is not valid now (e.g. a frame of another type) */
  szRemoteError = 6,        /* the peer failed or went away */
  szInProgress = 7,         /* non-blocking operation still running */
  szCorruptFrame = 8,       /* a frame failed validation: truncated, bad field, CRC mismatch */
  szTimeout = 9,            /* no progress for the configured timeout (a silent or stuck peer) */
  szNumResults = 10
} szResult_t;

/* ncclDataType_t numbering. BF16, FP32 and FP8 E5M2 (format version 1), FP16 and FP8 E4M3
 * (format version 2, 3- or 4-bit codes) are compressed everywhere: the CPU codec, the GPU codec
 * and the communicator on host and device buffers; every other type is carried raw (bit-exact)
 * inside a frame. */
typedef enum {
  szInt8 = 0,
  szUint8 = 1,
  szInt32 = 2,
  szUint32 = 3,
  szInt64 = 4,
  szUint64 = 5,
  szFloat16 = 6,
  szFloat32 = 7,
  szFloat64 = 8,
  szBfloat16 = 9,
  szFloat8e4m3 = 10,
  szFloat8e5m2 = 11,
  szNumTypes = 12
} szDataType_t;

/* Size of one element of `type` in BYTES; 0 for an invalid type (no error code: the size is
 * the result). Host-only, returns at once. Paper: none (a utility). */
size_t szTypeSize(szDataType_t type);

/* 1 if the codecs compress `type` (BF16, FP32, FP8 E5M2, FP16, FP8 E4M3), 0 if it is always
 * stored raw (or invalid): the CPU codec, the GPU codec and the communicator (host and device
 * buffers) alike. Host-only, returns at once; no error code. Paper §3.1 (the types whose
 * exponents the codebook codes). */
int szTypeIsCompressible(szDataType_t type);

/* A static, never-freed string naming `result` ("unknown result code" for a value outside
 * szResult_t; no error code). Host-only, returns at once, thread-safe. Paper: none. */
const char* szGetErrorString(szResult_t result);

/* The version of the library loaded, as SZ_VERSION_CODE (ncclGetVersion's convention: major *
 * 10000 + minor * 100 + patch), which may differ from the header's when a program runs with
 * another libsplitzip.so. `version` naturally aligned. Host-only, returns at once.
 * Errors: szInvalidArgument (`version` NULL). Paper: none. */
szResult_t szGetVersion(int* version);

/* The last detailed error message. comm == NULL: the calling thread's (valid until its next
 * failing call). A communicator: the message of its asynchronous error (szCommGetAsyncError:
 * a failed operation, a failed non-blocking init; valid until szCommDestroy/szCommAbort), or
 * the calling thread's when it has none. Never NULL; "" when there was none (no error code).
 * Host-only, returns at once. Paper: none. */
struct szComm;
typedef struct szComm* szComm_t;
const char* szGetLastError(szComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* SPLITZIP_BASE_H_ */
