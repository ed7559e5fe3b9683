/*
 * splitzip.h — the whole public C API of SplitZip (lossless KV-cache compression for
 * disaggregated LLM serving; arXiv 2605.01708).
 *
 * Conventions (as in nccl.h):
 *  - every call that can fail returns szResult_t; szGetErrorString() names the code and
 *    szGetLastError(NULL) returns the calling thread's last detailed message;
 *  - "count" is always a number of ELEMENTS of the given szDataType_t, "bytes" is bytes;
 *  - szDataType_t uses ncclDataType_t's numbering, so (szDataType_t)ncclBfloat16 works.
 *
 * The frame format the codec reads and writes is specified in docs/FORMAT.md (paper §3).
 */
#ifndef SPLITZIP_H_
#define SPLITZIP_H_

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

/* Size of one element of `type` in bytes; 0 for an invalid type. */
size_t szTypeSize(szDataType_t type);

/* 1 if the codecs compress `type` (BF16, FP32, FP8 E5M2, FP16, FP8 E4M3), 0 if it is always
 * stored raw: the CPU codec, the GPU codec and the communicator (host and device buffers) alike. */
int szTypeIsCompressible(szDataType_t type);

const char* szGetErrorString(szResult_t result);

/* The version of the library loaded, as SZ_VERSION_CODE (ncclGetVersion's convention: major *
 * 10000 + minor * 100 + patch), which may differ from the header's when a program runs with
 * another libsplitzip.so. Errors: szInvalidArgument (NULL). */
szResult_t szGetVersion(int* version);

/* The last detailed error message. comm == NULL: the calling thread's (valid until its next
 * failing call). A communicator: the message of its asynchronous error (szCommGetAsyncError:
 * a failed operation, a failed non-blocking init; valid until szCommDestroy/szCommAbort), or
 * the calling thread's when it has none. Never NULL; "" when there was none. */
struct szComm;
typedef struct szComm* szComm_t;
const char* szGetLastError(szComm_t comm);

/* ---------------------------------------------------------------------------------------
 * Codebook (paper §3.2-§3.3). Distinct biased exponents; exponent exponents[i] is encoded as
 * the exponent code i. Exponents outside the codebook are escapes. Exponents are 8-bit
 * (0..255) for BF16/FP32, 5-bit (0..31) for FP16 and FP8 E5M2, 4-bit (0..15) for FP8 E4M3.
 * `used` is how many entries calibration actually saw; the remaining entries are padding
 * exponents (distinct, never seen) so that every code decodes to a valid exponent.
 * Code width (docs/FORMAT.md §Code width): a 4-bit codebook has 16 entries (used 1..16); a
 * 3-bit codebook (format version 2) has 8 (used 1..8) and marks entries 8..15
 * SZ_CODEBOOK_UNUSED. The struct is 0.1.0's, so programs built against it keep working; 0.1.0
 * itself refuses a 3-bit codebook (its entries would repeat).
 * ------------------------------------------------------------------------------------- */
#define SZ_CODEBOOK_SIZE 16
#define SZ_CODEBOOK_UNUSED 0xFF
typedef struct {
  szDataType_t type;
  int used;
  uint8_t exponents[SZ_CODEBOOK_SIZE];
} szCodebook_t;

/* Exponent histogram for calibration: counts[e] = elements whose biased exponent is e. */
typedef struct {
  szDataType_t type;
  unsigned long long counts[256];
} szHistogram_t;

/* Resets `hist` for `type`. Errors: szInvalidArgument (NULL, type not compressible). */
szResult_t szHistogramInit(szHistogram_t* hist, szDataType_t type);

/* Adds the exponents of `count` elements at host pointer `data` (any alignment) to `hist`.
 * Errors: szInvalidArgument (NULL with count > 0). Paper §3.3. */
szResult_t szHistogramAccumulate(szHistogram_t* hist, const void* data, size_t count);

/* Builds a codebook from a histogram: the 2^bits most frequent exponents, ties broken by the
 * smaller exponent, ordered by decreasing frequency; unused entries padded. Paper §3.3. The
 * width is calibration's choice: for FP16 and FP8 E4M3 the one whose predicted frame is
 * smaller (szCodebookPredictRatio); BF16, FP32 and FP8 E5M2 keep 4-bit codes, the ones the
 * GPU codec and the communicator carry. Errors: szInvalidArgument. */
szResult_t szCodebookFromHistogram(const szHistogram_t* hist, szCodebook_t* codebook);

