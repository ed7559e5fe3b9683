// Fork-join over std::thread; the calling thread runs the first range (and any range no thread
// could be created for).
#include "parallel.h"

#include <exception>
#include <thread>
#include <vector>

#include "base/param.h"

namespace sz {

int parallelRanges(uint64_t items, uint64_t bytes) {
  if (bytes < uint64_t(szParamCpuParallelBytes()) || items < 2) return 1;
  int64_t threads = szParamCpuThreads();
  if (threads <= 0) threads = std::thread::hardware_concurrency();
  if (threads <= 0) threads = 1;
  return int(uint64_t(threads) < items ? threads : items);
}

void parallelFor(uint64_t items, int ranges,
                 const std::function<void(int, uint64_t, uint64_t)>& fn) {
  auto bounds = [&](int r) { return items * uint64_t(r) / uint64_t(ranges); };
  std::vector<std::thread> workers;
  workers.reserve(ranges > 0 ? ranges - 1 : 0);
  for (int r = 1; r < ranges; ++r) {
    try {
      workers.emplace_back(fn, r, bounds(r), bounds(r + 1));
    } catch (const std::exception&) {  // no thread to be had (limits, memory): the range runs here
      fn(r, bounds(r), bounds(r + 1));
    }
  }
  fn(0, 0, bounds(1));
  for (auto& w : workers) w.join();
}

}  // namespace sz
