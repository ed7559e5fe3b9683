// Codebooks that follow the data on the device path (SZ_CODEBOOK=auto; the slot protocol over
// the ipc wire, two ranks as threads of one process): the shipped real KV, then the same KV
// scaled by 2^9 (exponents shifted off the default codebook). Every send arrives bit-exact; with
// auto the sender takes a histogram on the GPU once it sees the drift and switches (a send or two
// late: the escapes of a send are known when its launch is reaped), so the last shifted sends
// compress like the unshifted KV, where a fixed default codebook stores them raw.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "splitzip.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/kv_samples.h"

namespace {

constexpr int kSends = 6;

struct Transfer {
  std::vector<double> ratios;  // per send: raw bytes / wire bytes
  uint64_t recalibrations = 0;
  bool exact = true;
};

Transfer transfer(int mode, const std::vector<std::vector<uint8_t>>& phases) {
  Transfer run;
  szUniqueId id;
  EXPECT_EQ(szGetUniqueId(&id), szSuccess);
  const size_t bytes = phases[0].size(), count = bytes / 2;
  std::atomic<int> arrived{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      int devices = 0;
      cudaGetDeviceCount(&devices);
      cudaSetDevice(r % devices);
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "ipc";
      cfg.codec = SZ_CODEC_ON;
      cfg.codebookMode = mode;
      szComm_t comm = nullptr;
      EXPECT_EQ(szCommInitRankConfig(&comm, 2, id, r, &cfg), szSuccess) << szGetLastError(nullptr);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      uint8_t* buf = nullptr;
      cudaMalloc(&buf, bytes);
      std::vector<uint8_t> got(bytes);
      szStats_t before{};
      for (const std::vector<uint8_t>& data : phases)
        for (int i = 0; i < kSends && comm; ++i) {
          if (r == 0) {
            cudaMemcpyAsync(buf, data.data(), bytes, cudaMemcpyHostToDevice, s);
            EXPECT_EQ(szSend(buf, count, szBfloat16, 1, comm, s), szSuccess) << szGetLastError(comm);
          } else {
            cudaMemsetAsync(buf, 0xA5, bytes, s);
            EXPECT_EQ(szRecv(buf, count, szBfloat16, 0, comm, s), szSuccess) << szGetLastError(comm);
            cudaMemcpyAsync(got.data(), buf, bytes, cudaMemcpyDeviceToHost, s);
          }
          EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
          if (r == 1 && got != data) run.exact = false;
          if (r == 0) {
            szStats_t now{};
            EXPECT_EQ(szCommGetStats(comm, &now), szSuccess);
            run.ratios.push_back(double(now.rawBytes - before.rawBytes) / double(now.wireBytes - before.wireBytes));
            run.recalibrations = now.recalibrations;
            before = now;
          }
        }
      arrived.fetch_add(1);  // with one GPU, freeing waits for the other rank's kernels
      while (arrived.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      cudaFree(buf);
      cudaStreamDestroy(s);
      if (comm) {
        EXPECT_EQ(szCommDestroy(comm), szSuccess);
      }
    });
  for (std::thread& t : ranks) t.join();
  return run;
}

TEST(CommCodebookGpu, AutoRecalibratesOnTheDeviceWhenTheKvShifts) {
  SKIP_WITHOUT_GPU();
  const std::vector<uint8_t> kv = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  ASSERT_FALSE(kv.empty());
  const std::vector<uint8_t> shifted = sztest::scaledBf16(kv, 9);
  Transfer autoRun = transfer(SZ_CODEBOOK_AUTO, {kv, shifted});
  Transfer fixedRun = transfer(SZ_CODEBOOK_DEFAULT, {kv, shifted});
  ASSERT_EQ(autoRun.ratios.size(), size_t(2 * kSends));
  ASSERT_EQ(fixedRun.ratios.size(), size_t(2 * kSends));
  EXPECT_TRUE(autoRun.exact);
  EXPECT_TRUE(fixedRun.exact);
  EXPECT_GT(autoRun.ratios[0], 1.3);  // the default fits the sample
  EXPECT_LT(fixedRun.ratios[kSends], 1.01);  // shifted: the fixed default escapes nearly everything
  for (int i = 2 * kSends - 2; i < 2 * kSends; ++i)
    EXPECT_GT(autoRun.ratios[i], autoRun.ratios[0] * 0.995) << "send " << i << ": as the unshifted KV";
  EXPECT_GE(autoRun.recalibrations, 1u);
  EXPECT_LE(autoRun.recalibrations, 2u);
  EXPECT_EQ(fixedRun.recalibrations, 0u);
}

}  // namespace
