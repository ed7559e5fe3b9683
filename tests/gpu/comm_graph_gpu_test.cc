// szSend/szRecv captured into CUDA graphs (docs/PIPELINE.md, "CUDA graphs"): two ranks as
// threads of one process, each capturing its send and its receive into one graph on its own
// stream and replaying it, with the send buffer's contents changed between replays; operations
// outside the graph on the same channels in between; the refusals that leave the communicator
// usable. Checked bit for bit, and the replays counted in the stats. Also a watchdog thread that
// polls szCommGetAsyncError while its rank's thread runs groups (PyTorch's, beside its launches).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../kv_like.h"
#include "gpu_test_util.h"
#include "thread_barrier.h"

namespace {

struct GraphCase {
  const char* wire;
  szDataType_t type;
  size_t count;
  int replays;
};

// Replay r's data from rank `rank`: KV-like BF16 bits for 2-byte types, seeded bytes otherwise,
// different for every (rank, replay).
std::vector<uint8_t> payload(szDataType_t type, size_t bytes, int rank, int replay) {
  std::vector<uint8_t> out(bytes);
  if (type == szBfloat16) {  // 2^20 KV-like values, shifted and with other low mantissa bits per (rank, replay)
    static const std::vector<uint16_t> kv = sztest::kvLikeBf16(size_t(1) << 20, 7, 0.5f);
    const size_t mask = kv.size() - 1, shift = size_t(7919) * size_t(rank) + size_t(104729) * size_t(replay);
    const uint16_t flip = uint16_t((replay & 1) ? 0x8000 : 0);
    uint16_t* v = reinterpret_cast<uint16_t*>(out.data());
    for (size_t i = 0; i < bytes / 2; ++i)
      v[i] = uint16_t(kv[(i + shift) & mask] ^ flip ^ (((i >> 20) + size_t(rank) + 3 * size_t(replay)) & 0x7F));
  } else {
    uint32_t s = uint32_t(1000 * rank + replay + 1);
    for (size_t i = 0; i < bytes; ++i) {
      s = s * 1664525u + 1013904223u;
      out[i] = uint8_t(s >> 24);
    }
    if (type == szFloat32)  // FP32 with concentrated exponents: an exponent byte of 0x3E/0x3F
      for (size_t i = 3; i < bytes; i += 4) out[i] = uint8_t(0x3E | (out[i] & 1) | (out[i] & 0x80));
    // FP16 and E4M3 with four exponents (13-16 and 5-8: 3-bit codes), an element in 128 left as
    // drawn, by a draw of its own (escapes, Inf and NaN among them).
    const size_t esize = type == szFloat16 ? 2 : 1;
    if (type == szFloat16 || type == szFloat8e4m3)
      for (size_t i = esize - 1; i < bytes; i += esize) {
        s = s * 1664525u + 1013904223u;
        if ((s >> 25) == 0) continue;  // drawn
        out[i] = type == szFloat16 ? uint8_t((out[i] & 0x83) | ((13 + ((out[i] >> 2) & 3)) << 2))
                                   : uint8_t((out[i] & 0x87) | ((5 + ((out[i] >> 3) & 3)) << 3));
      }
  }
  return out;
}

szResult_t exchange(szComm_t comm, void* send, void* recv, size_t count, szDataType_t type, int peer, cudaStream_t s) {
  szGroupStart();
  szSend(send, count, type, peer, comm, s);
  szRecv(recv, count, type, peer, comm, s);
  return szGroupEnd();
}

// Two ranks as threads on the one GPU over `wire` with `codec`, each running `body` with its
// rank and communicator; what `body` returns runs once both ranks have left `body` (with one GPU,
// a cudaFree waits for the other rank's stream), then the communicator is finalized (where
// init[r] is still szSuccess: the rank's result) and destroyed. init[r]: the rank's init result.
using RankBody = std::function<std::function<void()>(int rank, szComm_t comm)>;
void twoRanks(const char* wire, int codec, szResult_t init[2], const RankBody& body) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  sztest::Barrier barrier(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(0);
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = wire;
      cfg.codec = codec;
      szComm_t comm = nullptr;
      init[r] = szCommInitRankConfig(&comm, 2, id, r, &cfg);
      std::function<void()> cleanup;
      if (init[r] == szSuccess) cleanup = body(r, comm);
      barrier.wait();
      if (cleanup) cleanup();
      if (comm && init[r] == szSuccess) init[r] = szCommFinalize(comm);
      if (comm) szCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
}

// Each rank: one exchange outside a graph, then a graph of one exchange replayed c.replays
// times with new data before each, an exchange outside the graph halfway; the received bytes are
// compared after each. wrong[r]: mismatched bytes; res[r]: the first failure.
void replayed(const GraphCase& c, size_t wrong[2], szResult_t res[2], uint64_t rawBytes[2], uint64_t wireBytes[2]) {
  const size_t bytes = c.count * szTypeSize(c.type);
  // Each rank's data per replay, made before the ranks start: two alternating versions above
  // 64 MiB (the 1 GiB case would spend most of its time making data), else one per replay.
  const int versions = bytes > (size_t(64) << 20) ? 2 : c.replays + 1;
  std::vector<std::vector<uint8_t>> data[2];
  for (int r = 0; r < 2; ++r)
    for (int v = 0; v < versions; ++v) data[r].push_back(payload(c.type, bytes, r, v));
  szResult_t init[2] = {szInternalError, szInternalError};
  twoRanks(c.wire, SZ_CODEC_ON, init, [&](int r, szComm_t comm) -> std::function<void()> {
    res[r] = szSuccess;
    uint8_t *send = nullptr, *recv = nullptr;
    cudaMalloc(&send, bytes + 1);
    cudaMalloc(&recv, bytes + 1);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const int peer = 1 - r;
    auto check = [&](int replay) {  // the peer's data of `replay` arrived, and nothing past it
      if (cudaStreamSynchronize(s) != cudaSuccess && res[r] == szSuccess) res[r] = szUnhandledCudaError;
      szResult_t async = szSuccess;
      szCommGetAsyncError(comm, &async);  // reaps: a replay is counted before the next one runs
      if (res[r] == szSuccess) res[r] = async;
      std::vector<uint8_t> got(bytes + 1);
      const std::vector<uint8_t>& want = data[peer][size_t(replay % versions)];
      cudaMemcpy(got.data(), recv, bytes + 1, cudaMemcpyDeviceToHost);
      if (bytes && memcmp(got.data(), want.data(), bytes) != 0)
        for (size_t i = 0; i < bytes; ++i) wrong[r] += got[i] != want[i];
      wrong[r] += got[bytes] != 0xA5;
    };
    auto load = [&](int replay) {  // ordered on the stream before the next exchange
      cudaMemcpyAsync(send, data[r][size_t(replay % versions)].data(), bytes, cudaMemcpyHostToDevice, s);
      cudaMemsetAsync(recv, 0xA5, bytes + 1, s);
      cudaStreamSynchronize(s);
    };
    cudaGraphExec_t exec = nullptr;
    if (res[r] == szSuccess) {
      load(0);
      res[r] = exchange(comm, send, recv, c.count, c.type, peer, s);
      check(0);
    }
    if (res[r] == szSuccess) {
      cudaGraph_t graph = nullptr;
      cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
      szResult_t captured = exchange(comm, send, recv, c.count, c.type, peer, s);
      cudaError_t e = cudaStreamEndCapture(s, &graph);
      if (captured != szSuccess) fprintf(stderr, "rank %d: capture: %s\n", r, szGetLastError(comm));
      res[r] = captured != szSuccess ? captured : e != cudaSuccess ? szUnhandledCudaError : szSuccess;
      if (res[r] == szSuccess && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) res[r] = szUnhandledCudaError;
      if (graph) cudaGraphDestroy(graph);  // the instance holds what the launch needs
    }
    for (int i = 1; i <= c.replays && res[r] == szSuccess; ++i) {
      load(i);
      if (i == c.replays / 2 + 1) {  // outside the graph, on the same channels, between replays
        res[r] = exchange(comm, send, recv, c.count, c.type, peer, s);
      } else if (cudaGraphLaunch(exec, s) != cudaSuccess) {
        res[r] = szUnhandledCudaError;
      }
      check(i);
    }
    if (exec) cudaGraphExecDestroy(exec);
    szStats_t st;
    if (szCommGetStats(comm, &st) == szSuccess) {
      rawBytes[r] = st.rawBytes;
      wireBytes[r] = st.wireBytes;
    }
    if (res[r] != szSuccess) fprintf(stderr, "rank %d: %s\n", r, szGetLastError(comm));
    return [=] {
      cudaStreamDestroy(s);
      cudaFree(send);
      cudaFree(recv);
    };
  });
  for (int r = 0; r < 2; ++r)
    if (res[r] == szSuccess) res[r] = init[r];
}

class CommGraphGpu : public ::testing::TestWithParam<GraphCase> {};

TEST_P(CommGraphGpu, ReplaysAreBitExactAndCounted) {
  SKIP_WITHOUT_GPU();
  const GraphCase& c = GetParam();
  size_t wrong[2] = {0, 0};
  szResult_t res[2] = {szSuccess, szSuccess};
  uint64_t raw[2] = {0, 0}, wire[2] = {0, 0};
  replayed(c, wrong, res, raw, wire);
  EXPECT_EQ(res[0], szSuccess) << szGetErrorString(res[0]);
  EXPECT_EQ(res[1], szSuccess) << szGetErrorString(res[1]);
  EXPECT_EQ(wrong[0], 0u);
  EXPECT_EQ(wrong[1], 0u);
  // Every exchange counted once: the first, the replays and the one between them.
  const uint64_t bytes = c.count * szTypeSize(c.type);
  EXPECT_EQ(raw[0], bytes * uint64_t(c.replays + 1));
  EXPECT_EQ(raw[1], bytes * uint64_t(c.replays + 1));
  // FP16's and E4M3's data of four exponents travels compressed in the replays as outside them
  // (3-bit codes once calibrated: 14/16 and 7/8 of its bytes and the escapes, ~0.89 of raw; the
  // first exchange takes the built-in codebook, or goes raw), where slot headers do not dominate.
  if ((c.type == szFloat16 || c.type == szFloat8e4m3) && c.count >= 4096) {
    for (int r = 0; r < 2; ++r) EXPECT_LT(double(wire[r]), 0.95 * double(raw[r])) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Types, CommGraphGpu,
    ::testing::Values(GraphCase{"ipc", szBfloat16, (3 << 20) + 5, 6}, GraphCase{"ipc", szFloat32, (1 << 20) + 3, 4},
                      GraphCase{"ipc", szFloat8e5m2, (2 << 20) + 1, 4}, GraphCase{"ipc", szUint8, 4099, 4},
                      GraphCase{"ipc", szFloat16, 1, 4}, GraphCase{"ipc", szFloat16, (2 << 20) + 3, 4},
                      GraphCase{"ipc", szFloat8e4m3, (3 << 20) + 5, 4}, GraphCase{"ipc", szBfloat16, 0, 3},
                      GraphCase{"ipc", szBfloat16, size_t(512) << 20, 10},  // 1 GiB, ten replays
                      GraphCase{"tcp", szBfloat16, (1 << 20) + 7, 4}),
    [](const ::testing::TestParamInfo<GraphCase>& i) {
      return std::string(i.param.wire) + "_type" + std::to_string(int(i.param.type)) + "_n" +
             std::to_string(i.param.count);
    });

// After a refusal: an exchange of BF16 `count` elements with rank 1 - r (each sending its
// payload of version 0 from `send`) on `s`, waited for; *wrong: 1 if `recv` does not hold the
// peer's payload. Returns the exchange's result, or the communicator's asynchronous error.
szResult_t exchangeAfter(szComm_t comm, uint8_t* send, uint8_t* recv, size_t count, int r, cudaStream_t s,
                         size_t* wrong) {
  const size_t bytes = count * 2;
  szResult_t res = exchange(comm, send, recv, count, szBfloat16, 1 - r, s);
  cudaStreamSynchronize(s);
  szResult_t async = szSuccess;
  szCommGetAsyncError(comm, &async);
  if (res == szSuccess) res = async;
  std::vector<uint8_t> got(bytes), want = payload(szBfloat16, bytes, 1 - r, 0);
  cudaMemcpy(got.data(), recv, bytes, cudaMemcpyDeviceToHost);
  *wrong = got == want ? 0 : 1;
  return res;
}

// Each rank: init succeeded, the group was refused (szInvalidUsage), and the exchange after it
// succeeded with the peer's data.
void expectRefusedThenUsable(const szResult_t init[2], const szResult_t refused[2], const szResult_t after[2],
                             const size_t wrong[2]) {
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(init[r], szSuccess) << "rank " << r;
    EXPECT_EQ(refused[r], szInvalidUsage) << "rank " << r;
    EXPECT_EQ(after[r], szSuccess) << "rank " << r << ": " << szGetErrorString(after[r]);
    EXPECT_EQ(wrong[r], 0u) << "rank " << r;
  }
}

// A group mixing a captured stream with another is refused before anything is planned; the
// communicator then exchanges as before.
TEST(CommGraphGpuRefusal, MixedCaptureIsRefusedAndTheCommunicatorStaysUsable) {
  SKIP_WITHOUT_GPU();
  const size_t count = (1 << 20) + 1, bytes = count * 2;
  szResult_t init[2] = {szInternalError, szInternalError}, refused[2] = {szSuccess, szSuccess};
  szResult_t after[2] = {szInternalError, szInternalError};
  size_t wrong[2] = {0, 0};
  twoRanks("ipc", SZ_CODEC_AUTO, init, [&](int r, szComm_t comm) -> std::function<void()> {
    uint8_t *send = nullptr, *recv = nullptr;
    cudaMalloc(&send, bytes);
    cudaMalloc(&recv, bytes);
    cudaStream_t s, other;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
    std::vector<uint8_t> data = payload(szBfloat16, bytes, r, 0);
    cudaMemcpy(send, data.data(), bytes, cudaMemcpyHostToDevice);
    cudaGraph_t graph = nullptr;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    szGroupStart();
    szSend(send, count, szBfloat16, 1 - r, comm, s);
    szRecv(recv, count, szBfloat16, 1 - r, comm, other);  // not in the capture
    refused[r] = szGroupEnd();
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    after[r] = exchangeAfter(comm, send, recv, count, r, s, &wrong[r]);
    return [=] {
      cudaStreamDestroy(s);
      cudaStreamDestroy(other);
      cudaFree(send);
      cudaFree(recv);
    };
  });
  expectRefusedThenUsable(init, refused, after, wrong);
}

// A group of more than 32 device operations with other ranks (one launch holds 32) is refused at
// szGroupEnd before anything runs; the communicator then exchanges as before.
TEST(CommGraphGpuRefusal, AGroupOfMoreThan32DeviceOperationsIsRefusedAndTheCommunicatorStaysUsable) {
  SKIP_WITHOUT_GPU();
  const size_t count = 2048, bytes = count * 2;
  constexpr int kOps = 33;  // 17 sends and 16 receives
  szResult_t init[2] = {szInternalError, szInternalError}, refused[2] = {szSuccess, szSuccess};
  szResult_t after[2] = {szInternalError, szInternalError};
  size_t wrong[2] = {0, 0};
  twoRanks("ipc", SZ_CODEC_AUTO, init, [&](int r, szComm_t comm) -> std::function<void()> {
    uint8_t* bufs = nullptr;
    cudaMalloc(&bufs, bytes * kOps);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    std::vector<uint8_t> data = payload(szBfloat16, bytes, r, 0);
    cudaMemcpy(bufs, data.data(), bytes, cudaMemcpyHostToDevice);
    szGroupStart();
    for (int k = 0; k < kOps; ++k) {
      if (k % 2 == 0) szSend(bufs + bytes * size_t(k), count, szBfloat16, 1 - r, comm, s);
      else szRecv(bufs + bytes * size_t(k), count, szBfloat16, 1 - r, comm, s);
    }
    refused[r] = szGroupEnd();
    after[r] = exchangeAfter(comm, bufs, bufs + bytes, count, r, s, &wrong[r]);
    return [=] {
      cudaStreamDestroy(s);
      cudaFree(bufs);
    };
  });
  expectRefusedThenUsable(init, refused, after, wrong);
}

// Operations of one group on two streams take their channel steps in call order (the streams
// join one launch), whatever order their streams' handles have: two sends of one size to one
// peer, on streams given the other way round on the receiving side.
TEST(CommGraphGpuStreams, OperationsOnTwoStreamsMatchInCallOrder) {
  SKIP_WITHOUT_GPU();
  const size_t count = (2 << 20) + 3, bytes = count * 2;
  szResult_t init[2] = {szInternalError, szInternalError}, res[2] = {szInternalError, szInternalError};
  size_t wrong = 0;
  twoRanks("ipc", SZ_CODEC_ON, init, [&](int r, szComm_t comm) -> std::function<void()> {
    uint8_t* buf[2] = {nullptr, nullptr};
    cudaMalloc(&buf[0], bytes);
    cudaMalloc(&buf[1], bytes);
    cudaStream_t st[2];
    cudaStreamCreateWithFlags(&st[0], cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking);
    if (st[1] < st[0]) std::swap(st[0], st[1]);  // st[0] has the lower handle
    std::vector<uint8_t> a = payload(szBfloat16, bytes, 0, 1), b = payload(szBfloat16, bytes, 0, 2);
    if (r == 0) {
      cudaMemcpy(buf[0], a.data(), bytes, cudaMemcpyHostToDevice);
      cudaMemcpy(buf[1], b.data(), bytes, cudaMemcpyHostToDevice);
    }
    szGroupStart();
    if (r == 0) {  // a first on the higher handle, then b on the lower
      szSend(buf[0], count, szBfloat16, 1, comm, st[1]);
      szSend(buf[1], count, szBfloat16, 1, comm, st[0]);
    } else {  // a first on the lower handle, then b on the higher
      szRecv(buf[0], count, szBfloat16, 0, comm, st[0]);
      szRecv(buf[1], count, szBfloat16, 0, comm, st[1]);
    }
    szResult_t e = szGroupEnd();
    cudaStreamSynchronize(st[0]);
    cudaStreamSynchronize(st[1]);
    szResult_t async = szSuccess;
    szCommGetAsyncError(comm, &async);
    res[r] = e != szSuccess ? e : async;
    if (r == 1) {
      std::vector<uint8_t> got(bytes);
      cudaMemcpy(got.data(), buf[0], bytes, cudaMemcpyDeviceToHost);
      wrong += got != a;
      cudaMemcpy(got.data(), buf[1], bytes, cudaMemcpyDeviceToHost);
      wrong += got != b;
    }
    return [=] {
      cudaStreamDestroy(st[0]);
      cudaStreamDestroy(st[1]);
      cudaFree(buf[0]);
      cudaFree(buf[1]);
    };
  });
  EXPECT_EQ(init[0], szSuccess);
  EXPECT_EQ(init[1], szSuccess);
  EXPECT_EQ(res[0], szSuccess) << szGetErrorString(res[0]);
  EXPECT_EQ(res[1], szSuccess) << szGetErrorString(res[1]);
  EXPECT_EQ(wrong, 0u);
}

// A watchdog thread per rank polls szCommGetAsyncError (which reaps the slot path) while the
// rank's own thread runs 2000 exchanges of 4 KiB and 64 of 4 MiB: the two threads share the
// communicator's launches in flight (comm.h: slotMu). Every exchange arrives bit-exact and
// nothing fails.
TEST(CommWatchdogGpu, AsyncErrorPolledFromAnotherThreadBesideGroups) {
  SKIP_WITHOUT_GPU();
  szResult_t init[2] = {szInternalError, szInternalError}, res[2] = {szInternalError, szInternalError};
  size_t wrong[2] = {0, 0};
  twoRanks("ipc", SZ_CODEC_ON, init, [&](int r, szComm_t comm) -> std::function<void()> {
    const size_t big = size_t(2) << 20, bytes = big * 2;
    uint8_t *send = nullptr, *recv = nullptr;
    cudaMalloc(&send, bytes);
    cudaMalloc(&recv, bytes);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    const std::vector<uint8_t> mine = payload(szBfloat16, bytes, r, 0), theirs = payload(szBfloat16, bytes, 1 - r, 0);
    cudaMemcpy(send, mine.data(), bytes, cudaMemcpyHostToDevice);
    std::atomic<bool> stop{false};
    std::atomic<int> polled{0}, asyncFailed{0};
    std::thread watchdog([&] {
      while (!stop.load()) {
        szResult_t a = szSuccess;
        if (szCommGetAsyncError(comm, &a) != szSuccess || a != szSuccess) asyncFailed.fetch_add(1);
        polled.fetch_add(1);
      }
    });
    szResult_t first = szSuccess;
    for (int i = 0; i < 2064 && first == szSuccess; ++i) {
      const size_t count = i % 32 == 31 ? big : 2048;
      first = exchange(comm, send, recv, count, szBfloat16, 1 - r, s);
      if (i % 256 == 255 || count == big) {
        cudaStreamSynchronize(s);
        std::vector<uint8_t> got(count * 2);
        cudaMemcpy(got.data(), recv, got.size(), cudaMemcpyDeviceToHost);
        wrong[r] += memcmp(got.data(), theirs.data(), got.size()) != 0;
      }
    }
    cudaStreamSynchronize(s);
    stop = true;
    watchdog.join();
    szResult_t async = szSuccess;
    szCommGetAsyncError(comm, &async);
    res[r] = first != szSuccess ? first : asyncFailed.load() ? szInternalError : async;
    EXPECT_GT(polled.load(), 0);
    return [=] {
      cudaStreamDestroy(s);
      cudaFree(send);
      cudaFree(recv);
    };
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(init[r], szSuccess);
    EXPECT_EQ(res[r], szSuccess) << "rank " << r << ": " << szGetErrorString(res[r]);
    EXPECT_EQ(wrong[r], 0u) << "rank " << r;
  }
}

}  // namespace
