// Communicator tests with device buffers (run on the GPU machines; skipped elsewhere): ranks
// as threads of one process, one GPU each where there are two, over the nccl and tcp wires,
// codec on and off, checked bit for bit.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <thread>

#include "../kv_like.h"
#include "gpu_test_util.h"

namespace {

int deviceCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

struct Case {
  const char* wire;
  int codec;
  size_t count;
  int segments;  // > 1: szSendv/szRecvv with this many pieces
  int groups;    // exchanges queued back to back on the stream before it is synchronized
};

// cudaStreamSynchronize for at most 60 s (the communicators time out in 20 s in the GPU
// script): a stream still held after that would hang every later call, so the process reports
// what it knows and exits.
cudaError_t waitStream(cudaStream_t s, szComm_t comm, int rank) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  cudaError_t q;
  while ((q = cudaStreamQuery(s)) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (q == cudaErrorNotReady) {
    szResult_t async = szSuccess;
    szCommGetAsyncError(comm, &async);
    fprintf(stderr, "rank %d: the stream is still held after 60 s; communicator error %d: %s\n", rank, (int)async,
            szGetLastError(comm));
    std::_Exit(3);
  }
  return q;
}

// Two ranks exchange `count` BF16 elements both ways at once; returns the wrong elements.
void exchange(const Case& c, size_t* wrong, szResult_t* err) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  auto data = sztest::kvLikeBf16(c.count + 1, 3, 0.5f);
  size_t bytes = c.count * 2;
  std::vector<std::thread> ranks;
  std::vector<size_t> bad(2, 0);
  std::vector<szResult_t> res(2, szSuccess);
  std::atomic<int> synced{0};
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(r % deviceCount());
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = c.wire;
      cfg.codec = c.codec;
      cfg.sliceBytes = 1 << 20;
      szComm_t comm = nullptr;
      if ((res[r] = szCommInitRankConfig(&comm, 2, id, r, &cfg)) != szSuccess) {
        fprintf(stderr, "rank %d: init: %s\n", r, szGetLastError(nullptr));
        synced.fetch_add(1);  // the other rank must not wait at the barrier below
        return;
      }
      uint8_t *send = nullptr, *recv = nullptr;
      cudaMalloc(&send, bytes + 1);
      cudaMalloc(&recv, bytes + 1);
      cudaStream_t s;  // non-blocking: with one GPU, the other rank's cudaMemcpy must not wait for it
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      // On the stream and waited for: the legacy stream's cudaMemset (asynchronous) and a pageable
      // cudaMemcpy (it may return before its DMA lands) are not ordered with a non-blocking
      // stream, so the 0xA5 fill could land after the received data (seen on H200).
      cudaMemcpyAsync(send, data.data(), bytes, cudaMemcpyHostToDevice, s);
      cudaMemsetAsync(recv, 0xA5, bytes + 1, s);
      cudaStreamSynchronize(s);
      int peer = 1 - r;
      for (int g = 0; g < c.groups && res[r] == szSuccess; ++g) {
        szGroupStart();
        if (c.segments <= 1) {
          szSend(send, c.count, szBfloat16, peer, comm, s);
          szRecv(recv, c.count, szBfloat16, peer, comm, s);
        } else {
          std::vector<const void*> sp;
          std::vector<void*> rp;
          std::vector<size_t> sc, rc;
          size_t piece = c.count / size_t(c.segments);
          for (int i = 0; i < c.segments; ++i) {
            size_t n = i + 1 == c.segments ? c.count - piece * size_t(i) : piece;
            sp.push_back(send + 2 * piece * size_t(i));
            rp.push_back(recv + 2 * piece * size_t(i));
            sc.push_back(n);
            rc.push_back(n);
          }
          szSendv(sp.data(), sc.data(), c.segments, szBfloat16, peer, comm, s);
          szRecvv(rp.data(), rc.data(), c.segments, szBfloat16, peer, comm, s);
        }
        res[r] = szGroupEnd();
      }
      if (waitStream(s, comm, r) != cudaSuccess) res[r] = szUnhandledCudaError;
      // Both ranks done before either frees: with one GPU, a cudaFree synchronizes the device,
      // which would wait for the other rank's stream, held until its peer (this rank) progresses.
      synced.fetch_add(1);
      while (synced.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      szResult_t async = szSuccess;
      szCommGetAsyncError(comm, &async);
      if (res[r] == szSuccess) res[r] = async;
      if (res[r] != szSuccess) fprintf(stderr, "rank %d: %s\n", r, szGetLastError(comm));
      std::vector<uint16_t> got(c.count + 1);
      cudaMemcpy(got.data(), recv, bytes + 1, cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < c.count; ++i) bad[r] += got[i] != data[i];
      if ((reinterpret_cast<uint8_t*>(got.data()))[bytes] != 0xA5) ++bad[r];  // wrote past the end
      cudaStreamDestroy(s);
      cudaFree(send);
      cudaFree(recv);
      if (res[r] == szSuccess) res[r] = szCommFinalize(comm);
      szCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
  *wrong = bad[0] + bad[1];
  *err = res[0] != szSuccess ? res[0] : res[1];
}

// sendrecv_perf's reduction, which hung when the pipeline staged raw device slices with the
// copy engines: rank 0 receives and queues a cudaMemcpyAsync behind the held receive on the same
// stream (a copy engine now waits on the hold), then sends back the sum; rank 1 sends and
// receives outside a group, on device memory only, sending back what it got. Its raw send is
// staged through pinned memory on the tcp wire: with a copy engine, that copy never ran.
// (A copy of rank 1's own behind rank 0's would stall too on one GPU: the test has none.)
void copyBehindHeldReceive(const char* wire, szResult_t res[2], double sum[2]) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  std::vector<std::thread> ranks;
  std::atomic<int> arrived{0};
  auto barrier = [&arrived](int round) {  // all of round `round` arrived (1 or 2)
    arrived.fetch_add(1);
    while (arrived.load() < 2 * round) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      // The tcp case puts both ranks on GPU 0, where copy engines are shared: the stall needs that.
      cudaSetDevice(std::string(wire) == "tcp" ? 0 : r % deviceCount());
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = wire;
      szComm_t comm = nullptr;
      res[r] = szCommInitRankConfig(&comm, 2, id, r, &cfg);
      double* buf = nullptr;
      cudaMalloc(&buf, sizeof(double));
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      double v = 2.5;
      if (r == 1) cudaMemcpyAsync(buf, &v, sizeof(double), cudaMemcpyHostToDevice, s);
      cudaStreamSynchronize(s);  // landed before the exchange (a pageable cudaMemcpy may return earlier)
      barrier(1);
      for (int i = 0; i < 3 && res[r] == szSuccess; ++i) {
        if (r == 0) {
          double other = 0;
          res[r] = szRecv(buf, 1, szFloat64, 1, comm, s);
          cudaMemcpyAsync(&other, buf, sizeof(double), cudaMemcpyDeviceToHost, s);  // queued behind the hold
          if (waitStream(s, comm, r) != cudaSuccess) res[r] = szUnhandledCudaError;
          v = 1.5 + other;
          cudaMemcpyAsync(buf, &v, sizeof(double), cudaMemcpyHostToDevice, s);
          if (res[r] == szSuccess) res[r] = szSend(buf, 1, szFloat64, 1, comm, s);
        } else {
          res[r] = szSend(buf, 1, szFloat64, 0, comm, s);
          if (res[r] == szSuccess) res[r] = szRecv(buf, 1, szFloat64, 0, comm, s);
        }
        if (waitStream(s, comm, r) != cudaSuccess && res[r] == szSuccess) res[r] = szUnhandledCudaError;
      }
      if (r == 1) cudaMemcpy(&v, buf, sizeof(double), cudaMemcpyDeviceToHost);
      sum[r] = v;
      szResult_t async = szSuccess;
      if (comm) szCommGetAsyncError(comm, &async);
      if (res[r] == szSuccess) res[r] = async;
      barrier(2);  // with one GPU, cudaFree waits for the other rank's stream
      cudaStreamDestroy(s);
      cudaFree(buf);
      szCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
}

class CommGpuWire : public ::testing::TestWithParam<const char*> {};

TEST_P(CommGpuWire, CopyQueuedBehindAHeldReceive) {
  SKIP_WITHOUT_GPU();
  if (std::string(GetParam()) == "nccl" && deviceCount() < 2) GTEST_SKIP() << "the nccl wire test needs two GPUs";
  szResult_t res[2] = {szSuccess, szSuccess};
  double sum[2] = {0, 0};
  copyBehindHeldReceive(GetParam(), res, sum);
  EXPECT_EQ(res[0], szSuccess) << szGetErrorString(res[0]);
  EXPECT_EQ(res[1], szSuccess) << szGetErrorString(res[1]);
  // Rank 1 sends 2.5, gets 1.5 + 2.5 = 4, sends 4, gets 5.5, sends 5.5, gets 7.
  EXPECT_EQ(sum[1], 7.0);
}

INSTANTIATE_TEST_SUITE_P(Wires, CommGpuWire, ::testing::Values("nccl", "tcp", "ipc"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

class CommGpu : public ::testing::TestWithParam<Case> {};

TEST_P(CommGpu, ExchangeIsBitExact) {
  SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  if (std::string(c.wire) == "nccl" && deviceCount() < 2) {
    GTEST_SKIP() << "the nccl wire test needs two GPUs";
  }
  size_t wrong = 0;
  szResult_t err = szSuccess;
  exchange(c, &wrong, &err);
  EXPECT_EQ(err, szSuccess) << szGetErrorString(err) << ": " << szGetLastError(nullptr);
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Wires, CommGpu,
    ::testing::Values(Case{"nccl", SZ_CODEC_ON, 0, 1, 1}, Case{"nccl", SZ_CODEC_ON, 1, 1, 1}, Case{"nccl", SZ_CODEC_ON, 1000, 1, 1},
                      Case{"nccl", SZ_CODEC_ON, (4 << 20) + 3, 1, 1}, Case{"nccl", SZ_CODEC_OFF, (4 << 20) + 3, 1, 1},
                      Case{"nccl", SZ_CODEC_AUTO, 32 << 20, 1, 1}, Case{"nccl", SZ_CODEC_ON, (2 << 20) + 7, 5, 1},
                      Case{"nccl", SZ_CODEC_ON, (3 << 20) + 1, 1, 6}, Case{"nccl", SZ_CODEC_OFF, (3 << 20) + 1, 2, 6},
                      Case{"tcp", SZ_CODEC_ON, (4 << 20) + 3, 1, 1}, Case{"tcp", SZ_CODEC_OFF, (1 << 20) + 1, 1, 1},
                      Case{"tcp", SZ_CODEC_ON, (1 << 20) + 7, 3, 1}, Case{"tcp", SZ_CODEC_ON, (1 << 20) + 7, 1, 4},
                      // ipc: the slot protocol, both ranks on one GPU where there is one.
                      Case{"ipc", SZ_CODEC_ON, 0, 1, 1}, Case{"ipc", SZ_CODEC_ON, 1, 1, 1},
                      Case{"ipc", SZ_CODEC_ON, 1001, 1, 1}, Case{"ipc", SZ_CODEC_ON, 2048, 1, 1},
                      Case{"ipc", SZ_CODEC_ON, (2 << 20) - 1, 1, 1}, Case{"ipc", SZ_CODEC_ON, (2 << 20) + 1, 1, 1},
                      Case{"ipc", SZ_CODEC_OFF, (2 << 20) + 1, 1, 1}, Case{"ipc", SZ_CODEC_AUTO, 32 << 20, 1, 3},
                      Case{"ipc", SZ_CODEC_ON, size_t(512) << 20, 1, 1}, Case{"ipc", SZ_CODEC_OFF, size_t(512) << 20, 1, 1},
                      Case{"ipc", SZ_CODEC_ON, (8 << 20) + 5, 4096, 1}, Case{"ipc", SZ_CODEC_OFF, (8 << 20) + 5, 4096, 1},
                      Case{"ipc", SZ_CODEC_ON, (3 << 20) + 1, 7, 6}),
    [](const ::testing::TestParamInfo<Case>& i) {
      return std::string(i.param.wire) + "_codec" + std::to_string(i.param.codec) + "_n" +
             std::to_string(i.param.count) + "_seg" + std::to_string(i.param.segments) + "_groups" +
             std::to_string(i.param.groups);
    });

}  // namespace
