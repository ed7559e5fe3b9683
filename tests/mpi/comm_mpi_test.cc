// The communicator across processes: every test creates its own communicator over all MPI
// ranks (tcp wire, host buffers) and checks bit-exact delivery, group and ordering semantics,
// argument and mismatch errors, and the send counters. Run with mpirun -np 2 (or more: the
// ring test needs 3). Each test's verdict is agreed across ranks, so rank 0's report (and
// its GTEST_OUTPUT file) covers every rank; the other ranks print only their own failures.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "splitzip.h"

namespace {

int gRank = 0, gSize = 1;

// Shorter than the library default, so a test that leaves a peer waiting fails in seconds.
constexpr int kTimeoutMs = 20000;

// A communicator over all MPI ranks; destroyed (or aborted after an error) at scope exit.
class Comm {
 public:
  explicit Comm(int codec, int crc = 0, size_t sliceBytes = 0, int timeoutMs = kTimeoutMs) {
    szUniqueId id;
    memset(&id, 0, sizeof(id));
    szResult_t idRes = gRank == 0 ? szGetUniqueId(&id) : szSuccess;
    EXPECT_EQ(idRes, szSuccess) << szGetLastError(nullptr);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    szConfig_t cfg = SZ_CONFIG_INITIALIZER;
    cfg.wire = "tcp";
    cfg.codec = codec;
    cfg.crc = crc;
    cfg.sliceBytes = sliceBytes;
    cfg.timeoutMs = timeoutMs;
    szResult_t res = szCommInitRankConfig(&comm_, gSize, id, gRank, &cfg);
    EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  }
  ~Comm() {
    if (comm_ == nullptr) return;
    szResult_t err = szSuccess;
    szCommGetAsyncError(comm_, &err);
    if (err == szSuccess)
      EXPECT_EQ(szCommDestroy(comm_), szSuccess);
    else
      szCommAbort(comm_);
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  szComm_t get() const { return comm_; }
  void abort() {
    EXPECT_EQ(szCommAbort(comm_), szSuccess);
    comm_ = nullptr;
  }
  szComm_t release() {
    szComm_t c = comm_;
    comm_ = nullptr;
    return c;
  }

 private:
  szComm_t comm_ = nullptr;
};

uint16_t toBf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

// Data that depends on (type, count, sender), so a receiver that got another message, or
// another rank's, sees the difference. Floating types look like a KV cache (normal values,
// sigma 0.5) with special values sprinkled in: NaN, infinities, subnormals, -0 (escapes);
// E5M2 has a narrow exponent range with some random bytes. Other types are random bytes.
std::vector<uint8_t> makeData(szDataType_t type, size_t count, int sender) {
  const size_t es = szTypeSize(type);
  std::vector<uint8_t> out(count * es);
  std::mt19937_64 rng(uint64_t(type) * 1000003u + count * 7919u + uint64_t(sender));
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* p = &out[i * es];
    bool special = rng() % 97 == 0;
    if (type == szBfloat16) {
      static const uint16_t kSpecial[] = {0x7FC0, 0x7F80, 0xFF80, 0x0001, 0x8000, 0x7F7F};
      uint16_t v = special ? kSpecial[rng() % 6] : toBf16(normal(rng));
      memcpy(p, &v, 2);
    } else if (type == szFloat32) {
      static const uint32_t kSpecial[] = {0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001, 0x80000000};
      float f = normal(rng);
      uint32_t v;
      memcpy(&v, &f, 4);
      if (special) v = kSpecial[rng() % 5];
      memcpy(p, &v, 4);
    } else if (type == szFloat8e5m2) {
      uint64_t r = rng();
      *p = special ? uint8_t(r) : uint8_t((r & 0x80) | ((12 + (r >> 8) % 5) << 2) | ((r >> 16) & 3));
    } else {
      for (size_t b = 0; b < es; ++b) p[b] = uint8_t(rng());
    }
  }
  return out;
}

// Index of the first element that differs bitwise, or -1.
long firstDiff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, size_t es) {
  if (got.size() != want.size()) return 0;
  for (size_t i = 0; i < got.size(); i += es)
    if (memcmp(&got[i], &want[i], es) != 0) return long(i / es);
  return -1;
}

// Every test agrees with the other ranks on its verdict before the next one starts.
class CommTest : public ::testing::Test {
 protected:
  void TearDown() override {
    int mine = HasFailure() ? 1 : 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !mine) ADD_FAILURE() << "failed on another rank (its output says why)";
  }
  int next() const { return (gRank + 1) % gSize; }
  int prev() const { return (gRank - 1 + gSize) % gSize; }
};

