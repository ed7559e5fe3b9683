// Codebooks that follow the data on the device path (SZ_CODEBOOK=auto; the slot protocol over
// the ipc wire, two ranks as threads of one process). First the shipped real KV, then the same
// KV scaled by 2^9 (exponents shifted off the default codebook): with auto the sender takes a
// histogram on the GPU once it sees the drift and switches (a send or two late: the escapes of a
// send are known when its launch is reaped), so the last shifted sends compress like the
// unshifted KV, where a fixed default codebook stores them raw. Then per-segment codebooks: a
// device szSendv of K and V of different exponent ranges (V = K x 2^8) gives each segment group
// its own codebook (src/proto/segment_groups.h), so from the second send on it compresses to
// within 0.3 % of each buffer's own top-16, where one codebook for the list cannot. Every send
// arrives bit-exact, into a receive list split differently from the sender's.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "splitzip.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/kv_samples.h"
#include "tests/oracle_ratio.h"

namespace {

constexpr int kSends = 6;

using Buffers = std::vector<std::vector<uint8_t>>;

std::vector<uint8_t> concat(const Buffers& list) {
  std::vector<uint8_t> all;
  for (const auto& b : list) all.insert(all.end(), b.begin(), b.end());
  return all;
}

struct Transfer {
  std::vector<double> ratios;             // per send: raw bytes / wire bytes
  std::vector<uint64_t> recalibrations;   // after each send
  bool exact = true;
};

// Rank 0 sends each phase's BF16 buffer list kSends times (szSend for a list of one, else
// szSendv); rank 1 receives it into `recvSplit` parts of one buffer, cut off the slice grid.
Transfer transfer(int mode, const std::vector<Buffers>& phases, int recvSplit = 1) {
  Transfer run;
  szUniqueId id;
  EXPECT_EQ(szGetUniqueId(&id), szSuccess);
  std::vector<std::vector<uint8_t>> alls;
  size_t bytes = 0;
  for (const Buffers& list : phases) {
    alls.push_back(concat(list));
    bytes = std::max(bytes, alls.back().size());
  }
  std::atomic<int> arrived{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      sztest::setRankDevice(r);
      szConfig_t cfg = sztest::ipcCodecConfig(mode);
      szComm_t comm = nullptr;
      EXPECT_EQ(szCommInitRankConfig(&comm, 2, id, r, &cfg), szSuccess) << szGetLastError(nullptr);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      uint8_t* buf = nullptr;  // one allocation: freeing between sends would wait for the peer's kernels
      cudaMalloc(&buf, bytes);
      // Pinned host buffers: a pageable copy on the receiver's stream, while the sender's thread
      // launches its kernel, hangs both ranks under compute-sanitizer (the sender times out;
      // seen on one H200 with memcheck, not without it); run_all.sh runs this test under memcheck.
      uint8_t *got = nullptr, *stage = nullptr;
      EXPECT_EQ(cudaMallocHost(&got, bytes), cudaSuccess);
      EXPECT_EQ(cudaMallocHost(&stage, bytes), cudaSuccess);
      szStats_t before{};
      for (size_t p = 0; p < phases.size(); ++p) {
        const std::vector<uint8_t>& all = alls[p];
        const size_t total = all.size() / 2;
        std::vector<void*> bufs;
        std::vector<size_t> counts;
        if (r == 0) {
          size_t at = 0;
          for (const auto& b : phases[p]) {
            bufs.push_back(buf + at);
            counts.push_back(b.size() / 2);
            at += b.size();
          }
        } else {
          for (int k = 0; k < recvSplit; ++k) {  // parts of unequal size
            const size_t begin = total * k / recvSplit + (k ? 333 : 0), end = total * (k + 1) / recvSplit + 333;
            bufs.push_back(buf + 2 * begin);
            counts.push_back((k + 1 == recvSplit ? total : end) - begin);
          }
        }
        for (int i = 0; i < kSends && comm; ++i) {
          if (r == 0) {
            memcpy(stage, all.data(), all.size());
            cudaMemcpyAsync(buf, stage, all.size(), cudaMemcpyHostToDevice, s);
            const szResult_t res =
                bufs.size() == 1 ? szSend(buf, total, szBfloat16, 1, comm, s)
                                 : szSendv(bufs.data(), counts.data(), int(bufs.size()), szBfloat16, 1, comm, s);
            EXPECT_EQ(res, szSuccess) << szGetLastError(comm);
          } else {
            cudaMemsetAsync(buf, 0xA5, bytes, s);
            const szResult_t res = bufs.size() == 1
                                       ? szRecv(buf, total, szBfloat16, 0, comm, s)
                                       : szRecvv(bufs.data(), counts.data(), int(bufs.size()), szBfloat16, 0, comm, s);
            EXPECT_EQ(res, szSuccess) << szGetLastError(comm);
            cudaMemcpyAsync(got, buf, all.size(), cudaMemcpyDeviceToHost, s);
          }
          EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
          if (r == 1 && !std::equal(all.begin(), all.end(), got)) run.exact = false;
          if (r == 0) {
            szStats_t now{};
            EXPECT_EQ(szCommGetStats(comm, &now), szSuccess);
            run.ratios.push_back(double(now.rawBytes - before.rawBytes) / double(now.wireBytes - before.wireBytes));
            run.recalibrations.push_back(now.recalibrations);
            before = now;
          }
        }
      }
      arrived.fetch_add(1);  // with one GPU, freeing waits for the other rank's kernels
      while (arrived.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      cudaFree(buf);
      cudaFreeHost(got);
      cudaFreeHost(stage);
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
  Transfer autoRun = transfer(SZ_CODEBOOK_AUTO, {{kv}, {shifted}});
  Transfer fixedRun = transfer(SZ_CODEBOOK_DEFAULT, {{kv}, {shifted}});
  ASSERT_EQ(autoRun.ratios.size(), size_t(2 * kSends));
  ASSERT_EQ(fixedRun.ratios.size(), size_t(2 * kSends));
  EXPECT_TRUE(autoRun.exact);
  EXPECT_TRUE(fixedRun.exact);
  EXPECT_GT(autoRun.ratios[0], 1.3);  // the default fits the sample
  EXPECT_LT(fixedRun.ratios[kSends], 1.01);  // shifted: the fixed default escapes nearly everything
  for (int i = 2 * kSends - 2; i < 2 * kSends; ++i)
    EXPECT_GT(autoRun.ratios[i], autoRun.ratios[0] * 0.995) << "send " << i << ": as the unshifted KV";
  EXPECT_GE(autoRun.recalibrations.back(), 1u);
  EXPECT_LE(autoRun.recalibrations.back(), 2u);
  EXPECT_EQ(fixedRun.recalibrations.back(), 0u);
}

// The KV sample repeated to `bytes`: a buffer of 8 MiB holds whole slices of any power-of-two
// slot slice up to that, so no slice holds two buffers' data, and a group's calibration (its
// first 4 Mi elements) covers all of it.
std::vector<uint8_t> kvTiled(const std::vector<uint8_t>& kv, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  for (size_t at = 0; at < bytes; at += kv.size()) std::copy_n(kv.begin(), std::min(kv.size(), bytes - at), &out[at]);
  return out;
}

void expectFollowsEachSegment(const Buffers& list, const char* layout, uint64_t shiftedGroups) {
  const double oracle = sztest::oracleRatio(list);
  const std::vector<uint8_t> all = concat(list);
  const double oneCodebook = sztest::oracleRatio({all});  // the best one codebook for the list does
  const Transfer perSegment = transfer(SZ_CODEBOOK_AUTO, {list}, 3);
  const Transfer oneBuffer = transfer(SZ_CODEBOOK_AUTO, {{all}});  // one group: one codebook on the device
  ASSERT_EQ(perSegment.ratios.size(), size_t(kSends));
  ASSERT_EQ(oneBuffer.ratios.size(), size_t(kSends));
  printf("[ figures  ] %s: oracle %.4f, one codebook's %.4f; per-segment sends", layout, oracle, oneCodebook);
  for (double r : perSegment.ratios) printf(" %.4f", r);
  printf(" (%llu recalibrations); one buffer", (unsigned long long)perSegment.recalibrations.back());
  for (double r : oneBuffer.ratios) printf(" %.4f", r);
  printf(" (%llu)\n", (unsigned long long)oneBuffer.recalibrations.back());
  EXPECT_TRUE(perSegment.exact) << layout;
  EXPECT_TRUE(oneBuffer.exact) << layout;
  // Every group calibrates on its first send's data; the codebooks come back when that send is
  // reaped, so from the second send on every group encodes with its own.
  for (int i = 1; i < kSends; ++i) {
    EXPECT_GE(perSegment.ratios[i], oracle * 0.997) << layout << " send " << i << ": within 0.3 % of the oracle";
    EXPECT_GT(perSegment.ratios[i], oneCodebook + 0.01) << layout << " send " << i << ": one codebook does as well";
    EXPECT_GT(perSegment.ratios[i], oneBuffer.ratios[i] + 0.01) << layout << " send " << i;
  }
  EXPECT_EQ(perSegment.recalibrations.back(), shiftedGroups) << layout << ": each shifted group switches once";
  EXPECT_EQ(perSegment.recalibrations.back(), perSegment.recalibrations[1]) << layout << ": switches after settling";
}

TEST(CommCodebookGpu, DeviceSendvGivesKAndVTheirOwnCodebooks) {
  SKIP_WITHOUT_GPU();
  const std::vector<uint8_t> kv = sztest::readKvSample("tinystories_kv_eval_bf16.safetensors");
  ASSERT_FALSE(kv.empty());
  const std::vector<uint8_t> k = kvTiled(kv, 8 << 20), v = sztest::scaledBf16(k, 8);
  expectFollowsEachSegment({k, v}, "[K, V = K x 2^8]", 1);
  expectFollowsEachSegment({k, v, k, v}, "[K, V, K, V]", 2);  // four groups: the codebook table
}

}  // namespace
