// Pinned host memory for slot rings (kernels/pinned_host.h): made while a kernel of this process
// runs on the device without waiting for it (a pair's first operation may come while another
// rank's receive kernel waits on this very rank), and reached by the device at the host's address.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "../../kernels/pinned_host.h"
#include "gpu_test_util.h"

namespace {

__device__ unsigned long long globalNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Says it started, then spins until *flag is set or `maxNs` pass (then *timedOut = 1): a
// receive kernel's wait.
__global__ void spinUntilSet(const volatile int* flag, unsigned long long maxNs, volatile int* started,
                             volatile int* timedOut) {
  *started = 1;
  __threadfence_system();
  const unsigned long long start = globalNs();
  while (*flag == 0) {
    if (globalNs() - start > maxNs) {
      *timedOut = 1;
      return;
    }
  }
}

__global__ void writeIndices(uint32_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint32_t(i * 2654435761u);
}

}  // namespace

// Outside the anonymous namespace: some nvcc front ends warn (177, an error under -Werror
// all-warnings) that gtest's test_info_ there is never referenced.
TEST(PinnedHost, AllocatingDoesNotWaitForARunningKernel) {
  SKIP_WITHOUT_GPU();
  void* words = nullptr;
  ASSERT_EQ(sz::allocPinnedHost(4096, &words), szSuccess);
  struct Free {  // whatever the assertions below leave behind
    void* words;
    void* ring = nullptr;
    cudaStream_t s = nullptr;
    ~Free() {
      if (s) cudaStreamSynchronize(s), cudaStreamDestroy(s);
      sz::freePinnedHost(ring);
      sz::freePinnedHost(words);
    }
  } held{words};
  if (sz::pinnedDeviceAddress(words) != words)
    GTEST_SKIP() << "SKIPPED: pinned host memory comes from cudaHostAlloc here (SZ_CUMEM_HOST=0, or the driver's "
                    "virtual memory calls failed: see SZ_DEBUG=INFO); only the mapped path allocates without waiting";
  int* flag = static_cast<int*>(words);
  int* started = flag + 16;
  int* timedOut = flag + 32;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&held.s, cudaStreamNonBlocking));
  spinUntilSet<<<1, 1, 0, held.s>>>(flag, 10000000000ull, started, timedOut);  // 10 s at most
  CUDA_ASSERT(cudaGetLastError());
  for (int i = 0; i < 5000 && __atomic_load_n(started, __ATOMIC_SEQ_CST) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(__atomic_load_n(started, __ATOMIC_SEQ_CST), 1) << "the spinning kernel did not start";
  const auto t0 = std::chrono::steady_clock::now();
  const size_t bytes = size_t(66) << 20;  // a tcp device pair's ring at the defaults
  const szResult_t made = sz::allocPinnedHost(bytes, &held.ring);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
  CUDA_ASSERT(cudaStreamSynchronize(held.s));
  ASSERT_EQ(made, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(__atomic_load_n(timedOut, __ATOMIC_SEQ_CST), 0) << "the allocation waited for the running kernel";
  EXPECT_LT(seconds, 5.0);

  // Zeroed; the device writes at the address pinnedDeviceAddress gives for an inner pointer, and
  // the host reads those words at its own.
  uint8_t* ring = static_cast<uint8_t*>(held.ring);
  const uint32_t* host = reinterpret_cast<const uint32_t*>(ring);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes / 4; i += 1021) nonzero += host[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  const size_t offset = 4096, n = (bytes - offset) / 4;
  uint32_t* inner = static_cast<uint32_t*>(sz::pinnedDeviceAddress(ring + offset));
  ASSERT_NE(inner, nullptr);
  writeIndices<<<256, 256, 0, held.s>>>(inner, n);
  CUDA_ASSERT(cudaStreamSynchronize(held.s));
  const uint32_t* written = reinterpret_cast<const uint32_t*>(ring + offset);
  size_t wrong = 0;
  for (size_t i = 0; i < n; i += 997) wrong += written[i] != uint32_t(i * 2654435761u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(host[0], 0u);  // before the offset: untouched
}
