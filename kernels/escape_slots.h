// Escape slots: where the GPU encoder's chunk pass keeps each chunk's first escape records until
// the place pass moves them into the frame's escape section (kernels/encode_grid.cuh, and one
// block's frame in kernels/encode_narrow_block.cuh), and the scratch a slot kernel's block
// takes for them (kernels/slot_kernels.h). Plain C++: the host sizes that memory.
#pragma once

#include <cstdint>

#include "codec/frame.h"

namespace sz {

// Escape records a chunk's slot holds: a chunk with more is read again by the place pass.
// BF16, FP32 and E5M2: 16 (48 bytes per 1024 elements). KV data with a fitting codebook escapes ~1e-4
// of its elements (docs/RESULTS.md), 0.1 a chunk; a codebook that does not fit (1.65 %,
// docs/PIPELINE.md) overflows about half the chunks, and their input is read twice.
// FP16 and E4M3 (either width: the temporary size knows the type only): 64 (192 bytes). Their
// KV escapes about 2 % of its elements at 3-bit codes, 20 a chunk; at 16 records most chunks
// overflowed and the place kernel re-encoded them: 212 of FP16's 738 us and 341 of E4M3's 983
// us at 512 MiB on one H100 (perf/results/2026-12-07d_h100.md); at 64, 38 and 62 us (2026-12-07e).
SZ_HD constexpr uint32_t slotRecords(int type) { return narrowCodecType(type) ? 64 : 16; }
SZ_HD constexpr uint32_t slotBytes(int type) { return slotRecords(type) * kEscapeBytes; }

// One block's frame of FP16 or E4M3 (encode_narrow_block.cuh): ranges of at most 32 chunks, at
// least kNarrowMinRanges of them where the frame has that many chunks (two for each of the
// block's 16 warps: a 256 KiB slice of FP16 is 128 chunks, which ranges of 32 gave 4 warps of
// 16), their escape totals (4 bytes each) first in the block's scratch, then a slot per chunk
// from narrowRecordsOff.
constexpr uint64_t kNarrowMinRanges = 32;
SZ_HD constexpr uint64_t narrowRangesOf(uint64_t chunks) {
  return (chunks + 31) / 32 > kNarrowMinRanges ? (chunks + 31) / 32 : chunks < kNarrowMinRanges ? chunks : kNarrowMinRanges;
}
SZ_HD constexpr uint64_t narrowRecordsOff(uint64_t chunks) { return (4 * narrowRangesOf(chunks) + 15) / 16 * 16; }
// The scratch a block needs for a slice of at most `sliceBytes` bytes of either type (E4M3's, a
// chunk per 1024 bytes, is the larger).
SZ_HD constexpr uint64_t narrowScratchBytes(uint64_t sliceBytes) {
  return narrowRecordsOff(sliceBytes / kChunkElems + 1) + uint64_t(slotBytes(szFloat8e4m3)) * (sliceBytes / kChunkElems + 1);
}

}  // namespace sz
