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

// Spins until *flag is set or `maxCycles` pass (then *timedOut = 1): a receive kernel's wait.
__global__ void spinUntilSet(const volatile int* flag, long long maxCycles, volatile int* timedOut) {
  const long long start = clock64();
  while (*flag == 0) {
    if (clock64() - start > maxCycles) {
      *timedOut = 1;
      return;
    }
  }
}

__global__ void writeIndices(uint32_t* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = uint32_t(i * 2654435761u);
}

TEST(PinnedHost, AllocatingDoesNotWaitForARunningKernel) {
  SKIP_WITHOUT_GPU();
  void* words = nullptr;
  ASSERT_EQ(sz::allocPinnedHost(4096, &words), szSuccess);
  int* flag = static_cast<int*>(words);
  int* timedOut = flag + 16;
  int clockKHz = 0, device = 0;
  CUDA_ASSERT(cudaGetDevice(&device));
  CUDA_ASSERT(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const long long tenSeconds = 10000000LL * clockKHz / 1000;
  spinUntilSet<<<1, 1, 0, s>>>(static_cast<int*>(sz::pinnedDeviceAddress(flag)), tenSeconds,
                               static_cast<int*>(sz::pinnedDeviceAddress(timedOut)));
  CUDA_ASSERT(cudaGetLastError());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the kernel is spinning
  const auto t0 = std::chrono::steady_clock::now();
  void* ring = nullptr;
  const size_t bytes = size_t(66) << 20;  // a tcp device pair's ring at the defaults
  const szResult_t made = sz::allocPinnedHost(bytes, &ring);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
  CUDA_ASSERT(cudaStreamSynchronize(s));
  ASSERT_EQ(made, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(__atomic_load_n(timedOut, __ATOMIC_SEQ_CST), 0) << "the allocation waited for the running kernel";
  EXPECT_LT(seconds, 5.0);

  // Zeroed; the device writes at the address pinnedDeviceAddress gives for an inner pointer, and
  // the host reads those words at its own.
  const uint32_t* host = static_cast<const uint32_t*>(ring);
  size_t nonzero = 0;
  for (size_t i = 0; i < bytes / 4; i += 1021) nonzero += host[i] != 0;
  EXPECT_EQ(nonzero, 0u);
  const size_t offset = 4096, n = (bytes - offset) / 4;
  uint32_t* inner = static_cast<uint32_t*>(sz::pinnedDeviceAddress(static_cast<uint8_t*>(ring) + offset));
  ASSERT_NE(inner, nullptr);
  writeIndices<<<256, 256, 0, s>>>(inner, n);
  CUDA_ASSERT(cudaStreamSynchronize(s));
  const uint32_t* written = static_cast<const uint32_t*>(static_cast<void*>(static_cast<uint8_t*>(ring) + offset));
  size_t wrong = 0;
  for (size_t i = 0; i < n; i += 997) wrong += written[i] != uint32_t(i * 2654435761u);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(host[0], 0u);  // before the offset: untouched
  sz::freePinnedHost(ring);
  sz::freePinnedHost(words);
  cudaStreamDestroy(s);
}

}  // namespace
