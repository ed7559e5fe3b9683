// The batched codec's launchers (kernels/batch.cu): one launch encodes or decodes many
// independent frames, one warp per item at a time, items taken warp-grid-stride. The public calls
// (szEncodeBatchAsync / szDecodeBatchAsync, kernels/batch_api.cc) check the host-side arguments
// and resolve the codebooks; these only launch. Every array is device-readable memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

namespace sz {

// A codebook as the encoder reads it; a table of them travels in the launch's parameters
// (SZ_BATCH_MAX_CODEBOOKS of 17 bytes: well inside the 4 KiB every GPU takes).
struct BatchCodebook {
  uint8_t exponents[SZ_CODEBOOK_SIZE];
  uint8_t used;
};

struct EncodeBatch {
  const void* const* ins;
  const size_t* counts;  // elements
  void* const* outs;
  const size_t* capacities;
  size_t* outBytes;
  szResult_t* statuses;
  uint64_t items;
  int type;
  const uint32_t* codebookIds;  // NULL: every item uses codebooks[0]
  uint32_t numCodebooks;        // compressible types: 1..SZ_BATCH_MAX_CODEBOOKS validated codebooks of `type`
  BatchCodebook codebooks[SZ_BATCH_MAX_CODEBOOKS];
  uint32_t codeBits;            // the codebooks' width, one for the batch: 4, or 3 (FP16, E4M3)
};

struct DecodeBatch {
  const void* const* frames;
  const size_t* frameBytes;
  void* const* outs;
  const size_t* capacities;
  size_t* outCounts;  // may be null
  szResult_t* statuses;
  uint64_t items;
};

// Enqueue on `stream`; nothing for an empty batch. Errors: szUnhandledCudaError.
szResult_t launchEncodeBatch(const EncodeBatch& batch, cudaStream_t stream);
szResult_t launchDecodeBatch(const DecodeBatch& batch, cudaStream_t stream);

}  // namespace sz
