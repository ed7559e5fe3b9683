// EventPool (event_pool.h).
#if SZ_HAVE_CUDA
#include "transport/event_pool.h"

#include "kernels/cuda_check.h"

namespace sz {

EventPool::~EventPool() {
  for (cudaEvent_t e : free_) cudaEventDestroy(e);
}

szResult_t EventPool::fill(size_t n) {
  std::vector<cudaEvent_t> made;
  for (size_t i = 0; i < n; ++i) {
    cudaEvent_t e;
    cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err != cudaSuccess) {
      for (cudaEvent_t m : made) cudaEventDestroy(m);
      CUDACHECK(err);
    }
    made.push_back(e);
  }
  std::lock_guard<std::mutex> lock(mu_);
  free_.insert(free_.end(), made.begin(), made.end());
  return szSuccess;
}

szResult_t EventPool::take(cudaEvent_t* event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      *event = free_.back();
      free_.pop_back();
      return szSuccess;
    }
  }
  CUDACHECK(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  return szSuccess;
}

void EventPool::give(cudaEvent_t event) {
  if (event == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(event);
}

}  // namespace sz
#endif
