/*
 * splitzip_codec.h — SplitZip's codec: codebooks and calibration (paper §3.2-§3.3), the host
 * codec and the device (CUDA) codec (paper §3, App. A). Part of the public C API: include
 * <splitzip.h>. The frame format the codecs read and write is docs/FORMAT.md.
 */
#ifndef SPLITZIP_CODEC_H_
#define SPLITZIP_CODEC_H_

#include "splitzip_base.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Resets `hist` for `type`. Host-only, returns when done; `hist` naturally aligned (a
 * declared szHistogram_t is). Paper §3.3.
 * Errors: szInvalidArgument (`hist` NULL, `type` not compressible). */
szResult_t szHistogramInit(szHistogram_t* hist, szDataType_t type);

/* Adds the exponents of `count` ELEMENTS of the histogram's type at host pointer `data` (any
 * alignment) to `hist`. Host-only, returns when done (one thread). Paper §3.3.
 * Errors: szInvalidArgument (`hist` NULL, `data` NULL with count > 0, a histogram whose type is
 * not compressible: not set up by szHistogramInit). */
szResult_t szHistogramAccumulate(szHistogram_t* hist, const void* data, size_t count);

/* Builds a codebook from a histogram: the 2^bits most frequent exponents, ties broken by the
 * smaller exponent, ordered by decreasing frequency; unused entries padded. Paper §3.3. The
 * width is calibration's choice: for FP16 and FP8 E4M3 the one whose predicted frame is
 * smaller (szCodebookPredictRatio); BF16, FP32 and FP8 E5M2 keep 4-bit codes, the ones the
 * GPU codec and the communicator carry. Host-only, returns when done; structs naturally aligned.
 * Errors: szInvalidArgument (`hist` or `codebook` NULL, a histogram of a type that is not
 * compressible). */
szResult_t szCodebookFromHistogram(const szHistogram_t* hist, szCodebook_t* codebook);

/* The same with the width given: codeBits 3 or 4. Paper §3.3 (the top-2^bits exponents).
 * Host-only, returns when done; structs naturally aligned.
 * Errors: szInvalidArgument (NULL, invalid histogram type, codeBits not 3 or 4). */
szResult_t szCodebookFromHistogramBits(const szHistogram_t* hist, int codeBits, szCodebook_t* codebook);

/* The ratio (uncompressed / compressed bits, headers and padding left out) that a codebook of
 * `codeBits`-bit codes built from `hist` predicts for the histogram's data: escapes cost their
 * 3-byte records. 1.0 when the frame would be stored raw (or the histogram is empty). Paper
 * §3.3 (Table 1's predicted ratio). Host-only, returns when done; pointers naturally aligned.
 * Errors: szInvalidArgument (a NULL argument, an invalid histogram type, codeBits not 3 or 4). */
szResult_t szCodebookPredictRatio(const szHistogram_t* hist, int codeBits, double* ratio);

/* Checks a codebook: compressible type, 1 <= used <= 2^bits, entries distinct and in range
 * (a 3-bit codebook's entries 8..15 SZ_CODEBOOK_UNUSED). Paper §3.2 (a codebook of distinct
 * exponents). Host-only, returns at once; `codebook` naturally aligned.
 * Errors: szInvalidArgument (`codebook` NULL, or a rule broken: the message says which). */
szResult_t szCodebookValidate(const szCodebook_t* codebook);

/* The width of a codebook's exponent codes, 3 or 4, in *codeBits (docs/FORMAT.md §Code width;
 * paper §3.2's exponent code). Host-only, returns at once; pointers naturally aligned.
 * Errors: szInvalidArgument (a NULL argument, or a codebook szCodebookValidate refuses). */
szResult_t szCodebookCodeBits(const szCodebook_t* codebook, int* codeBits);

/* The built-in default codebook for `type`, calibrated on real KV caches (tests/data/README.md
 * says which model and text; paper §3.3, offline calibration). Host-only, returns at once;
 * `codebook` naturally aligned. Errors: szInvalidArgument (`codebook` NULL, `type` not compressible). */
szResult_t szCodebookDefault(szDataType_t type, szCodebook_t* codebook);

