// Splits [0, items) into contiguous ranges run on several threads (SZ_CPU_THREADS); small jobs
// (under SZ_CPU_PARALLEL_BYTES) run on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace sz {

// Number of ranges parallelFor will use for a job of `items` items and `bytes` bytes.
int parallelRanges(uint64_t items, uint64_t bytes);

// Calls fn(range, begin, end) for `ranges` contiguous, in-order ranges covering [0, items).
void parallelFor(uint64_t items, int ranges,
                 const std::function<void(int range, uint64_t begin, uint64_t end)>& fn);

}  // namespace sz
