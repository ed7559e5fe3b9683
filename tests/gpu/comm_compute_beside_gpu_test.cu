// A receive posted before its data exists must leave the GPU to the compute that makes the data
// (examples/handoff.py --threads on one H100, 2026-12-06: rank 1 posted the whole cache's
// receive, 256 MiB, before rank 0's prefill; its kernel held one block on every multiprocessor,
// and the prefill's GEMMs, whose blocks need a whole multiprocessor, could not start until the
// receive timed out). Two ranks as threads on one GPU: rank 1 posts a 256 MiB receive; once its
// kernel runs, rank 0 runs a kernel whose every block takes a whole multiprocessor's shared
// memory (as cuBLAS's Hopper GEMMs take its registers), then sends on the same stream. The
// transfer must finish bit-exact within a few seconds, not at the timeout.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "../kv_like.h"
#include "gpu_test_util.h"
#include "thread_barrier.h"

namespace {

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each block holds all the shared memory a block may have for `ns`, and counts itself done.
__global__ void wholeMultiprocessorKernel(unsigned long long ns, unsigned int* done) {
  extern __shared__ unsigned char smem[];
  const unsigned long long start = nowNs();
  smem[threadIdx.x] = 1;
  while (nowNs() - start < ns) {
  }
  if (threadIdx.x == 0) atomicAdd(done, smem[0]);
}

}  // namespace

// Outside the unnamed namespace: there the device image's nvcc warns (177) on gtest's test_info_.
TEST(CommComputeBesideGpu, AReceivePostedEarlyLeavesMultiprocessorsToTheSendersCompute) {
  SKIP_WITHOUT_GPU();
  int smem = 0, sms = 0;
  CUDA_ASSERT(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CUDA_ASSERT(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_ASSERT(cudaFuncSetAttribute(wholeMultiprocessorKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  constexpr size_t kElems = size_t(128) << 20;  // 256 MiB of BF16: more slices than blocks
  std::vector<uint16_t> data = sztest::kvLikeBf16(kElems, 5, 0.5f);
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  sztest::Barrier barrier(2);
  std::atomic<bool> initFailed{false};
  std::vector<std::string> failures[2];
  unsigned int* done = nullptr;
  CUDA_ASSERT(cudaMalloc(&done, sizeof(unsigned int)));
  CUDA_ASSERT(cudaMemset(done, 0, sizeof(unsigned int)));
  double seconds = 0;
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      auto fail = [&](const std::string& what) { failures[r].push_back(what); };
      cudaSetDevice(0);
      szComm_t comm = nullptr;
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.codec = SZ_CODEC_ON;
      cfg.timeoutMs = 10000;
      if (szCommInitRankConfig(&comm, 2, id, r, &cfg) != szSuccess) {
        fail("init: " + std::string(szGetLastError(nullptr)));
        initFailed = true;
      }
      cudaStream_t stream = nullptr;
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
      uint16_t* buf = nullptr;
      if (cudaMalloc(&buf, kElems * 2) != cudaSuccess) fail("cudaMalloc");
      if (r == 0) cudaMemcpy(buf, data.data(), kElems * 2, cudaMemcpyHostToDevice);
      else cudaMemset(buf, 0, kElems * 2);
      // The first operation connects the pair; a small one, so that the timed receive's launch
      // is the only one in flight.
      barrier.wait();
      if (!initFailed) {
        szResult_t res = r == 0 ? szSend(buf, 1, szBfloat16, 1, comm, stream) : szRecv(buf, 1, szBfloat16, 0, comm, stream);
        if (res != szSuccess || cudaStreamSynchronize(stream) != cudaSuccess) fail("connect: " + std::string(szGetLastError(comm)));
      }
      barrier.wait();
      const auto t0 = std::chrono::steady_clock::now();
      if (!initFailed && r == 1 && szRecv(buf, kElems, szBfloat16, 0, comm, stream) != szSuccess)
        fail("szRecv: " + std::string(szGetLastError(comm)));
      barrier.wait();  // rank 1's receive is enqueued; its kernel starts waiting
      if (!initFailed && r == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        // Twice as many blocks as multiprocessors, each needing a whole one for 2 ms (waves over
        // the multiprocessors the receive leaves free), then the send.
        wholeMultiprocessorKernel<<<2 * sms, 256, smem, stream>>>(2000000ull, done);
        if (cudaGetLastError() != cudaSuccess) fail("the compute kernel did not launch");
        if (szSend(buf, kElems, szBfloat16, 1, comm, stream) != szSuccess) fail("szSend: " + std::string(szGetLastError(comm)));
      }
      if (cudaStreamSynchronize(stream) != cudaSuccess) fail("stream error");
      szResult_t async = szSuccess;
      if (comm) szCommGetAsyncError(comm, &async);
      if (async != szSuccess) fail("transfer: " + std::string(szGetLastError(comm)));
      if (r == 1) {
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<uint16_t> got(kElems);
        cudaMemcpy(got.data(), buf, kElems * 2, cudaMemcpyDeviceToHost);
        if (got != data) fail("the received data differ");
      }
      barrier.wait();  // no rank frees (a device-wide wait) while the other's kernels may run
      if (comm) szCommDestroy(comm);
      cudaFree(buf);
      cudaStreamDestroy(stream);
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r)
    for (const std::string& f : failures[r]) ADD_FAILURE() << "rank " << r << ": " << f;
  unsigned int blocks = 0;
  cudaMemcpy(&blocks, done, sizeof(blocks), cudaMemcpyDeviceToHost);
  cudaFree(done);
  EXPECT_EQ(blocks, 2u * unsigned(sms)) << "the compute kernel's blocks";
  EXPECT_LT(seconds, 5.0) << "the transfer waited for the receive's timeout (10 s): its kernel held every "
                             "multiprocessor, and the compute before the send could not run";
  printf("compute beside a waiting receive: %d multiprocessors, %d bytes of shared memory a block, "
         "256 MiB in %.3f s\n", sms, smem, seconds);
}
