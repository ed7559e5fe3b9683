// The slot protocol on the ipc wire (two ranks as threads of one process, on one GPU where there
// is one): one-way transfers of every compressible type are bit-exact; a count mismatch fails both
// sides with szInvalidUsage, a peer that never posts its receive ends the sender in szTimeout (no
// hang), and both sides' streams complete either way. Run on the GPU machines; skipped elsewhere.
#include <atomic>
#include <cstdio>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "tests/gpu/typed_data.h"

namespace {

int deviceCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

// Runs `body(rank, comm, stream)` on two ranks of an ipc communicator with `timeoutMs`, then
// waits for both streams (at most 30 s each) and returns each rank's asynchronous error.
void twoRanks(int timeoutMs, const std::function<void(int, szComm_t, cudaStream_t)>& body, szResult_t async[2],
              bool drained[2]) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  std::atomic<int> arrived{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      cudaSetDevice(r % deviceCount());
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "ipc";
      cfg.codec = SZ_CODEC_ON;
      cfg.timeoutMs = timeoutMs;
      szComm_t comm = nullptr;
      async[r] = szCommInitRankConfig(&comm, 2, id, r, &cfg);
      EXPECT_EQ(async[r], szSuccess) << "init of rank " << r << ": " << szGetLastError(nullptr);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      if (async[r] == szSuccess) body(r, comm, s);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (cudaStreamQuery(s) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      drained[r] = cudaStreamQuery(s) == cudaSuccess;
      if (comm && async[r] == szSuccess) szCommGetAsyncError(comm, &async[r]);
      if (comm && async[r] != szSuccess) printf("rank %d: %s\n", r, szGetLastError(comm));
      arrived.fetch_add(1);  // with one GPU, freeing waits for the other rank's kernels
      while (arrived.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      cudaStreamDestroy(s);
      if (comm) szCommDestroy(comm);
    });
  for (auto& t : ranks) t.join();
}

TEST(SlotIpc, CountMismatchFailsBothSides) {
  SKIP_WITHOUT_GPU();
  sztest::DeviceBuffer buf(8 << 20);
  ASSERT_NE(buf.base, nullptr);
  szResult_t async[2];
  bool drained[2];
  twoRanks(20000, [&](int r, szComm_t comm, cudaStream_t s) {
    const size_t count = (3 << 20) + 5;
    if (r == 0) {
      EXPECT_EQ(szSend(buf.ptr(), count, szBfloat16, 1, comm, s), szSuccess);
    } else {
      EXPECT_EQ(szRecv(buf.ptr(), count + 1, szBfloat16, 0, comm, s), szSuccess);
    }
  }, async, drained);
  EXPECT_TRUE(drained[0] && drained[1]);
  EXPECT_EQ(async[0], szInvalidUsage) << szGetErrorString(async[0]);
  EXPECT_EQ(async[1], szInvalidUsage) << szGetErrorString(async[1]);
}

TEST(SlotIpc, TypeMismatchFailsBothSides) {
  SKIP_WITHOUT_GPU();
  sztest::DeviceBuffer buf(1 << 20);
  ASSERT_NE(buf.base, nullptr);
  szResult_t async[2];
  bool drained[2];
  twoRanks(20000, [&](int r, szComm_t comm, cudaStream_t s) {
    if (r == 0) {
      EXPECT_EQ(szSend(buf.ptr(), 4096, szBfloat16, 1, comm, s), szSuccess);
    } else {
      EXPECT_EQ(szRecv(buf.ptr(), 4096, szFloat16, 0, comm, s), szSuccess);
    }
  }, async, drained);
  EXPECT_TRUE(drained[0] && drained[1]);
  EXPECT_EQ(async[0], szInvalidUsage);
  EXPECT_EQ(async[1], szInvalidUsage);
}

// Rank 1 never posts. With the pair connected at its first operations (the default), rank 0's
// send waits at the call for rank 1's side of the connection and fails with szTimeout within the
// timeout. With SZ_RUNTIME_CONNECT=0 (connected at init) the send is enqueued, its message is
// larger than its slots, it waits for credits that never come and ends in szTimeout, its stream
// completed. Either way the communicator reports szTimeout.
TEST(SlotIpc, PeerThatNeverReceivesTimesOut) {
  SKIP_WITHOUT_GPU();
  const size_t bytes = size_t(256) << 20;
  sztest::DeviceBuffer buf(bytes);
  ASSERT_NE(buf.base, nullptr);
  for (const char* runtime : {"1", "0"}) {
    SCOPED_TRACE(std::string("SZ_RUNTIME_CONNECT=") + runtime);
    setenv("SZ_RUNTIME_CONNECT", runtime, 1);
    szResult_t async[2];
    bool drained[2];
    auto t0 = std::chrono::steady_clock::now();
    twoRanks(1500, [&](int r, szComm_t comm, cudaStream_t s) {
      if (r == 0) {
        EXPECT_EQ(szSend(buf.ptr(), bytes / 2, szBfloat16, 1, comm, s), runtime[0] == '1' ? szTimeout : szSuccess);
      }
    }, async, drained);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(drained[0] && drained[1]);
    EXPECT_EQ(async[0], szTimeout) << szGetErrorString(async[0]);
    EXPECT_EQ(async[1], szSuccess);
    EXPECT_LT(seconds, 20.0);
  }
  unsetenv("SZ_RUNTIME_CONNECT");
}

// Receives of several messages in one group on one stream, the peer's sends each alone: the
// channel steps match in call order.
TEST(SlotIpc, ManyMessagesMatchInOrder) {
  SKIP_WITHOUT_GPU();
  const int n = 8;
  const size_t count = 300000;
  std::vector<uint16_t> host(count * n);
  for (size_t i = 0; i < host.size(); ++i) host[i] = uint16_t(0x3F80 + (i * 2654435761u >> 7) % 97 + (i % n) * 3);
  sztest::DeviceBuffer src(host.size() * 2), dst(host.size() * 2);
  ASSERT_NE(src.base, nullptr);
  ASSERT_NE(dst.base, nullptr);
  CUDA_ASSERT(cudaMemcpy(src.ptr(), host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  CUDA_ASSERT(cudaDeviceSynchronize());  // a pageable cudaMemcpy may return before its DMA lands
  szResult_t async[2];
  bool drained[2];
  twoRanks(20000, [&](int r, szComm_t comm, cudaStream_t s) {
    if (r == 0) {
      for (int k = 0; k < n; ++k) EXPECT_EQ(szSend(src.ptr() + k * count * 2, count, szBfloat16, 1, comm, s), szSuccess);
    } else {
      szGroupStart();
      for (int k = 0; k < n; ++k) szRecv(dst.ptr() + k * count * 2, count, szBfloat16, 0, comm, s);
      EXPECT_EQ(szGroupEnd(), szSuccess);
    }
  }, async, drained);
  EXPECT_TRUE(drained[0] && drained[1]);
  EXPECT_EQ(async[0], szSuccess);
  EXPECT_EQ(async[1], szSuccess);
  auto got = dst.download(host.size() * 2);
  EXPECT_EQ(memcmp(got.data(), host.data(), got.size()), 0);
  EXPECT_TRUE(dst.guardIntact(host.size() * 2));
}

// One way, as a prefill worker sends and a decode worker receives: rank 0's launches hold sends
// only and rank 1's receives only, so each takes its direction's kernel of the type
// (kernels/slot_send_kernels.cu, slot_recv_kernels.cu). Every compressible type, from 16-byte
// aligned buffers and from buffers one element off, with NaN payloads, -0, Inf and denormals in
// the data: the receiver's bytes are the sender's, and nothing past the buffer is written.
TEST(SlotIpc, OneWayEveryTypeIsBitExact) {
  SKIP_WITHOUT_GPU();
  const size_t count = (1 << 20) + 333;  // several slices and a ragged last one
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2}) {
    for (size_t misalign : {size_t(0), szTypeSize(type)}) {
      SCOPED_TRACE("type " + std::to_string(int(type)) + (misalign ? ", misaligned" : ", aligned"));
      const size_t bytes = count * szTypeSize(type);
      const auto host = sztest::typedData(type, count, 70 + uint32_t(type));
      sztest::DeviceBuffer src(bytes, misalign), dst(bytes, misalign);
      ASSERT_NE(src.base, nullptr);
      ASSERT_NE(dst.base, nullptr);
      CUDA_ASSERT(cudaMemcpy(src.ptr(), host.data(), bytes, cudaMemcpyHostToDevice));
      CUDA_ASSERT(cudaDeviceSynchronize());
      szResult_t async[2];
      bool drained[2];
      twoRanks(20000, [&](int r, szComm_t comm, cudaStream_t s) {
        if (r == 0) EXPECT_EQ(szSend(src.ptr(), count, type, 1, comm, s), szSuccess);
        else EXPECT_EQ(szRecv(dst.ptr(), count, type, 0, comm, s), szSuccess);
      }, async, drained);
      EXPECT_TRUE(drained[0] && drained[1]);
      EXPECT_EQ(async[0], szSuccess) << szGetErrorString(async[0]);
      EXPECT_EQ(async[1], szSuccess) << szGetErrorString(async[1]);
      auto got = dst.download(bytes);
      EXPECT_EQ(memcmp(got.data(), host.data(), bytes), 0);
      EXPECT_TRUE(dst.guardIntact(bytes));
    }
  }
}

}  // namespace
