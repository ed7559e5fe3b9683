// Send/receive to self with device buffers: a stream-ordered copy by a kernel on the receive's
// stream, the send's stream joined to it when the two differ. One rank, tcp wire; and a capture
// with a peer that is never replayed (two ranks, the default wire).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "splitzip.h"

namespace {

class CommSelfGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    szUniqueId id;
    ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
    szConfig_t cfg = SZ_CONFIG_INITIALIZER;
    cfg.wire = "tcp";
    ASSERT_EQ(szCommInitRankConfig(&comm_, 1, id, 0, &cfg), szSuccess) << szGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(szCommDestroy(comm_), szSuccess);
    }
  }
  szComm_t comm_ = nullptr;
};

// `sendStream` and `recvStream` may be the same. The data is put in place on `sendStream` and
// the receive buffer cleared on `recvStream` without waiting: the copy must be ordered after both.
void roundTrip(szComm_t comm, cudaStream_t sendStream, cudaStream_t recvStream, size_t count) {
  std::vector<uint16_t> host(count), back(count, 0);
  std::iota(host.begin(), host.end(), uint16_t(3));
  void *send = nullptr, *recv = nullptr;
  CUDA_ASSERT(cudaMalloc(&send, count * 2));
  CUDA_ASSERT(cudaMalloc(&recv, count * 2));
  CUDA_ASSERT(cudaMemsetAsync(recv, 0, count * 2, recvStream));
  CUDA_ASSERT(cudaMemcpyAsync(send, host.data(), count * 2, cudaMemcpyHostToDevice, sendStream));
  ASSERT_EQ(szGroupStart(), szSuccess);
  ASSERT_EQ(szSend(send, count, szBfloat16, 0, comm, sendStream), szSuccess);
  ASSERT_EQ(szRecv(recv, count, szBfloat16, 0, comm, recvStream), szSuccess);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  CUDA_ASSERT(cudaMemcpyAsync(back.data(), recv, count * 2, cudaMemcpyDeviceToHost, recvStream));
  CUDA_ASSERT(cudaStreamSynchronize(recvStream));
  CUDA_ASSERT(cudaStreamSynchronize(sendStream));
  EXPECT_EQ(back, host);
  cudaFree(send);
  cudaFree(recv);
}

TEST_F(CommSelfGpu, OneStream) {
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  roundTrip(comm_, s, s, 1 << 20);
  roundTrip(comm_, s, s, 7);
  cudaStreamDestroy(s);
}