/* The same with the width given: codeBits 3 or 4. Paper §3.3 (the top-2^bits exponents).
 * Errors: szInvalidArgument (NULL, invalid histogram type, codeBits not 3 or 4). */
szResult_t szCodebookFromHistogramBits(const szHistogram_t* hist, int codeBits, szCodebook_t* codebook);

/* The ratio (uncompressed / compressed bits, headers and padding left out) that a codebook of
 * `codeBits`-bit codes built from `hist` predicts for the histogram's data: escapes cost their
 * 3-byte records. 1.0 when the frame would be stored raw (or the histogram is empty). Paper
 * Table 1's predicted ratio. Errors: szInvalidArgument (NULL, codeBits not 3 or 4). */
szResult_t szCodebookPredictRatio(const szHistogram_t* hist, int codeBits, double* ratio);

/* Checks a codebook: compressible type, 1 <= used <= 2^bits, entries distinct and in range
 * (a 3-bit codebook's entries 8..15 SZ_CODEBOOK_UNUSED).
 * Errors: szInvalidArgument with a message saying which rule failed. */
szResult_t szCodebookValidate(const szCodebook_t* codebook);

/* The width of a codebook's exponent codes, 3 or 4, in *codeBits (docs/FORMAT.md §Code width;
 * paper §3.2's exponent code). Errors: szInvalidArgument (NULL, or a codebook
 * szCodebookValidate refuses). */
szResult_t szCodebookCodeBits(const szCodebook_t* codebook, int* codeBits);

/* The built-in default codebook for `type`, calibrated on real KV caches (tests/data/README.md
 * says which model and text). Errors: szInvalidArgument (type not compressible). */
szResult_t szCodebookDefault(szDataType_t type, szCodebook_t* codebook);

/* Saves / loads a codebook file (a small text file, format in docs/FORMAT.md §Codebook file).
 * Errors: szSystemError (I/O), szInvalidArgument (malformed file or codebook). */
szResult_t szCodebookSave(const szCodebook_t* codebook, const char* path);
szResult_t szCodebookLoad(const char* path, szCodebook_t* codebook);

/* ---------------------------------------------------------------------------------------
 * Host (CPU) codec. Frames are byte-identical to the GPU codec's. Paper §3.
 * ------------------------------------------------------------------------------------- */

/* Encode flags. */
#define SZ_ENCODE_CRC 0x1       /* store CRC32C of header and payload; decode verifies them */
#define SZ_ENCODE_CALIBRATE 0x2 /* online calibration: build the codebook from the input itself */

/* Size of the fixed frame header in bytes. */
#define SZ_FRAME_HEADER_BYTES 96

/* Upper bound on the frame size of `count` elements of `type`:
 * SZ_FRAME_HEADER_BYTES + count * szTypeSize(type) (a frame never exceeds its raw size plus
 * the header; see docs/FORMAT.md). Errors: szInvalidArgument (bad type, size overflows). */
szResult_t szEncodeMaxSize(size_t count, szDataType_t type, size_t* maxBytes);

/* Encodes `count` elements at host pointer `in` (any alignment) into a frame at `out`
 * (`outCapacity` bytes, any alignment). `codebook` may be NULL: the built-in default, or with
 * SZ_ENCODE_CALIBRATE one computed from `in` (a codebook given wins over SZ_ENCODE_CALIBRATE).
 * Incompressible data and types are stored raw; for incompressible types `codebook` is not read.
 * The frame is format version 1 where that can hold it, else version 2 (FP16 and E4M3
 * compressed, or a 3-bit codebook; docs/FORMAT.md "Code width"; paper §3.1-§3.2).
 * Large inputs are encoded by several threads (SZ_CPU_THREADS, default: all cores).
 * On success *outBytes is the frame size.
 * Errors: szInvalidArgument (NULL pointers, bad type, for a compressible type a codebook of
 * another type or invalid, outCapacity smaller than the frame needs: use szEncodeMaxSize). */
szResult_t szEncode(const void* in, size_t count, szDataType_t type, const szCodebook_t* codebook,
                    int flags, void* out, size_t outCapacity, size_t* outBytes);

/* What a frame header says, after validating it against `frameBytes`. */
typedef struct {
  szDataType_t type;
  size_t count;        /* elements */
  size_t frameBytes;   /* total size of the frame */
  size_t escapeCount;  /* escapes stored (0 for raw frames) */
  int raw;             /* 1 if the payload is stored raw */
  int crc;             /* 1 if the frame carries CRC32C checksums */
  szCodebook_t codebook; /* the frame's (a 3-bit one marked as such: szCodebookCodeBits); zeros if raw */
} szFrameInfo_t;

