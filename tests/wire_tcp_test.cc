// The tcp wire, with ranks as threads of this process: bit-exact messages of many sizes both
// ways at once over 1, 2 and 3 sockets per peer, a ring of 4 ranks, a message larger than the
// receive buffer, a silent peer, peers that abort in the middle of a message, disagreeing
// socket counts, and several threads driving one communicator.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/bootstrap.h"
#include "transport/wire.h"

namespace {

constexpr int kTimeoutMs = 10000;

szWireConfig config(int nsocks, int timeoutMs = kTimeoutMs) {
  szWireConfig c = {};
  c.timeoutMs = timeoutMs;
  c.socketsPerPeer = nsocks;
  return c;
}

// Runs fn(rank, wireComm, bootstrap) on one thread per rank, each connected with `cfg`; then
// closes the wire (unless fn aborted it and set wireComm to null) after a barrier.
void runWire(int nranks, const szWireConfig& cfg,
             const std::function<void(int, void*&, szBootstrap*)>& fn) {
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; r++) {
    threads.emplace_back([&, r] {
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, nranks, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
      void* comm = nullptr;
      EXPECT_EQ(szWireTcp.connect(b, cfg, &comm), szSuccess) << szGetLastError(nullptr);
      if (comm != nullptr) fn(r, comm, b);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess) << szGetLastError(nullptr);
      if (comm != nullptr) {
        EXPECT_EQ(szWireTcp.close(comm), szSuccess) << szGetLastError(nullptr);
      }
      szBootstrapClose(b);
    });
  }
  for (std::thread& t : threads) t.join();
}

// Tests `req` until it finishes; the result and the message size.
szResult_t wait(szWireRequest* req, size_t* bytes = nullptr) {
  size_t size = 0;
  auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    int done = 0;
    szResult_t res = szWireTcp.test(req, &done, &size);
    if (res != szSuccess || done) {
      if (bytes != nullptr) *bytes = size;
      return res;
    }
    if (std::chrono::steady_clock::now() > giveUp) {
      ADD_FAILURE() << "request still running after 30 s";
      return szInternalError;
    }
  }
}

// Distinct bytes per (sender, message), cheap enough for 64 MiB.
std::vector<uint8_t> message(int from, int index, size_t bytes) {
  std::vector<uint8_t> m(bytes);
  uint64_t x = 0x9E3779B97F4A7C15ull * (from * 1000 + index + 1);
  for (size_t i = 0; i < bytes; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    m[i] = (uint8_t)x;
  }
  return m;
}

