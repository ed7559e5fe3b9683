// Lazy connections on one GPU (issue: one data protocol, "lazy, bounded connections"): 16 ranks
// as threads of this process on the ipc wire. Init allocates no slot ring; a ring exchange (each
// rank with its two neighbours) sets up two pairs per rank; an all-to-all then sets up the rest,
// and every rank's slot memory stays within 1 GiB. Every exchange is checked bit for bit. The
// figures (MiB per rank at each stage, per pair) go to stdout for the GPU script's table. And one
// thread driving two ranks in one group, whose connects must not wait for each other.
// The all-to-all goes in pairwise rounds: a group of all 30 operations per rank would launch 480
// blocks on one GPU, more than can be resident at once (docs/PIPELINE.md: a launch's blocks spin
// for their peers').
//
// 16 launches of SM-count blocks cannot all be resident at once on one GPU (each spins for its
// peers): the test runs 8 blocks per launch, and keeps ipc's default ring (a slot per block of
// a launch's default, half the multiprocessors, in slots of 256 KiB) with SZ_SLOT_COUNT, so the
// memory figures are the defaults'.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../kv_like.h"
#include "gpu_test_util.h"
#include "thread_barrier.h"

namespace {

constexpr int kRanks = 16;

size_t usedBytes() {
  size_t freeB = 0, total = 0;
  cudaMemGetInfo(&freeB, &total);
  return total - freeB;
}

// Restores an environment variable on scope exit.
struct EnvVar {
  std::string name, old;
  bool had;
  EnvVar(const char* n, const char* v) : name(n), had(getenv(n) != nullptr) {
    if (had) old = getenv(n);
    setenv(n, v, 1);
  }
  ~EnvVar() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

TEST(CommLazyGpu, SixteenRanksConnectOnlyThePeersTheyUse) {
  SKIP_WITHOUT_GPU();
  cudaSetDevice(0);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  // ipc's default ring: a slot per block, half the multiprocessors (src/comm.cc, slotPathConfig)
  const uint64_t slots = std::max<uint64_t>(1, uint64_t(prop.multiProcessorCount) / 2);
  EnvVar blocksVar("SZ_SLOT_BLOCKS", "8"), slotsVar("SZ_SLOT_COUNT", std::to_string(slots).c_str());
  // One ring per pair and direction in the receiver's memory: `slots` slots of 256 KiB + header.
  const double pairMiB = double(slots) * double(256 << 10) / (1 << 20);
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  const size_t count = 1 << 19;  // 1 MiB of BF16 to each neighbour, 256 KiB to every rank
  const size_t small = 1 << 17;
  auto data = sztest::kvLikeBf16(count, 5, 0.5f);
  sztest::Barrier barrier(kRanks);
  std::vector<szResult_t> res(kRanks, szSuccess);
  std::vector<size_t> wrong(kRanks, 0);
  size_t before = 0, afterInit = 0, afterRing = 0, afterAll = 0;
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(0);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      uint8_t *send = nullptr, *recv = nullptr;
      cudaMalloc(&send, count * 2);
      cudaMalloc(&recv, count * 2 * kRanks);
      cudaMemcpyAsync(send, data.data(), count * 2, cudaMemcpyHostToDevice, s);
      cudaStreamSynchronize(s);
      barrier.wait();
      if (r == 0) before = usedBytes();
      barrier.wait();
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.codec = SZ_CODEC_ON;
      cfg.timeoutMs = 30000;
      szComm_t comm = nullptr;
      res[r] = szCommInitRankConfig(&comm, kRanks, id, r, &cfg);
      barrier.wait();
      if (r == 0) afterInit = usedBytes();
      auto check = [&](size_t elems, int peer, size_t at) {
        std::vector<uint16_t> got(elems);
        cudaMemcpy(got.data(), recv + at, elems * 2, cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < elems; ++i) wrong[r] += got[i] != data[i];
        (void)peer;
      };
      // Ring: send to the next rank, receive from the previous one.
      if (res[r] == szSuccess) {
        cudaMemsetAsync(recv, 0, count * 2, s);
        szGroupStart();
        szSend(send, count, szBfloat16, (r + 1) % kRanks, comm, s);
        szRecv(recv, count, szBfloat16, (r + kRanks - 1) % kRanks, comm, s);
        res[r] = szGroupEnd();
        if (cudaStreamSynchronize(s) != cudaSuccess && res[r] == szSuccess) res[r] = szUnhandledCudaError;
        check(count, (r + kRanks - 1) % kRanks, 0);
      }
      barrier.wait();
      if (r == 0) afterRing = usedBytes();
      // All to all: every rank sends `small` elements to every other and receives as many from
      // each, in 15 shifted pairwise rounds (round k: to r + k, from r - k). One group of all 30
      // operations would launch 30 blocks per rank (an operation takes a block at least), 480 on
      // 132 multiprocessors: blocks that spin for peers that are not resident wait out the
      // timeout (one H100, 142d948: szTimeout on every rank).
      if (res[r] == szSuccess) cudaMemsetAsync(recv, 0, small * 2 * kRanks, s);
      for (int k = 1; k < kRanks && res[r] == szSuccess; ++k) {
        const int to = (r + k) % kRanks, from = (r + kRanks - k) % kRanks;
        szGroupStart();
        szSend(send, small, szBfloat16, to, comm, s);
        szRecv(recv + size_t(from) * small * 2, small, szBfloat16, from, comm, s);
        res[r] = szGroupEnd();
        if (cudaStreamSynchronize(s) != cudaSuccess && res[r] == szSuccess) res[r] = szUnhandledCudaError;
      }
      if (res[r] == szSuccess)
        for (int p = 0; p < kRanks; ++p)
          if (p != r) check(small, p, size_t(p) * small * 2);
      barrier.wait();
      if (r == 0) afterAll = usedBytes();
      barrier.wait();
      szResult_t async = szSuccess;
      if (comm) szCommGetAsyncError(comm, &async);
      if (res[r] == szSuccess) res[r] = async;
      if (res[r] != szSuccess) fprintf(stderr, "rank %d: %s\n", r, szGetLastError(comm));
      barrier.wait();  // no rank frees (a device-wide sync) while another's kernels may still run
      if (comm) szCommDestroy(comm);
      cudaStreamDestroy(s);
      cudaFree(send);
      cudaFree(recv);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(res[r], szSuccess) << "rank " << r;
    EXPECT_EQ(wrong[r], 0u) << "rank " << r;
  }
  const double mib = 1 << 20;
  const double initPer = double(afterInit - before) / mib / kRanks, ringPer = double(afterRing - afterInit) / mib / kRanks;
  const double allPer = double(afterAll - afterInit) / mib / kRanks, totalPer = double(afterAll - before) / mib / kRanks;
  printf("lazy connections, %d ranks as threads on one GPU (ipc): device memory per rank: init %.1f MiB, + ring "
         "(2 peers) %.1f MiB, + all-to-all (15 peers) %.1f MiB; in all %.1f MiB; one pair's ring %.1f MiB\n",
         kRanks, initPer, ringPer, allPer, totalPer, pairMiB);
  // Init sets up no pair: less than two rings per rank, where 15 pairs at init would be 15 (247 MiB
  // on one H100). Its own arenas (two scratch arenas of 32 slices, the accumulators, the
  // calibration counts) measured 17.2 MiB on one H100 in a process of its own (cd0e31a), as the GPU
  // script runs this test; after the rest of the suite in the same process, 37 MiB (142d948).
  EXPECT_LT(initPer, 2.0 * pairMiB);
  // The ring sets up two pairs per rank (each rank's receive rings from its two neighbours), not 15.
  EXPECT_GE(ringPer, 1.5 * pairMiB);
  EXPECT_LE(ringPer, 3.0 * pairMiB);
  // Every rank's slot memory within 1 GiB with all 15 peers connected.
  EXPECT_LE(allPer, 1024.0);
  EXPECT_GE(allPer, 14.0 * pairMiB);
}

// One thread drives two ranks (NCCL's single-threaded multi-GPU pattern): non-blocking inits,
// then one group sends from rank 0's communicator and receives on rank 1's. Each rank's first
// operation connects the pair and waits for the other's, so szGroupEnd connects the two
// communicators on threads of their own; before that change it timed out.
TEST(CommLazyGpu, OneThreadDrivesTwoRanksInOneGroup) {
  SKIP_WITHOUT_GPU();
  cudaSetDevice(0);
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  szComm_t comms[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) {
    szConfig_t cfg = SZ_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    cfg.timeoutMs = 20000;
    cfg.codec = SZ_CODEC_ON;
    const szResult_t res = szCommInitRankConfig(&comms[r], 2, id, r, &cfg);
    ASSERT_TRUE(res == szSuccess || res == szInProgress) << szGetLastError(nullptr);
  }
  for (int r = 0; r < 2; ++r) {
    szResult_t async = szInProgress;
    while (async == szInProgress) ASSERT_EQ(szCommGetAsyncError(comms[r], &async), szSuccess);
    ASSERT_EQ(async, szSuccess) << szGetLastError(comms[r]);
  }
  const size_t count = 3 << 20;
  auto data = sztest::kvLikeBf16(count, 7, 0.5f);
  uint8_t *send = nullptr, *recv = nullptr;
  CUDA_ASSERT(cudaMalloc(&send, count * 2));
  CUDA_ASSERT(cudaMalloc(&recv, count * 2));
  cudaStream_t s[2];
  for (cudaStream_t& x : s) CUDA_ASSERT(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaMemcpyAsync(send, data.data(), count * 2, cudaMemcpyHostToDevice, s[0]));
  CUDA_ASSERT(cudaMemsetAsync(recv, 0, count * 2, s[1]));
  CUDA_ASSERT(cudaStreamSynchronize(s[0]));
  CUDA_ASSERT(cudaStreamSynchronize(s[1]));
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(send, count, szBfloat16, 1, comms[0], s[0]), szSuccess);
  EXPECT_EQ(szRecv(recv, count, szBfloat16, 0, comms[1], s[1]), szSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "not the connect's timeout";
  CUDA_ASSERT(cudaStreamSynchronize(s[0]));
  CUDA_ASSERT(cudaStreamSynchronize(s[1]));
  std::vector<uint16_t> got(count);
  CUDA_ASSERT(cudaMemcpy(got.data(), recv, count * 2, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(got == data) << "received bits differ";
  for (szComm_t c : comms) EXPECT_EQ(szCommDestroy(c), szSuccess);
  for (cudaStream_t x : s) cudaStreamDestroy(x);
  cudaFree(send);
  cudaFree(recv);
}

}  // namespace