/* Parses and validates the header of the frame at `frame` (`frameBytes` available).
 * Errors: szCorruptFrame (bad magic, version, field, section sizes, truncation). */
szResult_t szFrameGetInfo(const void* frame, size_t frameBytes, szFrameInfo_t* info);

/* Decodes the frame at `frame` into `out` (`outCapacity` bytes; needs info.count *
 * szTypeSize(info.type)). `frameBytes` may exceed the frame (the rest is ignored). Every
 * escape is bounds-checked; with CRC both checksums are verified before `out` is written.
 * Optional outputs `count`, `type` may be NULL.
 * Errors: szCorruptFrame (any inconsistency: nothing past outCapacity is ever written, but
 * `out` may hold partial data), szInvalidArgument (NULL, outCapacity too small). */
szResult_t szDecode(const void* frame, size_t frameBytes, void* out, size_t outCapacity,
                    size_t* count, szDataType_t* type);

/* ---------------------------------------------------------------------------------------
 * Device (CUDA) codec: stream-ordered, no host synchronization inside. Paper §3, App. A.
 * Each call returns szUnhandledCudaError when the library was built without CUDA.
 * ------------------------------------------------------------------------------------- */

/* Temporary device memory (bytes) szEncodeAsync needs for `count` elements of `type`, 8-byte
 * aligned (cudaMalloc's is): 2080 bytes (the SZ_ENCODE_CALIBRATE histogram and codebook), 4
 * bytes per range of chunks (each range's escape total; max(min(chunks, W),
 * ceil(chunks / 32)) ranges, W = chunks / 8 held within [8192, 16384]) and 48 bytes per
 * 1024-element chunk (its first 16 escape records), i.e. about 3 * 16 bytes per 1024
 * elements: 2.3 % of BF16 input. FP16 and FP8 E4M3 take 192 bytes per chunk (64 records:
 * their KV escapes about 2 % of its elements at 3-bit codes), 9.4 % and 18.8 % of their
 * input. It needs no
 * initialization: szEncodeAsync reads only what it wrote.
 * Errors: szInvalidArgument (NULL, bad type, overflowing count). */
szResult_t szEncodeTempSize(size_t count, szDataType_t type, size_t* tempBytes);

/* Encodes `count` elements at device pointer `d_in` into a frame at device pointer `d_out`
 * (`outCapacity` bytes, at least szEncodeMaxSize) on `stream`. `codebook` (host struct, copied
 * at the call; NULL = default). `flags`: SZ_ENCODE_CRC is not supported on the device
 * (szInvalidUsage). `d_temp` is caller-provided device memory of szEncodeTempSize bytes
 * (reusable once the encode completes on `stream`). The frame size is written as a uint64_t
 * to `outBytes`, device or mapped pinned memory, when the encode completes on `stream`.
 * Any pointer alignment works; 16-byte aligned `d_in`/`d_out` take the fast path. Frames are
 * byte-identical to szEncode's for the same input and codebook: BF16, FP32 and FP8 E5M2 with
 * 4-bit codebooks (format version 1), FP16 and FP8 E4M3 with 3- or 4-bit codebooks (version 2;
 * E4M3 with 4-bit codes is always raw, as with szEncode). SZ_ENCODE_CALIBRATE without a
 * codebook calibrates BF16, FP32 and E5M2 on the device; FP16 and E4M3 are then stored raw
 * (calibrate them with szHistogramAsync and szCodebookFromHistogram and pass the codebook).
 * Errors (at enqueue): szInvalidArgument, szInvalidUsage (CRC, a 3-bit codebook of BF16, FP32
 * or E5M2), szUnhandledCudaError. */
szResult_t szEncodeAsync(const void* d_in, size_t count, szDataType_t type,
                         const szCodebook_t* codebook, int flags, void* d_out, size_t outCapacity,
                         uint64_t* outBytes, void* d_temp, size_t tempBytes, cudaStream_t stream);

/* Decodes the frame at device pointer `d_frame` (`frameBytes` available) into device buffer
 * `d_out` (`outCapacity` bytes) on `stream`. The frame is validated on the device; the result
 * is written as an int (a szResult_t value: szSuccess or szCorruptFrame/szInvalidArgument, or
 * szInvalidUsage for a valid compressed frame with 3-bit codes of BF16, FP32 or E5M2, which
 * szDecode decodes; FP16 and FP8 E4M3 frames of either code width decode here) to
 * `status`, device or mapped pinned memory, when the decode completes. A corrupt frame never
 * causes an out-of-bounds access. CRC-carrying frames: checksums are not verified on the
 * device (use szDecode on the host, or the transport's CRC).
 * Errors (at enqueue): szInvalidArgument, szUnhandledCudaError. */