// Sends `count` elements to the next rank and receives as many from the previous one, in one
// group, and checks them bitwise.
void ringExchange(szComm_t comm, szDataType_t type, size_t count) {
  const int next = (gRank + 1) % gSize, prev = (gRank - 1 + gSize) % gSize;
  std::vector<uint8_t> send = makeData(type, count, gRank), want = makeData(type, count, prev);
  std::vector<uint8_t> recv(want.size());
  for (size_t i = 0; i < recv.size(); ++i) recv[i] = uint8_t(~want[i]);  // unwritten = wrong
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(send.data(), count, type, next, comm, nullptr), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(szRecv(recv.data(), count, type, prev, comm, nullptr), szSuccess) << szGetLastError(nullptr);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(firstDiff(recv, want, szTypeSize(type)), -1);
}

const szDataType_t kTypes[] = {szBfloat16, szFloat32, szFloat8e5m2, szFloat16, szInt8,
                               szInt32,    szInt64,   szFloat64,    szUint8};

class RoundTrip : public CommTest, public ::testing::WithParamInterface<int> {};

TEST_P(RoundTrip, EveryTypeAndSize) {
  Comm comm(GetParam());
  ASSERT_NE(comm.get(), nullptr);
  for (szDataType_t type : kTypes) {
    const size_t es = szTypeSize(type);
    for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(1023), (size_t(1) << 20) / es + 3,
                         (size_t(9) << 20) / es}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(count) + " elements");
      ringExchange(comm.get(), type, count);
      if (HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codec, RoundTrip, ::testing::Values(SZ_CODEC_ON, SZ_CODEC_OFF, SZ_CODEC_AUTO),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SZ_CODEC_ON    ? "On"
                                              : p.param == SZ_CODEC_OFF ? "Off"
                                                                        : "Auto");
                         });

// Two sends and two receives to the same peer in one group: they match in order per direction.
TEST_F(CommTest, GroupSendRecvSamePeer) {
  Comm comm(SZ_CODEC_ON);
  ASSERT_NE(comm.get(), nullptr);
  const int peer = gRank ^ 1;
  if (peer >= gSize) return;  // the last of an odd number of ranks sits this one out
  const size_t counts[2] = {(size_t(3) << 20) + 5, 777};
  std::vector<uint8_t> out[2], want[2], recv[2];
  for (int i = 0; i < 2; ++i) {
    out[i] = makeData(szBfloat16, counts[i], gRank);
    want[i] = makeData(szBfloat16, counts[i], peer);
    recv[i].assign(want[i].size(), 0);
  }
  auto post = [&](bool send, int i) {
    if (send)
      EXPECT_EQ(szSend(out[i].data(), counts[i], szBfloat16, peer, comm.get(), nullptr), szSuccess);
    else
      EXPECT_EQ(szRecv(recv[i].data(), counts[i], szBfloat16, peer, comm.get(), nullptr), szSuccess);
  };
  ASSERT_EQ(szGroupStart(), szSuccess);
  if (gRank < peer) {  // the two ranks post in different orders: only the order per direction counts
    post(false, 0), post(true, 0), post(false, 1), post(true, 1);
  } else {
    post(true, 0), post(true, 1), post(false, 0), post(false, 1);
  }
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(firstDiff(recv[i], want[i], 2), -1) << "message " << i;
}

// Both ring directions at once over 3 or more ranks.
TEST_F(CommTest, RingBothDirections) {
  if (gSize < 3) GTEST_SKIP() << "needs 3 or more ranks (mpirun -np 3)";
  Comm comm(SZ_CODEC_AUTO);
  ASSERT_NE(comm.get(), nullptr);
  const size_t count = (size_t(5) << 20) + 1;
  std::vector<uint8_t> send = makeData(szBfloat16, count, gRank);
  std::vector<uint8_t> fromPrev(send.size()), fromNext(send.size());
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(send.data(), count, szBfloat16, next(), comm.get(), nullptr), szSuccess);
  EXPECT_EQ(szSend(send.data(), count, szBfloat16, prev(), comm.get(), nullptr), szSuccess);
  EXPECT_EQ(szRecv(fromPrev.data(), count, szBfloat16, prev(), comm.get(), nullptr), szSuccess);
  EXPECT_EQ(szRecv(fromNext.data(), count, szBfloat16, next(), comm.get(), nullptr), szSuccess);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(firstDiff(fromPrev, makeData(szBfloat16, count, prev()), 2), -1);
  EXPECT_EQ(firstDiff(fromNext, makeData(szBfloat16, count, next()), 2), -1);
}