// Both ranks post every message to the other and every receive from it, then wait for all.
void exchange(int rank, void* comm, const std::vector<size_t>& sizes) {
  int peer = 1 - rank;
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<szWireRequest*> sends(sizes.size()), recvs(sizes.size());
  for (size_t k = 0; k < sizes.size(); k++) {
    out.push_back(message(rank, k, sizes[k]));
    in.emplace_back(sizes[k] + 1, 0xEE);  // one byte more than the message, to catch overruns
    ASSERT_EQ(szWireIrecv(&szWireTcp, comm, peer, in[k].data(), sizes[k], &recvs[k]), szSuccess);
    ASSERT_EQ(szWireIsend(&szWireTcp, comm, peer, out[k].data(), sizes[k], &sends[k]), szSuccess);
  }
  // All transfers first: checking 64 MiB takes a while, and a peer that stops calling test()
  // that long looks dead to the other side.
  for (size_t k = 0; k < sizes.size(); k++) {
    size_t got = 0;
    EXPECT_EQ(wait(recvs[k], &got), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(got, sizes[k]);
    EXPECT_EQ(wait(sends[k], &got), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(got, sizes[k]);
  }
  for (size_t k = 0; k < sizes.size(); k++) {
    EXPECT_EQ(in[k].back(), 0xEE) << "receive wrote past the message";
    in[k].pop_back();
    EXPECT_TRUE(in[k] == message(peer, k, sizes[k])) << "message " << k << " of " << sizes[k] << " bytes";
  }
}

class WireTcp : public testing::TestWithParam<int> {};

TEST_P(WireTcp, ManySizesBothWaysAtOnce) {
  const std::vector<size_t> sizes = {0, 1, 7, 4096, 1 << 20, 64 << 20};
  runWire(2, config(GetParam()), [&](int rank, void*& comm, szBootstrap*) { exchange(rank, comm, sizes); });
}

TEST_P(WireTcp, SizesAroundTheStripingThreshold) {
  const std::vector<size_t> sizes = {(64 << 10) - 1, 64 << 10, (128 << 10) - 1, 128 << 10,
                                     (128 << 10) + 1, (192 << 10) + 2, (1 << 20) + 3, 0, 5};
  runWire(2, config(GetParam()), [&](int rank, void*& comm, szBootstrap*) { exchange(rank, comm, sizes); });
}

INSTANTIATE_TEST_SUITE_P(SocketsPerPeer, WireTcp, testing::Values(1, 2, 3));

TEST(WireTcpRing, FourRanksSendNextReceivePrevious) {
  const std::vector<size_t> sizes = {3 << 20, 1, 0, 100000};
  runWire(4, config(2), [&](int rank, void*& comm, szBootstrap*) {
    int next = (rank + 1) % 4, prev = (rank + 3) % 4;
    std::vector<std::vector<uint8_t>> out, in;
    std::vector<szWireRequest*> sends(sizes.size()), recvs(sizes.size());
    for (size_t k = 0; k < sizes.size(); k++) {
      out.push_back(message(rank, k, sizes[k]));
      in.emplace_back(sizes[k]);
      ASSERT_EQ(szWireIsend(&szWireTcp, comm, next, out[k].data(), sizes[k], &sends[k]), szSuccess);
      ASSERT_EQ(szWireIrecv(&szWireTcp, comm, prev, in[k].data(), sizes[k], &recvs[k]), szSuccess);
    }
    for (size_t k = 0; k < sizes.size(); k++) {
      EXPECT_EQ(wait(sends[k]), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(wait(recvs[k]), szSuccess) << szGetLastError(nullptr);
    }
    for (size_t k = 0; k < sizes.size(); k++)
      EXPECT_TRUE(in[k] == message(prev, k, sizes[k])) << "rank " << rank << " message " << k;
  });
}

TEST(WireTcpErrors, MessageLargerThanReceiveBuffer) {
  runWire(2, config(2), [&](int rank, void*& comm, szBootstrap*) {
    std::vector<uint8_t> buf(1000, 1);
    szWireRequest* req = nullptr;
    if (rank == 0) {
      ASSERT_EQ(szWireIsend(&szWireTcp, comm, 1, buf.data(), buf.size(), &req), szSuccess);
      szResult_t res = wait(req);  // in the socket buffer before the receiver objects, or reset
      EXPECT_TRUE(res == szSuccess || res == szRemoteError) << res;
      return;
    }
    ASSERT_EQ(szWireIrecv(&szWireTcp, comm, 0, buf.data(), 100, &req), szSuccess);
    EXPECT_EQ(wait(req), szInvalidUsage);
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("larger than the receive buffer"), std::string::npos)
        << szGetLastError(nullptr);
    // The stream is out of step now: the peer stays broken.
    EXPECT_EQ(szWireIrecv(&szWireTcp, comm, 0, buf.data(), buf.size(), &req), szInvalidUsage);
    EXPECT_EQ(szWireTcp.abort(comm), szSuccess);
    comm = nullptr;
  });
}

TEST(WireTcpErrors, SilentPeerTimesOut) {
  runWire(2, config(1, 500), [&](int rank, void*& comm, szBootstrap*) {
    if (rank == 0) return;  // never sends
    uint8_t b;
    szWireRequest* req = nullptr;
    ASSERT_EQ(szWireIrecv(&szWireTcp, comm, 0, &b, 1, &req), szSuccess);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(wait(req), szTimeout) << szGetLastError(nullptr);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, std::chrono::milliseconds(400));
    EXPECT_LT(took, std::chrono::milliseconds(2000));
    EXPECT_EQ(szWireTcp.abort(comm), szSuccess);
    comm = nullptr;
  });
}

// One side aborts while a 64 MiB message is in flight; the other must fail fast, not hang.
void abortMidTransfer(bool senderAborts) {
  const size_t bytes = 64 << 20;
  std::atomic<bool> started{false};
  runWire(2, config(2, 3000), [&](int rank, void*& comm, szBootstrap*) {
    bool sender = rank == 0;
    std::vector<uint8_t> buf(bytes, 3);
    szWireRequest* req = nullptr;
    ASSERT_EQ(sender ? szWireIsend(&szWireTcp, comm, 1, buf.data(), bytes, &req)
                     : szWireIrecv(&szWireTcp, comm, 0, buf.data(), bytes, &req),
              szSuccess);
    if (sender == senderAborts) {
      // Moves a little of the message (the socket buffers take some), then leaves.
      for (int i = 0; i < 3; i++) {
        int done = 0;
        EXPECT_EQ(szWireTcp.test(req, &done, nullptr), szSuccess);
        EXPECT_EQ(done, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT_EQ(szWireTcp.abort(comm), szSuccess);
    } else {
      while (!started) std::this_thread::yield();
      auto start = std::chrono::steady_clock::now();
      szResult_t res = wait(req);
      EXPECT_TRUE(res == szRemoteError || res == szTimeout) << res << ": " << szGetLastError(nullptr);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(3500));
      EXPECT_EQ(szWireTcp.abort(comm), szSuccess);
    }
    comm = nullptr;
  });
}

TEST(WireTcpErrors, ReceiverAbortsMidTransfer) { abortMidTransfer(false); }
TEST(WireTcpErrors, SenderAbortsMidTransfer) { abortMidTransfer(true); }

TEST(WireTcpErrors, SocketCountsMustAgree) {
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; r++) {
    threads.emplace_back([&, r] {
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, 2, kTimeoutMs, &b), szSuccess) << szGetLastError(nullptr);
      void* comm = nullptr;
      EXPECT_EQ(szWireTcp.connect(b, config(r + 1), &comm), szInvalidUsage);
      EXPECT_EQ(comm, nullptr);
      szBootstrapClose(b);
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(WireTcpThreads, SendsAndReceivesFromSeparateThreads) {
  const int kMessages = 50;
  runWire(2, config(2), [&](int rank, void*& comm, szBootstrap*) {
    int peer = 1 - rank;
    std::thread sender([&] {
      for (int k = 0; k < kMessages; k++) {
        std::vector<uint8_t> m = message(rank, k, 1000 * k);
        szWireRequest* req = nullptr;
        ASSERT_EQ(szWireIsend(&szWireTcp, comm, peer, m.data(), m.size(), &req), szSuccess);
        EXPECT_EQ(wait(req), szSuccess) << szGetLastError(nullptr);
      }
    });
    for (int k = 0; k < kMessages; k++) {
      std::vector<uint8_t> m(1000 * k);
      szWireRequest* req = nullptr;
      ASSERT_EQ(szWireIrecv(&szWireTcp, comm, peer, m.data(), m.size(), &req), szSuccess);
      size_t got = 0;
      EXPECT_EQ(wait(req, &got), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(got, m.size());
      EXPECT_TRUE(m == message(peer, k, 1000 * k)) << "message " << k;
    }
    sender.join();
  });
}

// A message of two pieces (a slot's header and a payload elsewhere) is one message: sent in two
// pieces and received in one, and sent in one and received in two (the boundary inside a socket's
// share, 4 sockets), a shorter message filling the first piece and part of the second.
TEST(WireTcp, TwoPieceMessagesAreOneMessage) {
  const size_t head = 128, body = (size_t(1) << 20) + 3;
  runWire(2, config(4), [&](int rank, void*& comm, szBootstrap*) {
    const std::vector<uint8_t> whole = message(0, 7, head + body), shorter = message(0, 8, head + 1000);
    szWireRequest* req = nullptr;
    if (rank == 0) {
      std::vector<uint8_t> h(whole.begin(), whole.begin() + head), b(whole.begin() + head, whole.end());
      const szWirePiece two[2] = {{h.data(), h.size()}, {b.data(), b.size()}};
      ASSERT_EQ(szWireTcp.isend(comm, 1, two, 2, &req), szSuccess);
      EXPECT_EQ(wait(req), szSuccess) << szGetLastError(nullptr);
      for (const std::vector<uint8_t>* m : {&whole, &shorter}) {
        ASSERT_EQ(szWireIsend(&szWireTcp, comm, 1, m->data(), m->size(), &req), szSuccess);
        EXPECT_EQ(wait(req), szSuccess) << szGetLastError(nullptr);
      }
      return;
    }
    std::vector<uint8_t> got(head + body, 0);
    size_t size = 0;
    ASSERT_EQ(szWireIrecv(&szWireTcp, comm, 0, got.data(), got.size(), &req), szSuccess);
    EXPECT_EQ(wait(req, &size), szSuccess) << szGetLastError(nullptr);
    EXPECT_EQ(size, whole.size());
    EXPECT_TRUE(got == whole);
    for (const std::vector<uint8_t>* m : {&whole, &shorter}) {
      std::vector<uint8_t> h(head, 0), b(body, 0xEE);
      const szWirePiece two[2] = {{h.data(), h.size()}, {b.data(), b.size()}};
      ASSERT_EQ(szWireTcp.irecv(comm, 0, two, 2, &req), szSuccess);
      EXPECT_EQ(wait(req, &size), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(size, m->size());
      EXPECT_TRUE(std::equal(h.begin(), h.end(), m->begin()));
      EXPECT_TRUE(std::equal(m->begin() + head, m->end(), b.begin()));
      for (size_t i = m->size() - head; i < body; ++i) ASSERT_EQ(b[i], 0xEE) << "written past the message at " << i;
    }
  });
}

// failPeer: a receive posted into a buffer is failed with the given code, and what the peer
// sends afterwards never reaches the buffer; later posts to the peer fail at once.
TEST(WireTcp, FailPeerLetsGoOfPostedBuffers) {
  runWire(2, config(2), [&](int rank, void*& comm, szBootstrap* b) {
    const std::vector<uint8_t> m = message(0, 1, 1 << 20);
    szWireRequest* req = nullptr;
    if (rank == 1) {
      std::vector<uint8_t> buf(m.size(), 0x5A);
      ASSERT_EQ(szWireIrecv(&szWireTcp, comm, 0, buf.data(), buf.size(), &req), szSuccess);
      ASSERT_EQ(szWireTcp.failPeer(comm, 0, szRemoteError, "the test let go"), szSuccess);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // rank 0 sends now
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT_EQ(wait(req), szRemoteError);
      for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], 0x5A) << "written after failPeer at " << i;
      EXPECT_EQ(szWireIrecv(&szWireTcp, comm, 0, buf.data(), buf.size(), &req), szRemoteError);
      return;
    }
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
    if (szWireIsend(&szWireTcp, comm, 1, m.data(), m.size(), &req) == szSuccess) wait(req);  // may fail: the peer reset
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
  });
}

TEST(WireTcpTable, NameAndMemory) {
  EXPECT_STREQ(szWireTcp.name, "tcp");
  EXPECT_EQ(szWireTcp.deviceMemory, 0);
  EXPECT_EQ(szFindWire("tcp"), &szWireTcp);
}

}  // namespace