szResult_t szDecodeAsync(const void* d_frame, size_t frameBytes, void* d_out, size_t outCapacity,
                         int* status, cudaStream_t stream);

/* Batched device codec (nvCOMP's batched low-level shape): one launch on `stream` encodes
 * `batchSize` independent items, or decodes them (two launches: the compressed FP16 and FP8
 * E4M3 frames go to a second kernel, which may start before the first ends), e.g. the KV blocks of a
 * paged pool or a transfer's slices; each item is its own frame, byte-identical to szEncode's for the same elements and
 * codebook. Paper §3 (format), App. A (GPU codec).
 *  - Every array argument named d_* is device-readable memory (device, managed or mapped pinned
 *    host memory) of `batchSize` entries, naturally aligned; the call reads none of them on the
 *    host, so it never synchronizes. Item i's pointers are device pointers.
 *  - Item data and frames may have any alignment (an item whose input and output are both
 *    16-byte aligned takes the fast path); no item's output may overlap another item's output
 *    or any input.
 *  - Each item is one warp's work (as many warps run as the GPU holds at once, each taking
 *    items in turn, nvCOMP's batched shape): batches of many small items are this call's
 *    purpose (4096 items of 16 KiB: one H200 busy); a few large items leave most of the GPU
 *    idle, and one large tensor is faster with szEncodeAsync/szDecodeAsync, which spread a
 *    frame over the GPU.
 *  - No temporary memory. Every array and buffer must stay valid until the call completes on
 *    `stream`; then the outputs may be read and the inputs reused.
 *  - Errors of an item (its entries are only visible to the device) go to d_statuses[i], the
 *    item's szResult_t, and leave every other item unaffected; the call's return reports only
 *    what the host can check, and a launch failure.
 *  - batchSize 0: nothing is enqueued and the arrays are not read (they may be NULL).
 *
 * Encode: every item is of `type`; item i is d_counts[i] ELEMENTS at d_ins[i], encoded into
 * the frame at d_outs[i] of d_outCapacities[i] BYTES (at least szEncodeMaxSize(d_counts[i],
 * type)); its frame size in bytes goes to d_outBytes[i] (0 for a failed item).
 * Codebooks (paper §3.3: K and V, or groups of layers, may each compress best with their own):
 * `codebooks` is a host array of `numCodebooks` codebooks of `type` (1..SZ_BATCH_MAX_CODEBOOKS),
 * copied at the call into the launch itself, so the host array may be reused at once and no
 * device memory is needed. Item i uses codebooks[d_codebookIds[i]]; `d_codebookIds` is an
 * optional device-readable array of `batchSize` uint32_t (NULL: every item uses codebooks[0]).
 * codebooks NULL with numCodebooks 0 (and d_codebookIds NULL): the built-in default of `type`
 * for every item. Each frame carries its own codebook, so the decoder needs nothing of this.
 * FP16 and FP8 E4M3 take 3- or 4-bit codebooks, one width for the whole batch (format
 * version 2, byte-identical to szEncode's frames). For types stored raw (every type but BF16,
 * FP32, FP8 E5M2, FP16 and FP8 E4M3 is framed raw, as with szEncode) neither `codebooks` nor
 * `d_codebookIds` is read (the rules on their presence and count below still hold). `flags`: 0; SZ_ENCODE_CRC and
 * SZ_ENCODE_CALIBRATE are szInvalidUsage (calibrate with szHistogramAsync and
 * szCodebookFromHistogram, once per group of items, and pass the codebooks).
 * Item statuses: szSuccess; szInvalidArgument (d_ins[i] NULL with a count > 0, d_outs[i] NULL,
 * capacity below szEncodeMaxSize, a count whose size overflows, d_codebookIds[i] >=
 * numCodebooks): its frame is not written.
 * Errors (at enqueue): szInvalidArgument (bad type, unknown flags, a NULL array with
 * batchSize > 0, numCodebooks above SZ_BATCH_MAX_CODEBOOKS, codebooks NULL with numCodebooks > 0
 * or given with numCodebooks 0, d_codebookIds without codebooks, for a compressible type an
 * invalid codebook or one of another type: the message names its index), szInvalidUsage (CRC,
 * calibration, a 3-bit codebook of BF16, FP32 or E5M2, FP16 or E4M3 codebooks of two widths),
 * szUnhandledCudaError (no device, launch failure, a build without CUDA). */