/* Saves / loads a codebook file (a small text file, format in docs/FORMAT.md §Codebook file;
 * paper §3.3: a codebook calibrated offline, shipped to both sides). Host-only, blocking file
 * I/O on the calling thread; `path` a NUL-terminated string, `codebook` naturally aligned.
 * Save writes a validated codebook only. Errors: szInvalidArgument (a NULL argument, an invalid
 * codebook to save, a path that is not a regular file (a FIFO, device or directory: refused
 * without waiting), a file that is not a codebook file: malformed, over 64 KiB, over 1024
 * lines or a line over 1024 bytes; the message names the line), szSystemError (the file cannot
 * be opened, read or written). */
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

/* Upper bound, in BYTES, on the frame of `count` ELEMENTS of `type`:
 * SZ_FRAME_HEADER_BYTES + count * szTypeSize(type) (a frame never exceeds its raw size plus
 * the header; docs/FORMAT.md, paper §3). Host-only, returns at once; `maxBytes` naturally
 * aligned.
 * Errors: szInvalidArgument (`maxBytes` NULL, bad type, a size that overflows size_t). */
szResult_t szEncodeMaxSize(size_t count, szDataType_t type, size_t* maxBytes);

/* Encodes `count` ELEMENTS at host pointer `in` (any alignment) into a frame at `out`
 * (`outCapacity` bytes, any alignment). `codebook` may be NULL: the built-in default, or with
 * SZ_ENCODE_CALIBRATE one computed from `in` (a codebook given wins over SZ_ENCODE_CALIBRATE).
 * Incompressible data and types are stored raw; for incompressible types `codebook` is not read.
 * The frame is format version 1 where that can hold it, else version 2 (FP16 and E4M3
 * compressed, or a 3-bit codebook; docs/FORMAT.md "Code width"; paper §3.1-§3.2).
 * Host-only, returns when the frame is written; large inputs are encoded by several threads
 * (SZ_CPU_THREADS, default: all cores). On success *outBytes is the frame size in BYTES.
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

/* Parses and validates the header of the frame at host pointer `frame` (`frameBytes` BYTES
 * available; any alignment; `info` naturally aligned); a CRC-carrying frame's checksums are verified too (reading its
 * payload). Host-only, returns when done. Paper §3 (the frame). Errors: szInvalidArgument
 * (`frame` or `info` NULL), szCorruptFrame (bad magic, version, field, section sizes,
 * truncation, CRC mismatch). */
szResult_t szFrameGetInfo(const void* frame, size_t frameBytes, szFrameInfo_t* info);

/* Decodes the frame at host pointer `frame` (`frameBytes` BYTES) into host buffer `out`
 * (`outCapacity` BYTES; needs info.count * szTypeSize(info.type)); any alignment of both.
 * Host-only, returns when done (several threads for large frames, as szEncode). Paper §3.
 * `frameBytes` may exceed the frame (the rest is ignored); *count is in ELEMENTS. Every
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

/* Temporary device memory (BYTES) szEncodeAsync needs for `count` ELEMENTS of `type`, 8-byte
 * aligned (cudaMalloc's is): 2080 bytes (the SZ_ENCODE_CALIBRATE histogram and codebook), 4
 * bytes per range of chunks (each range's escape total; max(min(chunks, W),
 * ceil(chunks / 32)) ranges, W = chunks / 8 held within [8192, 16384]) and 48 bytes per
 * 1024-element chunk (its first 16 escape records), i.e. about 3 * 16 bytes per 1024
 * elements: 2.3 % of BF16 input. FP16 and FP8 E4M3 take 192 bytes per chunk (64 records:
 * their KV escapes about 2 % of its elements at 3-bit codes), 9.4 % and 18.8 % of their
 * input. It needs no initialization: szEncodeAsync reads only what it wrote. A host-only
 * query: returns at once, touches no device. Paper §3 (the escape records it holds).
 * Errors: szInvalidArgument (`tempBytes` NULL, bad type, overflowing count),
 * szUnhandledCudaError (a build without CUDA). */
szResult_t szEncodeTempSize(size_t count, szDataType_t type, size_t* tempBytes);