// Three communicators over the same ranks, used in one group and in opposite orders: each
// matches its own messages.
TEST_F(CommTest, SeveralCommunicators) {
  Comm a(SZ_CODEC_ON), b(SZ_CODEC_OFF), c(SZ_CODEC_AUTO, 1);
  ASSERT_TRUE(a.get() && b.get() && c.get());
  const size_t count = (size_t(2) << 20) + 9;
  szComm_t comms[3] = {a.get(), b.get(), c.get()};
  std::vector<uint8_t> send[3], recv[3];
  for (int i = 0; i < 3; ++i) {
    send[i] = makeData(szBfloat16, count + size_t(i), gRank);
    recv[i].assign(send[i].size(), 0);
  }
  ASSERT_EQ(szGroupStart(), szSuccess);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(szSend(send[i].data(), count + size_t(i), szBfloat16, next(), comms[i], nullptr), szSuccess);
  for (int i = 2; i >= 0; --i)
    EXPECT_EQ(szRecv(recv[i].data(), count + size_t(i), szBfloat16, prev(), comms[i], nullptr), szSuccess);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(firstDiff(recv[i], makeData(szBfloat16, count + size_t(i), prev()), 2), -1) << "comm " << i;
  for (int i = 0; i < 3; ++i) {  // and one after the other, outside a group
    SCOPED_TRACE("comm " + std::to_string(i));
    ringExchange(comms[i], szFloat32, 4099);
  }
}

// A buffer list split differently on each side (same total), across slice boundaries.
class Vectored : public CommTest, public ::testing::WithParamInterface<int> {};

TEST_P(Vectored, DifferentSplits) {
  Comm comm(GetParam(), 0, 64 << 10);  // 64 KiB slices: many slices span two buffers
  ASSERT_NE(comm.get(), nullptr);
  const std::vector<size_t> sendSplit = {100000, 0, 1, 65536, 234464};
  const std::vector<size_t> recvSplit = {32768, 200000, 0, 167232, 1};
  size_t total = 0;
  for (size_t n : sendSplit) total += n;
  std::vector<uint8_t> send = makeData(szBfloat16, total, gRank), want = makeData(szBfloat16, total, prev());
  std::vector<std::vector<uint8_t>> recvParts;
  std::vector<const void*> sendPtrs;
  std::vector<void*> recvPtrs;
  size_t off = 0;
  for (size_t n : sendSplit) {
    sendPtrs.push_back(send.data() + off * 2);
    off += n;
  }
  for (size_t n : recvSplit) recvParts.emplace_back(n * 2, 0);
  for (auto& part : recvParts) recvPtrs.push_back(part.empty() ? nullptr : part.data());
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSendv(sendPtrs.data(), sendSplit.data(), int(sendSplit.size()), szBfloat16, next(), comm.get(),
                    nullptr),
            szSuccess)
      << szGetLastError(nullptr);
  EXPECT_EQ(szRecvv(recvPtrs.data(), recvSplit.data(), int(recvSplit.size()), szBfloat16, prev(), comm.get(),
                    nullptr),
            szSuccess)
      << szGetLastError(nullptr);
  ASSERT_EQ(szGroupEnd(), szSuccess) << szGetLastError(nullptr);
  std::vector<uint8_t> got;
  for (auto& part : recvParts) got.insert(got.end(), part.begin(), part.end());
  EXPECT_EQ(firstDiff(got, want, 2), -1);
}

INSTANTIATE_TEST_SUITE_P(Codec, Vectored, ::testing::Values(SZ_CODEC_ON, SZ_CODEC_OFF),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string(p.param == SZ_CODEC_ON ? "On" : "Off");
                         });

// CRC32C on every slice, compressed and raw.
TEST_F(CommTest, Crc) {
  for (int codec : {SZ_CODEC_ON, SZ_CODEC_OFF}) {
    Comm comm(codec, 1, 256 << 10);
    ASSERT_NE(comm.get(), nullptr);
    for (szDataType_t type : {szBfloat16, szFloat8e5m2, szInt32})
      for (size_t count : {size_t(1), size_t(1023), size_t(3) << 20}) {
        SCOPED_TRACE("codec " + std::to_string(codec) + ", type " + std::to_string(type) + ", " +
                     std::to_string(count) + " elements");
        ringExchange(comm.get(), type, count);
      }
  }
}