#define SZ_BATCH_MAX_CODEBOOKS 64
szResult_t szEncodeBatchAsync(const void* const* d_ins, const size_t* d_counts, size_t batchSize,
                              szDataType_t type, const szCodebook_t* codebooks, size_t numCodebooks,
                              const uint32_t* d_codebookIds, int flags, void* const* d_outs,
                              const size_t* d_outCapacities, size_t* d_outBytes,
                              szResult_t* d_statuses, cudaStream_t stream);

/* Decode: item i is the frame at d_frames[i] (d_frameBytes[i] BYTES available; more than the
 * frame is fine, so szEncodeBatchAsync's d_outBytes can be passed as is), decoded into d_outs[i]
 * of d_outCapacities[i] BYTES. Frames are self-describing: items may differ in type and size,
 * and any SplitZip frame decodes (CRC-carrying frames without checking their CRCs, as
 * szDecodeAsync). `d_outCounts` (optional, NULL: not written): the ELEMENTS item i decoded (0 for
 * a failed item). Every frame is validated on the device; whatever a frame holds, item i reads
 * only its d_frameBytes[i] bytes and writes only its d_outCapacities[i] bytes.
 * Item statuses: szSuccess; szCorruptFrame (any inconsistency, as szDecode: the item's output may
 * hold partial data); szInvalidUsage (a valid compressed frame with 3-bit codes of BF16, FP32
 * or E5M2: szDecode's);
 * szInvalidArgument (d_frames[i] NULL, d_outs[i] NULL with a capacity > 0,
 * capacity below the frame's decoded size: its output is not written).
 * Errors (at enqueue): szInvalidArgument (a NULL required array with batchSize > 0),
 * szUnhandledCudaError (no device, launch failure, a build without CUDA; after a launch
 * failure the items' statuses are undefined). */
szResult_t szDecodeBatchAsync(const void* const* d_frames, const size_t* d_frameBytes,
                              size_t batchSize, void* const* d_outs,
                              const size_t* d_outCapacities, size_t* d_outCounts,
                              szResult_t* d_statuses, cudaStream_t stream);

/* Adds the exponent histogram of `count` elements at device pointer `d_data` to the device
 * array `d_counts` (256 x unsigned long long, zeroed by the caller) on `stream`.
 * Paper §3.3. Errors: szInvalidArgument, szUnhandledCudaError. */
szResult_t szHistogramAsync(const void* d_data, size_t count, szDataType_t type,
                            unsigned long long* d_counts, cudaStream_t stream);

/* ---------------------------------------------------------------------------------------
 * Communicator: NCCL-semantics point-to-point with the codec fused into the slot protocol
 * (paper §4, App. B). Swapping `nccl` for `sz` is the port; differences from NCCL are listed
 * in docs/PIPELINE.md.
 * ------------------------------------------------------------------------------------- */

#define SZ_UNIQUE_ID_BYTES 128
/* Rendezvous address and a random secret; pass it to every rank (MPI_Bcast, a file, ...). An id
 * is a capability: whoever holds it can join the communicator as any rank not yet taken, so
 * share it as a password (never log it or send it in the clear over an untrusted network). */
typedef struct {
  char internal[SZ_UNIQUE_ID_BYTES];
} szUniqueId;

/* Creates a unique id: starts the rendezvous (root) listener in this process, like
 * ncclGetUniqueId, and holds a random key that admits ranks to it. With SZ_COMM_ID=host:port
 * set, the id names that address instead, and the rank-0 process listens there (so processes
 * started separately find each other); the key is then HMAC-SHA256(SZ_COMM_SECRET, SZ_COMM_ID):
 * without SZ_COMM_SECRET anyone who can reach the address can join (a WARN says so, at the
 * default level; the perf tools and Python's Communicator.from_env refuse it). Either
 * way the rendezvous gives the communicator a fresh random session key that every later
 * connection between its ranks must prove (docs/PIPELINE.md, "What the wire protects").
 * Errors: szInvalidArgument (NULL), szSystemError (no address / cannot listen). */
szResult_t szGetUniqueId(szUniqueId* uniqueId);

/* Codec modes of szConfig_t.codec. */
#define SZ_CODEC_OFF 0  /* send raw: SplitZip is a plain pipelined wire */
#define SZ_CODEC_ON 1   /* compress every compressible message */
#define SZ_CODEC_AUTO 2 /* compress only where the wire/codec model says it pays (default) */

/* Codebook modes of szConfig_t.codebookMode (paper §3.3; docs/PIPELINE.md, "Codebooks that
 * follow the data"). Frames carry their codebook, so the receiver's mode does not matter to it. */
