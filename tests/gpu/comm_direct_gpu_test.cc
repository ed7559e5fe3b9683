// Direct reads (docs/PIPELINE.md, "Slot protocol"): two ranks as threads of one process on one
// GPU over the ipc wire, where a raw slice of a one-buffer send stays in the sender's buffer and
// the receiver copies it from there. Checked bit for bit with guard bytes around every piece:
// sources and destinations at odd byte offsets, a one-buffer send into a buffer list, a buffer
// list into one buffer (which keeps the slot), and the stats of a direct exchange.
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "thread_barrier.h"
#include "kernels/slot_format.h"

namespace {

struct Shape {
  size_t bytes;
  size_t sendOffset, recvOffset;  // bytes past a 256-byte aligned allocation
  int sendPieces, recvPieces;     // > 1: szSendv / szRecvv with this many pieces
};

// Each rank sends rank-specific bytes to the other with `shape`; returns the wrong bytes (guard
// bytes included) and each rank's result, and the wire bytes each rank's stats counted (sent and
// received).
void exchangeBytes(const Shape& shape, size_t* wrong, szResult_t res[2], uint64_t wireBytes[2],
                   uint64_t recvWireBytes[2]) {
  szUniqueId id;
  ASSERT_EQ(szGetUniqueId(&id), szSuccess);
  const size_t guard = 64, total = shape.bytes + std::max(shape.sendOffset, shape.recvOffset) + 2 * guard;
  std::vector<size_t> bad(2, 0);
  sztest::Barrier barrier(2);
  auto pieces = [](size_t bytes, int n) {  // uneven piece sizes that sum to bytes
    std::vector<size_t> p;
    size_t left = bytes;
    for (int i = 0; i < n; ++i) {
      size_t k = i + 1 == n ? left : std::min(left, bytes / size_t(n) + size_t(i) * 7 + 1);
      p.push_back(k);
      left -= k;
    }
    return p;
  };
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      cudaSetDevice(0);
      szConfig_t cfg = SZ_CONFIG_INITIALIZER;
      cfg.wire = "ipc";
      cfg.codec = SZ_CODEC_OFF;
      cfg.sliceBytes = 1 << 18;
      szComm_t comm = nullptr;
      res[r] = szCommInitRankConfig(&comm, 2, id, r, &cfg);
      std::vector<uint8_t> mine(total), fill(total, 0x5A);
      for (size_t i = 0; i < total; ++i) mine[i] = uint8_t(i * 131 + size_t(r) * 17 + (i >> 9));
      uint8_t *send = nullptr, *recv = nullptr;
      cudaMalloc(&send, total);
      cudaMalloc(&recv, total);
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      cudaMemcpyAsync(send, mine.data(), total, cudaMemcpyHostToDevice, s);
      cudaMemcpyAsync(recv, fill.data(), total, cudaMemcpyHostToDevice, s);
      cudaStreamSynchronize(s);
      barrier.wait();
      const int peer = 1 - r;
      uint8_t* src = send + guard + shape.sendOffset;
      uint8_t* dst = recv + guard + shape.recvOffset;
      if (res[r] == szSuccess) {
        szGroupStart();
        if (shape.sendPieces <= 1) {
          szSend(src, shape.bytes, szUint8, peer, comm, s);
        } else {
          std::vector<size_t> n = pieces(shape.bytes, shape.sendPieces);
          std::vector<const void*> p;
          for (size_t i = 0, at = 0; i < n.size(); at += n[i], ++i) p.push_back(src + at);
          szSendv(p.data(), n.data(), int(n.size()), szUint8, peer, comm, s);
        }
        if (shape.recvPieces <= 1) {
          szRecv(dst, shape.bytes, szUint8, peer, comm, s);
        } else {
          std::vector<size_t> n = pieces(shape.bytes, shape.recvPieces);
          std::vector<void*> p;
          for (size_t i = 0, at = 0; i < n.size(); at += n[i], ++i) p.push_back(dst + at);
          szRecvv(p.data(), n.data(), int(n.size()), szUint8, peer, comm, s);
        }
        res[r] = szGroupEnd();
      }
      if (cudaStreamSynchronize(s) != cudaSuccess && res[r] == szSuccess) res[r] = szUnhandledCudaError;
      szResult_t async = szSuccess;
      if (comm) szCommGetAsyncError(comm, &async);
      if (res[r] == szSuccess) res[r] = async;
      szStats_t st = SZ_STATS_INITIALIZER;
      if (comm) szCommGetStats(comm, &st);
      wireBytes[r] = st.wireBytes;
      recvWireBytes[r] = st.recvWireBytes;
      barrier.wait();  // the peer has read this rank's buffer before either frees (one GPU: cudaFree syncs)
      std::vector<uint8_t> got(total);
      cudaMemcpy(got.data(), recv, total, cudaMemcpyDeviceToHost);
      // The peer's bytes where they belong, the fill everywhere else.
      std::vector<uint8_t> theirs(total);
      for (size_t i = 0; i < total; ++i) theirs[i] = uint8_t(i * 131 + size_t(peer) * 17 + (i >> 9));
      const size_t from = guard + shape.recvOffset, srcAt = guard + shape.sendOffset;
      for (size_t i = 0; i < total; ++i) {
        const bool inside = i >= from && i < from + shape.bytes;
        bad[r] += got[i] != (inside ? theirs[srcAt + (i - from)] : uint8_t(0x5A));
      }
      barrier.wait();
      cudaStreamDestroy(s);
      cudaFree(send);
      cudaFree(recv);
      szCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
  *wrong = bad[0] + bad[1];
}

class CommDirectGpu : public ::testing::TestWithParam<Shape> {};

TEST_P(CommDirectGpu, RawBytesLandBitExact) {
  SKIP_WITHOUT_GPU();
  const Shape& shape = GetParam();
  size_t wrong = 1;
  szResult_t res[2] = {szInternalError, szInternalError};
  uint64_t wire[2] = {0, 0}, recvWire[2] = {0, 0};
  exchangeBytes(shape, &wrong, res, wire, recvWire);
  EXPECT_EQ(res[0], szSuccess) << szGetErrorString(res[0]);
  EXPECT_EQ(res[1], szSuccess) << szGetErrorString(res[1]);
  EXPECT_EQ(wrong, 0u);
  // Raw: a slice's wire bytes are its bytes (and a slot header each), whether they stayed in the
  // sender's buffer or went to a slot; both sides count alike.
  const uint64_t slices = sz::opSlices(shape.bytes, sz::opSliceBytes(shape.bytes, 1 << 18));
  const uint64_t expect = shape.bytes + slices * sz::kSlotHeaderBytes;
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(wire[r], expect) << "rank " << r;
    EXPECT_EQ(recvWire[r], expect) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CommDirectGpu,
    ::testing::Values(Shape{1, 0, 0, 1, 1}, Shape{4096, 0, 0, 1, 1}, Shape{(1 << 20) + 13, 1, 3, 1, 1},
                      Shape{(3 << 20) + 5, 0, 0, 1, 5}, Shape{(3 << 20) + 5, 7, 2, 1, 5},
                      Shape{(2 << 20) + 9, 3, 0, 4, 1}, Shape{(1 << 20) + 1, 5, 5, 3, 3}),
    [](const ::testing::TestParamInfo<Shape>& i) {
      const Shape& s = i.param;
      return "b" + std::to_string(s.bytes) + "_so" + std::to_string(s.sendOffset) + "_ro" + std::to_string(s.recvOffset) +
             "_sp" + std::to_string(s.sendPieces) + "_rp" + std::to_string(s.recvPieces);
    });

}  // namespace
