// The hand-off pattern of examples/handoff.py --threads at its GPU script's size (2026-12-06: its
// handoff_layers step timed out in a whole-cache transfer on one H100, while the pytest version of
// 1 MiB passed): two ranks as threads of this process on one GPU, each on a stream of its own,
// with two communicators between them (codec on and codec off, as the example's "splitzip" and
// "raw"). A 16-layer KV cache of 32 blocks of 8 MiB (256 MiB) goes from rank 0 to rank 1 layer
// by layer (szSendv of each layer's K and V from a second stream of rank 0), then whole (one
// szSendv / szRecvv of the 32 blocks) three times on each communicator, the codec-off one
// connecting at its first transfer, then whole once more of arbitrary bits. Between the
// layer-wise and those, one whole transfer and three of zeros on the codec-on communicator. Every transfer is
// checked bit for bit and must finish well inside the timeout.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../kv_like.h"
#include "gpu_test_util.h"
#include "thread_barrier.h"

namespace {

constexpr int kLayers = 16;
constexpr int kBlocks = 2 * kLayers;
constexpr size_t kBlockElems = size_t(4) << 20;  // 8 MiB of BF16 per block

// Block `b` of arbitrary 16-bit patterns (every exponent, NaN payloads, -0, denormals).
std::vector<uint16_t> randomBits(int b) {
  std::mt19937 rng(1000 + uint32_t(b));
  std::vector<uint16_t> v(kBlockElems);
  for (uint16_t& x : v) x = uint16_t(rng());
  return v;
}

TEST(CommHandoffGpu, LayerwiseThenWholeCacheOnTwoCommunicators) {
  SKIP_WITHOUT_GPU();
  szUniqueId ids[2];
  for (szUniqueId& id : ids) ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  // Rank 0's blocks: one KV-like pattern, each block's first element its index (order checked).
  std::vector<uint16_t> pattern = sztest::kvLikeBf16(kBlockElems, 11, 0.5f);
  sztest::Barrier barrier(2);
  std::atomic<bool> initFailed{false};  // then neither rank transfers (their barriers stay paired)
  std::vector<std::string> failures[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      auto fail = [&](const std::string& what) { failures[r].push_back(what); };
      cudaSetDevice(0);
      szComm_t comms[2] = {nullptr, nullptr};  // codec on, codec off
      for (int c = 0; c < 2; ++c) {
        szConfig_t cfg = SZ_CONFIG_INITIALIZER;
        cfg.codec = c == 0 ? SZ_CODEC_ON : SZ_CODEC_OFF;
        cfg.timeoutMs = 20000;
        if (szCommInitRankConfig(&comms[c], 2, ids[c], r, &cfg) != szSuccess) {
          fail("init: " + std::string(szGetLastError(nullptr)));
          initFailed = true;
        }
      }
      cudaStream_t main = nullptr, side = nullptr;
      cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking);
      cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
      std::vector<uint8_t*> blocks(kBlocks, nullptr);
      std::vector<void*> ptrs(kBlocks);
      std::vector<size_t> counts(kBlocks, kBlockElems);
      for (int b = 0; b < kBlocks; ++b) {
        if (cudaMalloc(&blocks[b], kBlockElems * 2) != cudaSuccess) fail("cudaMalloc");
        ptrs[b] = blocks[b];
        if (r == 0) {
          std::vector<uint16_t> mine = pattern;
          mine[0] = uint16_t(b);
          cudaMemcpy(blocks[b], mine.data(), kBlockElems * 2, cudaMemcpyHostToDevice);
        }
      }
      auto check = [&](const char* what) {  // rank 1: every block as rank 0 sent it
        if (r != 1) return;
        std::vector<uint16_t> got(kBlockElems);
        for (int b = 0; b < kBlocks; ++b) {
          cudaMemcpy(got.data(), blocks[b], kBlockElems * 2, cudaMemcpyDeviceToHost);
          bool same = got[0] == uint16_t(b) && std::equal(got.begin() + 1, got.end(), pattern.begin() + 1);
          if (!same) {
            fail(std::string(what) + ": block " + std::to_string(b) + " differs");
            return;
          }
          cudaMemsetAsync(blocks[b], 0, kBlockElems * 2, main);  // ahead of the next receive on `main`
        }
      };
      auto finish = [&](const char* what, szResult_t res, szComm_t comm) {
        if (res != szSuccess) fail(std::string(what) + ": " + szGetLastError(nullptr));
        if (cudaStreamSynchronize(main) != cudaSuccess || cudaStreamSynchronize(side) != cudaSuccess)
          fail(std::string(what) + ": stream error");
        szResult_t async = szSuccess;
        szCommGetAsyncError(comm, &async);
        if (async != szSuccess) fail(std::string(what) + ": " + szGetLastError(comm));
      };
      barrier.wait();
      if (!initFailed) {
        // Layer by layer on the codec-on communicator: rank 0 from its side stream.
        szResult_t res = szSuccess;
        for (int l = 0; l < kLayers && res == szSuccess; ++l)
          res = r == 0 ? szSendv(&ptrs[2 * l], &counts[2 * l], 2, szBfloat16, 1, comms[0], side)
                       : szRecvv(&ptrs[2 * l], &counts[2 * l], 2, szBfloat16, 0, comms[0], main);
        finish("layer-wise", res, comms[0]);
        check("layer-wise");
        // Whole on the codec-on communicator, then blocks of zeros on it: the example's first timed
        // transfer came right after its whole hand-off and sent torch.empty blocks never written on
        // rank 0 (fresh device memory reads as zeros: exponent 0 only, which no KV codebook holds,
        // so every element escapes until the codebook follows the drift).
        barrier.wait();
        res = r == 0 ? szSendv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 1, comms[0], main)
                     : szRecvv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 0, comms[0], main);
        finish("whole, codec on, before the zeros", res, comms[0]);
        check("whole, codec on, before the zeros");
        for (int t = 0; t < 3; ++t) {
          barrier.wait();
          if (r == 0 && t == 0)
            for (int b = 0; b < kBlocks; ++b) cudaMemsetAsync(blocks[b], 0, kBlockElems * 2, main);
          if (r == 1)
            for (int b = 0; b < kBlocks; ++b) cudaMemsetAsync(blocks[b], 0xA5, kBlockElems * 2, main);
          const auto t0 = std::chrono::steady_clock::now();
          res = r == 0 ? szSendv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 1, comms[0], main)
                       : szRecvv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 0, comms[0], main);
          const std::string what = "zeros, codec on, transfer " + std::to_string(t);
          finish(what.c_str(), res, comms[0]);
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (s > 5) fail(what + ": " + std::to_string(s) + " s");
          if (r == 1)
            for (int b = 0; b < kBlocks; ++b) {
              std::vector<uint16_t> got(kBlockElems);
              cudaMemcpy(got.data(), blocks[b], kBlockElems * 2, cudaMemcpyDeviceToHost);
              if (std::any_of(got.begin(), got.end(), [](uint16_t x) { return x != 0; })) {
                fail(what + ": block " + std::to_string(b) + " is not zeros");
                break;
              }
            }
        }
        barrier.wait();
        if (r == 0)  // the KV pattern back for the transfers below
          for (int b = 0; b < kBlocks; ++b) {
            std::vector<uint16_t> mine = pattern;
            mine[0] = uint16_t(b);
            cudaMemcpy(blocks[b], mine.data(), kBlockElems * 2, cudaMemcpyHostToDevice);
          }
        // Whole, three times on each communicator.
        for (int c = 0; c < 2; ++c)
          for (int t = 0; t < 3; ++t) {
            barrier.wait();
            const auto t0 = std::chrono::steady_clock::now();
            res = r == 0 ? szSendv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 1, comms[c], main)
                         : szRecvv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 0, comms[c], main);
            const std::string what = std::string("whole, codec ") + (c == 0 ? "on" : "off") + ", transfer " +
                                     std::to_string(t);
            finish(what.c_str(), res, comms[c]);
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (s > 5) fail(what + ": " + std::to_string(s) + " s");
            check(what.c_str());
          }
        // Whole once more with codec on, rank 0's blocks holding arbitrary bits (the example's
        // timed transfers send torch.empty blocks: whatever the memory held, NaNs and all).
        barrier.wait();
        if (r == 0)
          for (int b = 0; b < kBlocks; ++b) {
            std::vector<uint16_t> bits = randomBits(b);
            cudaMemcpy(blocks[b], bits.data(), kBlockElems * 2, cudaMemcpyHostToDevice);
          }
        barrier.wait();
        res = r == 0 ? szSendv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 1, comms[0], main)
                     : szRecvv(ptrs.data(), counts.data(), kBlocks, szBfloat16, 0, comms[0], main);
        finish("whole, codec on, arbitrary bits", res, comms[0]);
        if (r == 1)
          for (int b = 0; b < kBlocks; ++b) {
            std::vector<uint16_t> got(kBlockElems);
            cudaMemcpy(got.data(), blocks[b], kBlockElems * 2, cudaMemcpyDeviceToHost);
            if (got != randomBits(b)) {
              fail("whole, codec on, arbitrary bits: block " + std::to_string(b) + " differs");
              break;
            }
          }
      }
      barrier.wait();  // no rank frees (a device-wide wait) while the other's kernels may run
      for (szComm_t c : comms)
        if (c) szCommDestroy(c);
      for (uint8_t* b : blocks) cudaFree(b);
      cudaStreamDestroy(main);
      cudaStreamDestroy(side);
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r)
    for (const std::string& f : failures[r]) ADD_FAILURE() << "rank " << r << ": " << f;
}

}  // namespace