/* Encodes `count` ELEMENTS at device pointer `d_in` into a frame at device pointer `d_out`
 * (`outCapacity` BYTES, at least szEncodeMaxSize) on `stream`: the call enqueues the encode
 * and returns without synchronizing; `d_in`, `d_out`, `d_temp` and `outBytes` must stay valid
 * and untouched until it completes on `stream`, when the frame may be read and the input
 * reused. Paper §3 (format), App. A (GPU codec). `codebook` (host struct, copied
 * at the call; NULL = default). `flags`: SZ_ENCODE_CRC is not supported on the device
 * (szInvalidUsage). `d_temp` is caller-provided device memory of szEncodeTempSize bytes
 * (reusable once the encode completes on `stream`). The frame size is written as a uint64_t
 * to `outBytes`, device or mapped pinned memory, when the encode completes on `stream`.
 * `d_in` and `d_out` may have any alignment (16-byte aligned ones take the fast path);
 * `outBytes` is 8-byte aligned, `d_temp` too (szEncodeTempSize). Frames are
 * byte-identical to szEncode's for the same input and codebook: BF16, FP32 and FP8 E5M2 with
 * 4-bit codebooks (format version 1), FP16 and FP8 E4M3 with 3- or 4-bit codebooks (version 2;
 * E4M3 with 4-bit codes is always raw, as with szEncode). SZ_ENCODE_CALIBRATE without a
 * codebook calibrates BF16, FP32 and E5M2 on the device; FP16 and E4M3 are then stored raw
 * (calibrate them with szHistogramAsync and szCodebookFromHistogram and pass the codebook).
 * Errors (at enqueue): szInvalidArgument (`d_in` NULL with count > 0, `d_out` or `outBytes`
 * NULL, unknown flags, bad type, outCapacity below szEncodeMaxSize, tempBytes below
 * szEncodeTempSize, a codebook of another type or invalid), szInvalidUsage (CRC, a 3-bit
 * codebook of BF16, FP32 or E5M2), szUnhandledCudaError (no device, a launch failure, a build
 * without CUDA). */
szResult_t szEncodeAsync(const void* d_in, size_t count, szDataType_t type,
                         const szCodebook_t* codebook, int flags, void* d_out, size_t outCapacity,
                         uint64_t* outBytes, void* d_temp, size_t tempBytes, cudaStream_t stream);

/* Decodes the frame at device pointer `d_frame` (`frameBytes` BYTES available) into device
 * buffer `d_out` (`outCapacity` BYTES) on `stream`: the call enqueues the decode and returns
 * without synchronizing (the host never reads the frame); `d_frame`, `d_out` and `status` must
 * stay valid until it completes on `stream`, when `d_out` and *status may be read and the
 * frame reused. `d_frame` and `d_out` any alignment (16-byte aligned ones take the fast path),
 * `status` 4-byte aligned (an int the device writes atomically). Paper §3 (format),
 * App. A (GPU codec). The frame is validated on the device; the result
 * is written as an int (a szResult_t value: szSuccess or szCorruptFrame/szInvalidArgument, or
 * szInvalidUsage for a valid compressed frame with 3-bit codes of BF16, FP32 or E5M2, which
 * szDecode decodes; FP16 and FP8 E4M3 frames of either code width decode here) to
 * `status`, device or mapped pinned memory, when the decode completes. A corrupt frame never
 * causes an out-of-bounds access. CRC-carrying frames: checksums are not verified on the
 * device (use szDecode on the host, or the transport's CRC).
 * Errors (at enqueue): szInvalidArgument (`d_frame` or `status` NULL, `d_out` NULL with a
 * capacity),
 * szUnhandledCudaError (no device, a launch failure, a build without CUDA). */
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

/* Decode (the rules above hold: stream-ordered on `stream`, never synchronizing; arrays
 * naturally aligned, items any alignment; paper §3, App. A): item i is the frame at d_frames[i] (d_frameBytes[i] BYTES available; more than the
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

/* Adds the exponent histogram of `count` ELEMENTS of `type` at device pointer `d_data` (any
 * alignment) to the device array `d_counts` (256 x unsigned long long, 8-byte aligned, zeroed
 * by the caller) on `stream`: enqueued, no synchronization; both must stay valid until it
 * completes on `stream`, when the counts may be read (copy them into an szHistogram_t's
 * counts for szCodebookFromHistogram). Paper §3.3 (calibration). Errors (at enqueue):
 * szInvalidArgument (`d_data` NULL with count > 0, `d_counts` NULL, `type` not compressible),
 * szUnhandledCudaError (no device, a launch failure, a build without CUDA). */
szResult_t szHistogramAsync(const void* d_data, size_t count, szDataType_t type,
                            unsigned long long* d_counts, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SPLITZIP_CODEC_H_ */
