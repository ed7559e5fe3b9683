// CUDA events the progress thread takes and gives back instead of creating and destroying them.
// cudaEventCreate and cudaEventDestroy take the driver's lock for writing, and a user's thread
// blocked in a CUDA call that waits for a stream held by szSend/szRecv (a pageable
// cudaMemcpyAsync queued after szRecv, cudaFree) holds that lock: the progress thread, which
// releases the stream, would wait for the user's call (seen on H200: the stacks in
// perf/results/2026-11-30_h200_comm_session3.md). CUDA builds only.
#pragma once

#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "splitzip.h"

namespace sz {

class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool();  // destroys the pooled events (on the device current then)

  // Creates `n` more events (timing disabled) on the current device: call it at init.
  szResult_t fill(size_t n);
  // An event from the pool; creates one only if the pool ran dry (fill it to the most in flight).
  szResult_t take(cudaEvent_t* event);
  void give(cudaEvent_t event);

 private:
  std::mutex mu_;
  std::vector<cudaEvent_t> free_;
};

}  // namespace sz