#define SZ_CODEBOOK_AUTO 0    /* start from `codebook` (NULL: each type's built-in default); a
                                 sender calibrates its first slice per peer and type on the data
                                 it sends (its top-16 when that gains), and one that sees its
                                 frames escape more than the codebook should give recalibrates
                                 and switches (default). Device operations follow one operation
                                 behind (docs/PIPELINE.md) */
#define SZ_CODEBOOK_DEFAULT 1 /* each type's built-in default (szCodebookDefault), never changed;
                                 `codebook` must be NULL */
#define SZ_CODEBOOK_FIXED 2   /* `codebook` (required) for its type, the default for the other
                                 types, never changed; 3-bit codes only for FP16 and FP8 E4M3,
                                 else szInvalidUsage at init */

typedef struct {
  size_t size;           /* sizeof(szConfig_t) */
  unsigned int magic;    /* SZ_CONFIG_MAGIC */
  unsigned int version;  /* SZ_VERSION_CODE */
  const char* wire;      /* "tcp", "ipc", "nccl", "ib" for every pair of ranks, or NULL: SZ_WIRE,
                            else chosen at init per pair (alike on both ranks): tcp where either
                            has no GPU or the two are processes sharing one, ipc for GPUs of one
                            node that reach each other peer-to-peer (threads sharing one GPU
                            too), else nccl (tcp where NCCL cannot serve every rank) */
  int codec;             /* SZ_CODEC_*, or -1: SZ_CODEC (on|off|auto, default auto) */
  const szCodebook_t* codebook; /* see codebookMode; NULL: the built-in default of each type */
  size_t sliceBytes;     /* host buffers: uncompressed bytes per slice, 1024 to 1 GiB (rounded up
                            to 4 KiB); 0: SZ_SLICE_BYTES (default 512 KiB) */
  int pipelineDepth;     /* host buffers: codec threads per group; 2x this many slots per peer and
                            direction; 0: SZ_PIPELINE_DEPTH (4) */
  int blocking;          /* 1 (default): init blocks; 0: init returns szInProgress at once and
                            finishes on its own thread (NCCL's non-blocking communicators) */
  int timeoutMs;         /* an operation that makes no progress this long fails (szTimeout; a
                            long transfer that keeps moving never does); 0: SZ_TIMEOUT_MS (60000) */
  int crc;               /* 1: CRC32C on every slice of host buffers (frames and raw); -1: SZ_CRC */
  /* Fields after this point came after 0.1.0; a struct of 0.1.0's size (without them) is still
   * accepted, its missing fields taking their -1/NULL defaults. */
  int codebookMode;      /* SZ_CODEBOOK_*, or -1: SZ_CODEBOOK_FIXED when `codebook` is set,
                            else SZ_CODEBOOK (auto, default or a codebook file: fixed; default
                            auto) */
} szConfig_t;

#define SZ_CONFIG_MAGIC 0x535A4346u
#define SZ_CONFIG_INITIALIZER \
  { sizeof(szConfig_t), SZ_CONFIG_MAGIC, SZ_VERSION_CODE, NULL, -1, NULL, 0, 0, 1, 0, -1, -1 }

/* Creates rank `rank` (0..nranks-1) of a communicator of `nranks` ranks named by `commId`.
 * Collective: every rank calls it (from one thread per rank, or one process per rank).
 * With config->blocking = 0 it returns szInProgress with *comm set once the configuration is
 * checked, and the rendezvous runs on its own thread (so one thread can start several ranks):
 * poll szCommGetAsyncError until it gives szSuccess (or the init's error) before any other call
 * on the communicator; szSend/szRecv before that fail with szInvalidUsage, szCommFinalize
 * returns szInProgress, and szCommDestroy/szCommAbort wait for the init to end (at most the
 * timeout).
 * Errors: szInvalidArgument, szSystemError, szRemoteError (a peer failed), szTimeout,
 * szInvalidUsage (ranks disagree on nranks or configuration). */
szResult_t szCommInitRank(szComm_t* comm, int nranks, szUniqueId commId, int rank);
szResult_t szCommInitRankConfig(szComm_t* comm, int nranks, szUniqueId commId, int rank,
                                szConfig_t* config);

