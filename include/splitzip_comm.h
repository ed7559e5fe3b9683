/*
 * splitzip_comm.h — SplitZip's communicator: NCCL-style point-to-point with the codec fused
 * into the slot protocol (paper §4, App. B). Part of the public C API: include <splitzip.h>.
 */
#ifndef SPLITZIP_COMM_H_
#define SPLITZIP_COMM_H_

#include "splitzip_codec.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * Host-only: returns once the listener runs (it serves the ranks' init from a thread of its
 * own); the id has no alignment need (bytes). Paper: none (NCCL's bootstrap).
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
 * timeout). Host-only; pointers need no alignment. Paper: none (NCCL's init); the codec
 * configuration it settles (codec, codebooks) is paper §3.3 and App. B's.
 * Errors: szInvalidArgument (`comm` NULL, nranks outside 1..65536, rank outside 0..nranks-1,
 * a config whose size, magic, version or a field is invalid), szSystemError, szRemoteError (a peer failed),
 * szTimeout, szInvalidUsage (ranks disagree on nranks or configuration). */
szResult_t szCommInitRank(szComm_t* comm, int nranks, szUniqueId commId, int rank);
szResult_t szCommInitRankConfig(szComm_t* comm, int nranks, szUniqueId commId, int rank,
                                szConfig_t* config);

/* Wraps a communicator the application already has (ncclComm_t passed as void*): its rank 0
 * broadcasts a unique id with NCCL, so no other rendezvous is needed. Each pair of ranks takes
 * its wire as with szCommInitRank (config->wire or SZ_WIRE force one): pairs of one node with
 * peer access use ipc, other pairs the nccl wire, whose slices travel with ncclSend/ncclRecv on
 * `ncclComm`. SplitZip never destroys it. Collective over its ranks: every rank calls it. The
 * id's broadcast blocks (on a stream of its own); the rest follows config->blocking as
 * szCommInitRank. Host-only; no alignment. Paper: none (NCCL's init).
 * Errors: as szCommInitRank; szUnhandledCudaError without CUDA/NCCL. */
szResult_t szCommInitFromNccl(szComm_t* comm, void* ncclComm, szConfig_t* config);

/* Finishes all outstanding operations (blocking), then szCommDestroy frees the communicator.
 * Replays of CUDA graphs holding its operations are not waited for: synchronize their streams
 * and destroy the graphs and their instances first (szSend, "CUDA graphs").
 * szCommAbort frees it immediately, failing outstanding operations; safe after any error, but
 * not while another thread is inside a call on the same communicator (a host-buffer szSend or
 * szRecv blocks in its call until done): wait for that call to return first, as the Python
 * binding's abort() does.
 * Host-only, all three; Finalize blocks until the device operations end (or the communicator
 * fails), Destroy and Abort until its threads stop. Paper: none (NCCL's teardown).
 * Errors: Finalize: szInvalidArgument (NULL), szInProgress (a non-blocking init not finished),
 * or the communicator's asynchronous error (szRemoteError, szTimeout, ...) if one struck;
 * Destroy: szInvalidArgument (NULL); Abort: none (NULL is accepted and ignored). */
szResult_t szCommFinalize(szComm_t comm);
szResult_t szCommDestroy(szComm_t comm);
szResult_t szCommAbort(szComm_t comm);
/* The first asynchronous error of the communicator (szSuccess if none; szInProgress while a
 * non-blocking init runs). szGetLastError(comm) then gives its message. May be called from
 * another thread while the communicator's own thread runs groups (a watchdog, as PyTorch polls
 * ncclCommGetAsyncError): it collects finished device operations unless that thread is in the
 * middle of its own, and never waits for it. Host-only, returns at once; `asyncError` naturally
 * aligned. Paper: none.
 * Errors: szInvalidArgument (a NULL argument); the error itself goes to *asyncError. */
szResult_t szCommGetAsyncError(szComm_t comm, szResult_t* asyncError);
/* The communicator's number of ranks / this rank's index (ncclCommCount, ncclCommUserRank).
 * Host-only, returns at once; the int naturally aligned. Paper: none. Errors:
 * szInvalidArgument (a NULL argument). */
szResult_t szCommCount(const szComm_t comm, int* count);
szResult_t szCommUserRank(const szComm_t comm, int* rank);

/* Sends `count` ELEMENTS of `type` from `sendbuff` to rank `peer`; szRecv receives them.
 * Each send must match a receive of the same count and type (checked: both sides return
 * szInvalidUsage otherwise); calls to one peer are matched in order. Buffers may have any
 * alignment, host or device memory alike. Paper §3 (each slice a frame), §4 and App. B (the
 * codec overlapped with the wire: encode fused into the send's slices, decode into the
 * receive's).
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
 * Errors: szInvalidArgument (`comm` NULL, NULL buffer with count > 0, peer out of range, bad type, count *
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
 * order. Each buffer holds counts[i] ELEMENTS of `type`, any alignment. The receiver's list
 * must have the same total count (the split into buffers may differ). Same semantics and
 * stream rules as szSend/szRecv. Errors: szSend's, plus szInvalidArgument for an invalid list
 * (a list mixing host and device memory, nbuffs < 0, `sendbuffs`/`recvbuffs` or `counts` NULL
 * with nbuffs > 0). Paper §3.3, §4.
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
 * are enqueued (device buffers) or complete (host buffers). Groups nest; the group is the
 * calling thread's (host-only calls: szGroupStart returns at once). Paper: none (NCCL's groups). Errors: szGroupStart: none; szGroupEnd:
 * szInvalidUsage without a matching szGroupStart, and at the outermost szGroupEnd the group's
 * operations' errors (szSend lists them; a group with an invalid operation runs none). */
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
/* Counters of this rank's operations since init (stage times are cumulative; the ratio of
 * rawBytes to wireBytes is paper §4's compression ratio on the wire). `stats` carries its size
 * (SZ_STATS_INITIALIZER); the fields it has room for are written, the rest of a newer library's
 * are not; `stats` naturally aligned. Host-only: reaps finished device operations first, never waits for
 * running ones.
 * Errors: szInvalidArgument (NULL, or a size smaller than 0.1.0's fields). */
szResult_t szCommGetStats(const szComm_t comm, szStats_t* stats);


#ifdef __cplusplus
}
#endif

#endif /* SPLITZIP_COMM_H_ */
