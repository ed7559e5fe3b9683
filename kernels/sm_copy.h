// Memory moves on a stream done by the multiprocessors (a kernel), never by the copy engines.
// The pipeline moves its own bytes (slice staging, received frame headers, the nccl wire's size
// messages, zeroed scratch) only this way: copy-engine work of the library's streams was seen
// to stall behind a user's stream held by szSend/szRecv (H200, a cudaMemcpyAsync queued after a
// held operation), which holds the user's stream for good (docs/PIPELINE.md, hardware queues).
// Kernels on the library's own streams run on compute queues of their own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

namespace sz {

// Copies `bytes` bytes from `src` to `dst` on `stream`; with src == nullptr, zero-fills `dst`.
// Both pointers must be usable on the current device: device memory, or pinned host memory
// (cudaHostAlloc; the same pointer under unified addressing). Any alignment; 16-byte moves
// where dst and src are aligned alike. Non-overlapping ranges.
szResult_t smCopyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream);

// One piece of a gather or scatter: `bytes` bytes from `src` to `dst`.
struct SmCopyPiece {
  uint8_t* dst;
  const uint8_t* src;
  uint64_t bytes;
};
// Copies `n` pieces in one launch (a slice's KV blocks: hundreds of small pieces). `pieces` must
// be readable by the device (pinned host memory) until the copy has finished; the pieces'
// pointers follow smCopyAsync's rules. Ranges must not overlap.
szResult_t smCopyPiecesAsync(const SmCopyPiece* pieces, size_t n, cudaStream_t stream);

}  // namespace sz