// A send and a receive that disagree: szInvalidUsage on both sides, for a small message and
// one larger than the socket buffers.
void expectMismatch(size_t sendCount, szDataType_t sendType, size_t recvCount, szDataType_t recvType) {
  for (size_t scale : {size_t(1), size_t(4096)}) {  // a few KB, and megabytes: more than the socket buffers
    Comm comm(SZ_CODEC_ON);
    ASSERT_NE(comm.get(), nullptr);
    if (gRank > 1) continue;  // ranks 0 and 1 disagree; the others only take part in init
    SCOPED_TRACE("scale " + std::to_string(scale));
    std::vector<uint8_t> buf(std::max(sendCount * szTypeSize(sendType), recvCount * szTypeSize(recvType)) *
                             scale);
    szResult_t res = gRank == 0 ? szSend(buf.data(), sendCount * scale, sendType, 1, comm.get(), nullptr)
                                : szRecv(buf.data(), recvCount * scale, recvType, 0, comm.get(), nullptr);
    EXPECT_EQ(res, szInvalidUsage) << szGetLastError(nullptr);
    comm.abort();
  }
}

TEST_F(CommTest, MismatchedCount) {
  expectMismatch(1000, szBfloat16, 1001, szBfloat16);
  expectMismatch(1001, szBfloat16, 1000, szBfloat16);
}

TEST_F(CommTest, MismatchedType) {
  expectMismatch(1000, szBfloat16, 1000, szFloat16);  // same bytes, another type
  expectMismatch(1000, szFloat32, 2000, szBfloat16);
  expectMismatch(2000, szBfloat16, 1000, szFloat32);  // the receiver's elements are the larger
  expectMismatch(5000, szBfloat16, 5000, szFloat32);
}

// One operation that lasts many times the timeout while its slices keep moving completes: the
// timeout is for no progress, not for the operation (1 KiB slices, 1.5 s timeout, 16 MiB).
TEST_F(CommTest, LongOperationOutlastsTheTimeout) {
  Comm comm(SZ_CODEC_ON, 0, 1024, 1500);
  ASSERT_NE(comm.get(), nullptr);
  if (gRank > 1) return;
  const size_t count = 8u << 20;
  std::vector<uint8_t> sent = makeData(szBfloat16, count, 0), got(sent.size(), 0);
  szResult_t res = gRank == 0 ? szSend(sent.data(), count, szBfloat16, 1, comm.get(), nullptr)
                              : szRecv(got.data(), count, szBfloat16, 0, comm.get(), nullptr);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  if (gRank == 1) {
    EXPECT_TRUE(got == sent);
  }
}

// A communicator destroyed while this thread's group holds an operation on it: the group's
// szGroupEnd fails with szInvalidUsage instead of running the operation on freed memory.
TEST_F(CommTest, DestroyInsideAGroup) {
  Comm comm(SZ_CODEC_ON);
  ASSERT_NE(comm.get(), nullptr);
  std::vector<uint8_t> buf(4096);
  szComm_t c = comm.release();
  if (gRank == 0) {
    ASSERT_EQ(szGroupStart(), szSuccess);
    EXPECT_EQ(szSend(buf.data(), 1000, szBfloat16, 1, c, nullptr), szSuccess);
  }
  EXPECT_EQ(szCommDestroy(c), szSuccess);
  if (gRank == 0) {
    EXPECT_EQ(szGroupEnd(), szInvalidUsage);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("destroyed"), std::string::npos) << szGetLastError(nullptr);
  }
}