TEST_F(CommSelfGpu, TwoStreams) {
  cudaStream_t a, b;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CUDA_ASSERT(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  roundTrip(comm_, a, b, 3 << 20);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST_F(CommSelfGpu, HostAndDeviceMixedIsInvalidArgument) {
  std::vector<uint16_t> host(64, 1);
  void* dev = nullptr;
  CUDA_ASSERT(cudaMalloc(&dev, 128));
  ASSERT_EQ(szGroupStart(), szSuccess);
  ASSERT_EQ(szSend(host.data(), 64, szBfloat16, 0, comm_, nullptr), szSuccess);
  ASSERT_EQ(szRecv(dev, 64, szBfloat16, 0, comm_, nullptr), szSuccess);
  EXPECT_EQ(szGroupEnd(), szInvalidArgument);
  cudaFree(dev);
}

// A send to self is a stream-ordered copy: captured into a CUDA graph, each replay copies the
// send buffer's contents of that moment.
TEST_F(CommSelfGpu, ASendToSelfIsCapturedAndReplays) {
  const size_t count = 3 << 18;
  cudaStream_t s;
  CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *send = nullptr, *recv = nullptr;
  CUDA_ASSERT(cudaMalloc(&send, count * 2));
  CUDA_ASSERT(cudaMalloc(&recv, count * 2));
  cudaGraph_t graph = nullptr;
  CUDA_ASSERT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  ASSERT_EQ(szGroupStart(), szSuccess);
  ASSERT_EQ(szSend(send, count, szBfloat16, 0, comm_, s), szSuccess);
  ASSERT_EQ(szRecv(recv, count, szBfloat16, 0, comm_, s), szSuccess);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  CUDA_ASSERT(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_ASSERT(cudaGraphInstantiate(&exec, graph, 0));
  std::vector<uint16_t> host(count), back(count);
  for (int replay = 0; replay < 3; ++replay) {
    std::iota(host.begin(), host.end(), uint16_t(17 * replay + 1));
    CUDA_ASSERT(cudaMemcpyAsync(send, host.data(), count * 2, cudaMemcpyHostToDevice, s));
    CUDA_ASSERT(cudaGraphLaunch(exec, s));
    CUDA_ASSERT(cudaMemcpyAsync(back.data(), recv, count * 2, cudaMemcpyDeviceToHost, s));
    CUDA_ASSERT(cudaStreamSynchronize(s));
    EXPECT_EQ(back, host) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(s);
}

// Two ranks as threads of this process over a fresh communicator on `wire` (null: the default
// choice), each running `body` with its rank and communicator, which it destroys afterwards.
void twoRanks(const char* wire, const std::function<void(int rank, szComm_t comm)>& body) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = wire;
      cfg.timeoutMs = 20000;
      szComm_t comm = nullptr;
      ASSERT_EQ(szCommInitRankConfig(&comm, 2, id, rank, &cfg), szSuccess) << szGetLastError(nullptr);
      body(rank, comm);
      EXPECT_EQ(szCommDestroy(comm), szSuccess);
    });
  for (std::thread& t : ranks) t.join();
}

// An operation with a peer captured into a CUDA graph that is destroyed unreplayed takes no
// channel steps (the kernels take them as they run: docs/PIPELINE.md, "CUDA graphs"): the same
// pair of ranks then exchanges outside the graph as if it never was. The capture comes at the
// pair's first operation, so it also connects the pair.
TEST(CommCaptureGpu, AGraphNeverReplayedTakesNoSteps) {
  SKIP_WITHOUT_GPU();
  twoRanks(nullptr, [](int rank, szComm_t comm) {
    cudaStream_t s;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const size_t count = 1 << 20;
    void* buf = nullptr;
    CUDA_ASSERT(cudaMalloc(&buf, count * 2));
    std::vector<uint16_t> host(count), got(count, 0);
    for (size_t i = 0; i < count; ++i) host[i] = uint16_t(0x3C00 + i % 509);
    CUDA_ASSERT(cudaMemcpy(buf, host.data(), count * 2, cudaMemcpyHostToDevice));
    CUDA_ASSERT(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    const szResult_t captured = rank == 0 ? szSend(buf, count, szBfloat16, 1, comm, s)
                                          : szRecv(buf, count, szBfloat16, 0, comm, s);
    cudaGraph_t graph = nullptr;
    CUDA_ASSERT(cudaStreamEndCapture(s, &graph));
    EXPECT_NE(graph, nullptr);
    if (graph) cudaGraphDestroy(graph);
    EXPECT_EQ(captured, szSuccess) << szGetLastError(comm);
    szResult_t async = szSuccess;
    EXPECT_EQ(szCommGetAsyncError(comm, &async), szSuccess);
    EXPECT_EQ(async, szSuccess);
    if (rank == 1) {
      CUDA_ASSERT(cudaMemset(buf, 0, count * 2));
    }
    const szResult_t moved = rank == 0 ? szSend(buf, count, szBfloat16, 1, comm, s)
                                       : szRecv(buf, count, szBfloat16, 0, comm, s);
    EXPECT_EQ(moved, szSuccess) << szGetLastError(comm);
    CUDA_ASSERT(cudaStreamSynchronize(s));
    if (rank == 1) {
      CUDA_ASSERT(cudaMemcpy(got.data(), buf, count * 2, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, host);
    }
    cudaFree(buf);
    cudaStreamDestroy(s);
  });
}

// SZ_AUTH_DATA / SZ_ENCRYPT cover device buffers on the tcp wire: the slot proxy seals each slot
// the kernels fill in pinned memory as it ships it and opens it as it lands (slot_proxy.h). Two
// ranks on tcp exchange 4 MiB of KV-like BF16 from device memory, as frames, bit-exact; host
// buffers still travel; a send to self is a copy. (nccl, whose slots leave from device memory, is
// refused at the call: it needs two GPUs to test.)
class CommSealGpu : public ::testing::TestWithParam<const char*> {};

TEST_P(CommSealGpu, DeviceBuffersOnTcpTravelSealed) {
  SKIP_WITHOUT_GPU();
  setenv(GetParam(), "1", 1);
  setenv("SZ_CODEC", "on", 1);  // frames (auto could choose raw on one GPU's loopback)
  const size_t count = 2 << 20;
  std::vector<uint16_t> want(count);
  for (size_t i = 0; i < count; ++i) want[i] = uint16_t((i & 1) << 15 | (120 + i % 11) << 7 | (i * 37 % 128));
  twoRanks("tcp", [&](int rank, szComm_t comm) {
    cudaStream_t s;
    CUDA_ASSERT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *dev = nullptr, *self = nullptr;
    CUDA_ASSERT(cudaMalloc(&dev, count * 2));
    CUDA_ASSERT(cudaMalloc(&self, count * 2));
    CUDA_ASSERT(cudaMemcpyAsync(dev, rank == 0 ? want.data() : std::vector<uint16_t>(count, 0).data(), count * 2,
                                cudaMemcpyHostToDevice, s));
    CUDA_ASSERT(cudaStreamSynchronize(s));
    const szResult_t moved = rank == 0 ? szSend(dev, count, szBfloat16, 1, comm, s)
                                       : szRecv(dev, count, szBfloat16, 0, comm, s);
    EXPECT_EQ(moved, szSuccess) << szGetLastError(comm);
    CUDA_ASSERT(cudaStreamSynchronize(s));
    szResult_t async = szSuccess;
    EXPECT_EQ(szCommGetAsyncError(comm, &async), szSuccess);
    EXPECT_EQ(async, szSuccess) << szGetLastError(comm);
    if (rank == 1) {
      std::vector<uint16_t> got(count);
      CUDA_ASSERT(cudaMemcpy(got.data(), dev, count * 2, cudaMemcpyDeviceToHost));
      EXPECT_TRUE(got == want) << "device buffers over tcp, sealed by the proxy: bits differ";
    }
    std::vector<uint16_t> host(1000, uint16_t(0x3F80 + rank)), back(1000, 0);
    const szResult_t hosted = rank == 0 ? szSend(host.data(), host.size(), szBfloat16, 1, comm, nullptr)
                                        : szRecv(back.data(), back.size(), szBfloat16, 0, comm, nullptr);
    EXPECT_EQ(hosted, szSuccess) << szGetLastError(comm);
    if (rank == 1) {
      EXPECT_EQ(back, std::vector<uint16_t>(1000, 0x3F80));
    }
    ASSERT_EQ(szGroupStart(), szSuccess);
    EXPECT_EQ(szSend(dev, 1024, szBfloat16, rank, comm, s), szSuccess) << szGetLastError(comm);
    EXPECT_EQ(szRecv(self, 1024, szBfloat16, rank, comm, s), szSuccess) << szGetLastError(comm);
    EXPECT_EQ(szGroupEnd(), szSuccess) << "a send to self is a copy: " << szGetLastError(comm);
    CUDA_ASSERT(cudaStreamSynchronize(s));
    cudaFree(dev);
    cudaFree(self);
    cudaStreamDestroy(s);
  });
  unsetenv(GetParam());
  unsetenv("SZ_CODEC");
}

INSTANTIATE_TEST_SUITE_P(AuthAndEncrypt, CommSealGpu, ::testing::Values("SZ_AUTH_DATA", "SZ_ENCRYPT"));

}  // namespace