/* Wraps a communicator the application already has (ncclComm_t passed as void*): its rank 0
 * broadcasts a unique id with NCCL, so no other rendezvous is needed. Each pair of ranks takes
 * its wire as with szCommInitRank (config->wire or SZ_WIRE force one): pairs of one node with
 * peer access use ipc, other pairs the nccl wire, whose slices travel with ncclSend/ncclRecv on
 * `ncclComm`. SplitZip never destroys it. Collective over its ranks.
 * Errors: as szCommInitRank; szUnhandledCudaError without CUDA/NCCL. */
szResult_t szCommInitFromNccl(szComm_t* comm, void* ncclComm, szConfig_t* config);

/* Finishes all outstanding operations (blocking), then szCommDestroy frees the communicator.
 * Replays of CUDA graphs holding its operations are not waited for: synchronize their streams
 * and destroy the graphs and their instances first (szSend, "CUDA graphs").
 * szCommAbort frees it immediately, failing outstanding operations; safe after any error. */
szResult_t szCommFinalize(szComm_t comm);
szResult_t szCommDestroy(szComm_t comm);
szResult_t szCommAbort(szComm_t comm);
/* The first asynchronous error of the communicator (szSuccess if none; szInProgress while a
 * non-blocking init runs). szGetLastError(comm) then gives its message. May be called from
 * another thread while the communicator's own thread runs groups (a watchdog, as PyTorch polls
 * ncclCommGetAsyncError): it collects finished device operations unless that thread is in the
 * middle of its own, and never waits for it. */
szResult_t szCommGetAsyncError(szComm_t comm, szResult_t* asyncError);
szResult_t szCommCount(const szComm_t comm, int* count);
szResult_t szCommUserRank(const szComm_t comm, int* rank);

/* Sends `count` elements of `type` from `sendbuff` to rank `peer`; szRecv receives them.
 * Each send must match a receive of the same count and type (checked: both sides return
 * szInvalidUsage otherwise); calls to one peer are matched in order.
 * Device buffers: stream-ordered on `stream` like ncclSend/ncclRecv; the call returns once
 * enqueued, and completion on `stream` means the receive buffer holds the data (sender: the
 * buffer may be reused). As NCCL connects p2p peers at runtime, a pair's first device operations
 * connect it: that call (or szGroupEnd) also waits until the peer reaches its own first device
 * operation with this rank (szTimeout after the timeout, failing the communicator);
 * SZ_RUNTIME_CONNECT=0 connects every pair at init instead (docs/PIPELINE.md, "Lazy connections"). A count of 0 is a device operation when the buffer is device memory
 * (or NULL on the nccl wire). Host buffers (or a build without CUDA): the call (or, inside a
 * group, szGroupEnd) returns when the operation is complete; `stream` is ignored. With device
 * buffers, see CUDA_DEVICE_MAX_CONNECTIONS in docs/PIPELINE.md.
 * A group's device operations on several streams run as one launch, as NCCL's groups do: it
 * waits for the other streams' earlier work, and their later work waits for it. Launches on
 * different streams that share a peer and direction run one after the other, in call order.
 * CUDA graphs: on a stream being captured, device operations with other ranks are recorded into
 * the graph and run at each replay (wires ipc, tcp and ib; docs/PIPELINE.md, "CUDA graphs"). A
 * send encodes with the codebook of the moment of capture. Replays and other operations with
 * the same peer must be ordered by the caller's streams, as with NCCL; two instances of one
 * graph share its operations' memory: run them one after the other; synchronize the replays and
 * destroy the graph and its instances before the communicator. Replays are counted in
 * szCommGetStats when the communicator next reaps (any group call, szCommGetAsyncError,
 * szCommGetStats); replays that finish between two of those count once. Host-buffer operations
 * in a captured group run once, at szGroupEnd.
 * Self send/recv (peer == own rank), as in NCCL: a send to self must be matched by a receive
 * from self in the same group (the n-th with the n-th); the data is copied in memory (host:
 * at szGroupEnd; device: stream-ordered on the receive's stream, by a kernel), not counted in
 * szCommGetStats. A send to self without its receive in the group, or of another count or
 * type, is szInvalidUsage.
 * Errors: szInvalidArgument (NULL buffer with count > 0, peer out of range, bad type, count *
 * size overflows; at szGroupEnd: receive buffers that overlap, or a receive into a buffer that
 * a send of the group reads, except a receive from self into what a send to self reads: a
 * memmove), szInvalidUsage (mismatched peers; a non-blocking init not finished; refused at
 * szGroupEnd before anything runs, the communicator staying usable: more than 32 device
 * operations with other ranks in one group of one communicator, a stream being captured on the
 * nccl wire, a group mixing captured streams with others, a stream whose capture was
 * invalidated, a stream that is not a usable CUDA stream), szRemoteError, szTimeout (no progress for the timeout),
 * szCorruptFrame (wire data failed validation or CRC). */