// Arguments the call itself rejects; the communicator stays usable afterwards.
TEST_F(CommTest, InvalidArguments) {
  Comm comm(SZ_CODEC_ON);
  ASSERT_NE(comm.get(), nullptr);
  szComm_t c = comm.get();
  uint8_t buf[64] = {};
  const int peer = next();
  EXPECT_EQ(szSend(nullptr, 4, szBfloat16, peer, c, nullptr), szInvalidArgument);
  EXPECT_EQ(szRecv(nullptr, 4, szBfloat16, peer, c, nullptr), szInvalidArgument);
  // To self outside a group: no receive can match it (tests/comm_self_test.cc has the rest).
  EXPECT_EQ(szSend(buf, 4, szBfloat16, gRank, c, nullptr), szInvalidUsage);
  EXPECT_EQ(szRecv(buf, 4, szBfloat16, gRank, c, nullptr), szInvalidUsage);
  for (int bad : {-1, gSize, gSize + 7}) {
    EXPECT_EQ(szSend(buf, 4, szBfloat16, bad, c, nullptr), szInvalidArgument) << "peer " << bad;
    EXPECT_EQ(szRecv(buf, 4, szBfloat16, bad, c, nullptr), szInvalidArgument) << "peer " << bad;
  }
  for (int bad : {-1, int(szNumTypes), 1000}) {
    EXPECT_EQ(szSend(buf, 4, szDataType_t(bad), peer, c, nullptr), szInvalidArgument) << "type " << bad;
    EXPECT_EQ(szRecv(buf, 4, szDataType_t(bad), peer, c, nullptr), szInvalidArgument) << "type " << bad;
  }
  for (szDataType_t type : {szBfloat16, szFloat32, szInt64}) {  // SIZE_MAX elements: bytes overflow
    EXPECT_EQ(szSend(buf, SIZE_MAX, type, peer, c, nullptr), szInvalidArgument) << "type " << type;
    EXPECT_EQ(szRecv(buf, SIZE_MAX, type, peer, c, nullptr), szInvalidArgument) << "type " << type;
  }
  const void* sendList[2] = {buf, buf};
  void* recvList[2] = {buf, nullptr};
  size_t counts[2] = {4, 4}, huge[2] = {SIZE_MAX / 2, SIZE_MAX / 2 + 2};
  EXPECT_EQ(szSendv(nullptr, counts, 2, szBfloat16, peer, c, nullptr), szInvalidArgument);
  EXPECT_EQ(szRecvv(recvList, counts, 2, szBfloat16, peer, c, nullptr), szInvalidArgument);  // NULL buffer
  EXPECT_EQ(szSendv(sendList, huge, 2, szUint8, peer, c, nullptr), szInvalidArgument);  // total overflows
  EXPECT_EQ(szSend(buf, 4, szBfloat16, peer, nullptr, nullptr), szInvalidArgument);
  // Inside a group the bad call fails, and szGroupEnd runs none of the group's operations.
  ASSERT_EQ(szGroupStart(), szSuccess);
  EXPECT_EQ(szSend(buf, 4, szBfloat16, peer, c, nullptr), szSuccess);
  EXPECT_EQ(szRecv(nullptr, 4, szBfloat16, prev(), c, nullptr), szInvalidArgument);
  EXPECT_NE(szGroupEnd(), szSuccess);
  ringExchange(c, szBfloat16, 12345);
}

// The send counters: compressible KV-like BF16 with the codec on goes out smaller.
TEST_F(CommTest, StatsShowCompression) {
  for (int codec : {SZ_CODEC_ON, SZ_CODEC_OFF}) {
    Comm comm(codec);
    ASSERT_NE(comm.get(), nullptr);
    const size_t count = size_t(4) << 20;
    szStats_t before, after;
    ASSERT_EQ(szCommGetStats(comm.get(), &before), szSuccess);
    ringExchange(comm.get(), szBfloat16, count);
    ASSERT_EQ(szCommGetStats(comm.get(), &after), szSuccess);
    uint64_t raw = after.rawBytes - before.rawBytes, wire = after.wireBytes - before.wireBytes;
    EXPECT_EQ(raw, count * 2) << "codec " << codec;
    EXPECT_GT(after.slices, before.slices);
    if (codec == SZ_CODEC_ON) {
      EXPECT_LT(wire, raw * 0.8) << "KV-like BF16 should compress to about 1/1.33";
      EXPECT_GT(after.compressedSlices, before.compressedSlices);
    } else {
      EXPECT_GE(wire, raw);
      EXPECT_EQ(after.compressedSlices, before.compressedSlices);
    }
  }
}

// Ranks other than 0 print only their failures, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", gRank, r.file_name() ? r.file_name() : "?",
              r.line_number(), r.summary());
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  ::testing::InitGoogleTest(&argc, argv);
  if (gSize < 2) {
    if (gRank == 0) fprintf(stderr, "splitzip_mpi_tests: needs 2 or more ranks (mpirun -np 2)\n");
    MPI_Finalize();
    return 1;
  }
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (gRank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    delete listeners.Release(listeners.default_xml_generator());  // rank 0 writes GTEST_OUTPUT
    listeners.Append(new RankFailurePrinter);
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (gRank == 0) {
    const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
    // Not in the "N passed, N failed" form: that line is .ci/run's alone.
    printf("splitzip_mpi_tests on %d ranks: %d ok, %d failing, %d skipped\n", gSize,
           u.successful_test_count(), u.failed_test_count(), u.skipped_test_count());
  }
  MPI_Finalize();
  return anyFailed;
}
