// The batched codec's launchers (kernels/batch.cu): one launch encodes or decodes many
// independent frames, one warp per item at a time, items taken warp-grid-stride. The public calls
// (szEncodeBatchAsync / szDecodeBatchAsync, kernels/batch_api.cc) check the host-side arguments
// and resolve the codebook; these only launch. Every array is device-readable memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "splitzip.h"

namespace sz {

struct EncodeBatch {
  const void* const* ins;
  const size_t* counts;  // elements
  void* const* outs;
  const size_t* capacities;
  size_t* outBytes;
  szResult_t* statuses;
  uint64_t items;
  int type;
  uint8_t codebook[SZ_CODEBOOK_SIZE];  // compressible types: a validated codebook of `type`
  int used;
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