szResult_t szSend(const void* sendbuff, size_t count, szDataType_t type, int peer, szComm_t comm,
                  cudaStream_t stream);
szResult_t szRecv(void* recvbuff, size_t count, szDataType_t type, int peer, szComm_t comm,
                  cudaStream_t stream);

/* Batched transfer of a list of buffers (e.g. the KV blocks of a request scattered through a
 * paged pool): all buffers travel through one compressed pipeline as one message, in list
 * order. Each buffer holds counts[i] elements of `type`. The receiver's list must have the same
 * total count (the split into buffers may differ). Same semantics and errors as szSend/szRecv.
 * With SZ_CODEBOOK_AUTO the sender keeps a codebook per segment group (host and device buffers), a
 * buffer's group given by its position in the list (index parity and quarter: K and V of an
 * interleaved or a K-then-V list, groups of layers), so buffers of different exponent ranges
 * each compress as their own data allows; the receiver needs nothing (frames carry their
 * codebook). The rule: docs/PIPELINE.md, "Per-segment codebooks". */
szResult_t szSendv(const void* const* sendbuffs, const size_t* counts, int nbuffs, szDataType_t type,
                   int peer, szComm_t comm, cudaStream_t stream);
szResult_t szRecvv(void* const* recvbuffs, const size_t* counts, int nbuffs, szDataType_t type,
                   int peer, szComm_t comm, cudaStream_t stream);

/* Group semantics as ncclGroupStart/End: operations issued between them progress together
 * (so a rank can send to and receive from peers without deadlock); szGroupEnd returns once all
 * are enqueued (device buffers) or complete (host buffers). Groups nest. */
szResult_t szGroupStart(void);
szResult_t szGroupEnd(void);

/* Sends and receives are counted apart; sends to self (copies) are not counted.
 * size, magic and version say which layout the caller holds, so that fields can be added after
 * 0.1.0 (whose struct began with rawBytes) without writing past an older caller's struct: in C,
 * initialize with SZ_STATS_INITIALIZER; in C++ a declared szStats_t carries them already. A struct
 * without the magic is taken for 0.1.0's layout (a program built against 0.1.0). */
#ifdef __cplusplus
#define SZ_STATS_FIELD_INIT(value) = value
#else
#define SZ_STATS_FIELD_INIT(value)
#endif
typedef struct szStats {
  size_t size SZ_STATS_FIELD_INIT(sizeof(struct szStats));  /* sizeof(szStats_t) */
  unsigned int magic SZ_STATS_FIELD_INIT(0x535A5354u);       /* SZ_STATS_MAGIC */
  unsigned int version SZ_STATS_FIELD_INIT(SZ_VERSION_CODE); /* SZ_VERSION_CODE */
  uint64_t rawBytes;          /* sends: uncompressed bytes sent */
  uint64_t wireBytes;         /* sends: bytes sent on the wire (headers included) */
  uint64_t escapes;           /* sends: escapes in the frames sent */
  uint64_t slices;            /* sends: slices sent */
  uint64_t compressedSlices;  /* sends: slices sent as compressed frames */
  double encodeSeconds;       /* sends: time encoding (host codec: CPU time of the stage) */
  double wireSeconds;         /* sends: time slices spent on the wire */
  double decodeSeconds;       /* receives: time decoding (host codec: CPU time of the stage) */
  uint64_t recvRawBytes;      /* receives: uncompressed bytes received */
  uint64_t recvWireBytes;     /* receives: bytes received from the wire (headers included) */
  uint64_t recvSlices;        /* receives: slices received */
  uint64_t recalibrations;    /* sends: codebook switches after drift (SZ_CODEBOOK_AUTO) */
  double escapeRate;          /* sends: escapes per element of the compressed frames sent (0
                                 before any); paper §3.2 */
} szStats_t;
#define SZ_STATS_MAGIC 0x535A5354u
#define SZ_STATS_INITIALIZER \
  { sizeof(szStats_t), SZ_STATS_MAGIC, SZ_VERSION_CODE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
/* Counters of this rank's operations since init (stage times are cumulative). `stats` carries
 * its size (SZ_STATS_INITIALIZER); the fields it has room for are written, the rest of a newer
 * library's are not. Errors: szInvalidArgument (NULL, or a size smaller than 0.1.0's fields). */
szResult_t szCommGetStats(const szComm_t comm, szStats_t* stats);

#ifdef __cplusplus
}
#endif

#endif /* SPLITZIP_H_ */
