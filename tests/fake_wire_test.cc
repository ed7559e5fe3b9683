// One wire table (transport/wire.h) drives the slot protocol whatever fills it: a fake message
// wire (in-process queues, no sockets) carries the slot proxy's data and control messages for
// host operations (src/proto/host_slots.h) of two ranks as threads. Bit-exact as frames and raw
// over a ring of 4 slots wrapped many times, every slot one message of the fake wire; a fake wire
// whose messages to a peer fail breaks that peer for both sides with szRemoteError, not a
// timeout; a receive through before its sender closed succeeds though the close fails the pair;
// the proxy refuses a slot-area wire (no messages) as a channel.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/bootstrap.h"
#include "host_request.h"
#include "base/checks.h"
#include "src/proto/host_slots.h"
#include "src/proto/slot_proxy.h"
#include "transport/slot_words.h"
#include "transport/wire.h"

struct szWireRequest {
  bool send = false;
  struct FakeComm* comm = nullptr;
  int peer = 0;
  void* data = nullptr;
  size_t capacity = 0;
};

// One connect's network: a queue of messages per (sender, receiver), and whether it fails.
struct FakeNet {
  std::mutex mu;
  std::map<std::pair<int, int>, std::deque<std::vector<uint8_t>>> queues;
  bool failing = false;  // every request on it fails (a wire that broke)
  uint64_t messages = 0;
  uint64_t flipAt = ~uint64_t(0);  // this message (0: the first) has one payload bit flipped on the way
  uint64_t directAt = ~uint64_t(0);  // this message's header says its slice stayed in the sender's buffer
  std::vector<uint8_t> first;      // the first message as it travelled
};

struct FakeComm {
  int rank = 0;
  std::shared_ptr<FakeNet> net;
};

namespace {

using sztest::hostRequest;

// The k-th connect of every rank meets the k-th of the others (each rank connects its wires in
// the same order, as a collective).
std::mutex gNetsMu;
std::vector<std::shared_ptr<FakeNet>> gNets;
thread_local size_t tConnects = 0;

szResult_t fakeConnect(szBootstrap* b, const szWireConfig&, void** wireComm) {
  std::lock_guard<std::mutex> lock(gNetsMu);
  const size_t k = tConnects++;
  if (gNets.size() <= k) gNets.push_back(std::make_shared<FakeNet>());
  *wireComm = new FakeComm{szBootstrapRank(b), gNets[k]};
  return szSuccess;
}

szResult_t fakeIsend(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  FakeComm* c = static_cast<FakeComm*>(wireComm);
  std::lock_guard<std::mutex> lock(c->net->mu);
  std::vector<uint8_t>& m = c->net->queues[{c->rank, peer}].emplace_back();  // eager: the bytes are copied now
  for (int k = 0; k < npieces; ++k) {
    const uint8_t* p = static_cast<const uint8_t*>(pieces[k].data);
    m.insert(m.end(), p, p + pieces[k].bytes);
  }
  const size_t bytes = m.size();
  if (c->net->messages == c->net->flipAt && m.size() > sz::kSlotHeaderBytes + 100) m[sz::kSlotHeaderBytes + 100] ^= 0x10;
  if (c->net->messages == c->net->directAt && m.size() >= sz::kSlotHeaderBytes) {
    sz::SlotHeader h;
    memcpy(&h, m.data(), sizeof(h));
    h.flags |= sz::kSlotDirect;
    h.src = reinterpret_cast<uint64_t>(m.data() + sz::kSlotHeaderBytes);  // an address of this process
    memcpy(m.data(), &h, sizeof(h));
  }
  if (c->net->messages == 0) c->net->first = m;
  ++c->net->messages;
  *request = new szWireRequest{true, c, peer, nullptr, bytes};
  return szSuccess;
}

szResult_t fakeIrecv(void* wireComm, int peer, const szWirePiece* pieces, int npieces, szWireRequest** request) {
  if (npieces != 1) return szSetError(szInvalidArgument, "fake wire: receives take one piece");
  *request = new szWireRequest{false, static_cast<FakeComm*>(wireComm), peer, pieces[0].data, pieces[0].bytes};
  return szSuccess;
}

// Receives complete in the order they were posted: the proxy tests its oldest first.
szResult_t fakeTest(szWireRequest* r, int* done, size_t* bytes) {
  std::unique_ptr<szWireRequest> owned(r);
  FakeNet& net = *r->comm->net;
  std::lock_guard<std::mutex> lock(net.mu);
  if (net.failing) return szSetError(szRemoteError, "fake wire: broken");
  *done = 1;
  if (r->send) {
    *bytes = r->capacity;
    return szSuccess;
  }
  std::deque<std::vector<uint8_t>>& q = net.queues[{r->peer, r->comm->rank}];
  if (q.empty()) {
    *done = 0;
    owned.release();
    return szSuccess;
  }
  if (q.front().size() > r->capacity) return szSetError(szInvalidUsage, "fake wire: message larger than the receive");
  memcpy(r->data, q.front().data(), q.front().size());
  *bytes = q.front().size();
  q.pop_front();
  return szSuccess;
}

szResult_t fakeClose(void* wireComm) {
  delete static_cast<FakeComm*>(wireComm);
  return szSuccess;
}

// name, needsGpu, deviceMemory, nodeLocal, sendsWaitForReceives, defaultSliceBytes, defaultMaxBlocks, defaultSlotsPerBlock, connect, connectPeers, channel, hostChannel, progress, isend, irecv, test, failPeer, close, abort
const szWire kFakeWire = {"fake", 0, 0, 0, 0, 64 << 10, 0, 2, fakeConnect, nullptr, nullptr, nullptr, nullptr, fakeIsend, fakeIrecv, fakeTest, nullptr, fakeClose, fakeClose};

szResult_t noChannel(void*, int, int, sz::SlotChannel*) { return szInternalError; }
const szWire kAreaWire = {"areas", 0, 0, 1, 0, 64 << 10, 0, 2, fakeConnect, nullptr, noChannel, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, fakeClose, fakeClose};

constexpr uint64_t kSlice = 64 << 10;
constexpr uint32_t kSlots = 4;

std::vector<uint16_t> kvLike(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t x = seed * 2654435761u + 7;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = uint16_t(((x >> 20) & 1) << 15 | (123 + (x >> 28) % 8) << 7 | ((x >> 8) & 0x7F));
    if (i % 997 == 3) v[i] = uint16_t(0x7F80 | (x & 0x7F));  // Inf and NaN payloads: escapes
  }
  return v;
}

// Two ranks as threads, each with a slot proxy whose data and control wires are `data` and
// `control`, and host slots over it; fn(rank, hostSlots) runs on each. `seal` (SZ_AUTH_DATA, or
// with `encrypt` SZ_ENCRYPT): the proxy seals the channel's slots, the host slots do not.
// `before` runs once both data nets exist, before any operation.
void onTwoRanks(const szWire* data, const szWire* control,
                const std::function<void(int, sz::SlotProxy*, sz::HostSlots*)>& fn, bool seal = false,
                bool encrypt = false, const std::function<void()>& before = {}) {
  {
    std::lock_guard<std::mutex> lock(gNetsMu);
    gNets.clear();
  }
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      tConnects = 0;
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, 2, 20000, &b), szSuccess) << szGetLastError(nullptr);
      std::unique_ptr<sz::SlotProxy> proxy;
      sz::SlotProxyChannel host{data, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, {}};
      if (seal) {
        host.macKey = szBootstrapSessionKey(b);
        host.encrypt = encrypt;
      }
      ASSERT_EQ(sz::SlotProxy::create(b, control, {host}, &proxy), szSuccess) << szGetLastError(nullptr);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // both ranks' nets exist
      if (r == 0 && before) before();
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      sz::CodebookDrift codebooks;
      std::unique_ptr<sz::HostSlots> slots;
      // CRC32C where nothing seals: with the proxy's seal it is off, so only the seal can refuse.
      const sz::HostSlotConfig cfg{0, kSlice, 2, 5000, !seal, nullptr, false};
      ASSERT_EQ(sz::HostSlots::create(proxy.get(), sz::proxyChannelSource(proxy.get(), 0), sz::proxyFlushed(proxy.get(), 0), r, 2,
                                      cfg, &codebooks, &slots), szSuccess) << szGetLastError(nullptr);
      fn(r, proxy.get(), slots.get());
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      slots.reset();
      proxy.reset();
      szBootstrapClose(b);
    });
  for (std::thread& t : threads) t.join();
}

TEST(FakeWire, HostSlotsRoundTripBitExactOverAnyMessageWire) {
  const size_t n = 9 * kSlice / 2 + 321;  // elements: 9 slices and a bit, the ring of 4 wrapped
  for (bool frames : {true, false}) {
    SCOPED_TRACE(frames ? "frames" : "raw");
    std::vector<sz::SlotCompletion> sent;
    onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy*, sz::HostSlots* slots) {
      std::vector<sz::SlotCompletion> done;
      if (rank == 0) {
        std::vector<uint16_t> want = kvLike(n, 5);
        ASSERT_EQ(slots->run({hostRequest(true, 1, want, frames)}, &done), szSuccess) << szGetLastError(nullptr);
        sent = done;
      } else {
        std::vector<uint16_t> got(n, 0xA5A5);
        ASSERT_EQ(slots->run({hostRequest(false, 0, got, false)}, &done), szSuccess) << szGetLastError(nullptr);
        EXPECT_TRUE(got == kvLike(n, 5)) << "received bits differ";
      }
    });
    ASSERT_EQ(sent.size(), 1u);
    const uint64_t slices = (n * 2 + kSlice - 1) / kSlice;
    EXPECT_EQ(sent[0].slices, slices);
    EXPECT_EQ(sent[0].compressedSlices, frames ? slices : 0);
    if (frames) {
      EXPECT_LT(sent[0].wireBytes, n * 2 * 4 / 5) << "frames of KV-like data: ratio above 1.25";
    }
    // The data wire (each rank's first connect) carried every slot as one message and nothing
    // else; the control wire (the second) carried the credits, cumulative: one message covers
    // every slot drained since the last, so at least one and at most one per slot.
    ASSERT_EQ(gNets.size(), 2u);
    EXPECT_EQ(gNets[0]->messages, slices);
    EXPECT_GE(gNets[1]->messages, 1u);
    EXPECT_LE(gNets[1]->messages, slices);
  }
}

TEST(FakeWire, ABrokenWireFailsBothSidesWithRemoteError) {
  const size_t n = 3 * kSlice;  // more than the ring holds: the sender waits for credits
  std::vector<szResult_t> results(2, szSuccess);
  const auto start = std::chrono::steady_clock::now();
  onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy*, sz::HostSlots* slots) {
    std::vector<uint16_t> buf = kvLike(n, 1);
    std::vector<sz::SlotCompletion> done;
    if (rank == 0) {
      std::lock_guard<std::mutex> netsLock(gNetsMu);
      std::lock_guard<std::mutex> lock(gNets[0]->mu);
      gNets[0]->failing = true;  // the data wire breaks before anything moves
    }
    results[size_t(rank)] = slots->run({hostRequest(rank == 0, 1 - rank, buf, false)}, &done);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4000)) << "not the 5 s timeout";
  EXPECT_EQ(results[0], szRemoteError);
  EXPECT_EQ(results[1], szRemoteError);
}

// A sender that closes its connections once its last credit came back fails the receiving
// proxy's pair (the error word goes up) perhaps before this side saw that credit leave; the
// receive, every slice landed and credited, succeeds all the same. Here the error goes up inside
// the receive's first "have the credits left?" (answered "not yet"), the moment a pool thread
// driving the proxy into the peer's close could pick between the caller's checks.
TEST(FakeWire, AReceiveWhoseSenderClosesAfterItsLastCreditSucceeds) {
  const size_t n = 5 * kSlice / 2 + 7;  // the ring of 4 wrapped
  for (bool frames : {true, false}) {
    SCOPED_TRACE(frames ? "frames" : "raw");
    onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy* proxy, sz::HostSlots* slots) {
      std::vector<sz::SlotCompletion> done;
      if (rank == 0) {
        std::vector<uint16_t> want = kvLike(n, 8);
        ASSERT_EQ(slots->run({hostRequest(true, 1, want, frames)}, &done), szSuccess) << szGetLastError(nullptr);
        return;
      }
      sz::SlotChannel ch{};
      ASSERT_EQ(proxy->channel(0, 0, 0, &ch), szSuccess);
      const sz::SlotsFlushed real = sz::proxyFlushed(proxy, 0);
      bool raised = false;
      const sz::SlotsFlushed closing = [&](int peer, uint64_t steps) {
        if (raised || steps == 0) return real(peer, steps);
        raised = true;
        sz::slotRaiseError(ch.localError, szRemoteError);  // as the proxy's breakPeer
        return false;
      };
      sz::CodebookDrift codebooks;
      std::unique_ptr<sz::HostSlots> mine;  // one thread: the interleaving is this one
      ASSERT_EQ(sz::HostSlots::create(proxy, sz::proxyChannelSource(proxy, 0), closing, 1, 2,
                                      sz::HostSlotConfig{0, kSlice, 1, 5000, true, nullptr, false}, &codebooks, &mine),
                szSuccess) << szGetLastError(nullptr);
      std::vector<uint16_t> got(n, 0xA5A5);
      EXPECT_EQ(mine->run({hostRequest(false, 0, got, false)}, &done), szSuccess) << szGetLastError(nullptr);
      EXPECT_TRUE(raised);
      EXPECT_TRUE(got == kvLike(n, 8)) << "received bits differ";
    });
  }
}

// SZ_AUTH_DATA / SZ_ENCRYPT on a channel whose slots the proxy seals (the tcp wire's device
// channel: the kernels fill pinned slots): the host slots here seal nothing, the proxy seals each
// slot it ships and opens each that lands. Bit-exact, frames and raw; encrypted, the bytes on the
// wire are not the slice's; authenticated only, they are, with a tag.
TEST(FakeWire, TheProxySealsTheSlotsItShips) {
  const size_t n = 9 * kSlice / 2 + 321;
  for (bool encrypt : {false, true})
    for (bool frames : {true, false}) {
      SCOPED_TRACE(std::string(encrypt ? "encrypt" : "auth") + (frames ? ", frames" : ", raw"));
      onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy*, sz::HostSlots* slots) {
        std::vector<sz::SlotCompletion> done;
        if (rank == 0) {
          std::vector<uint16_t> want = kvLike(n, 9);
          ASSERT_EQ(slots->run({hostRequest(true, 1, want, frames)}, &done), szSuccess) << szGetLastError(nullptr);
        } else {
          std::vector<uint16_t> got(n, 0xA5A5);
          ASSERT_EQ(slots->run({hostRequest(false, 0, got, false)}, &done), szSuccess) << szGetLastError(nullptr);
          EXPECT_TRUE(got == kvLike(n, 9)) << "received bits differ";
        }
      }, true, encrypt);
      ASSERT_GE(gNets.size(), 1u);
      const std::vector<uint8_t>& m = gNets[0]->first;  // the first slot as it travelled
      ASSERT_GT(m.size(), sz::kSlotHeaderBytes + 64);
      sz::SlotHeader h;
      memcpy(&h, m.data(), sizeof(h));
      EXPECT_TRUE(h.flags & sz::kSlotMac);
      EXPECT_EQ(bool(h.flags & sz::kSlotSealed), encrypt);
      if (!frames) {  // a raw slice's first elements, as sent
        const std::vector<uint16_t> want = kvLike(32, 9);
        EXPECT_EQ(memcmp(m.data() + sz::kSlotHeaderBytes, want.data(), 64) == 0, !encrypt);
      }
    }
}

// Rank 0 sends 4.5 slices to rank 1 while `tamper` changes the net's messages on the way; returns
// both ranks' results and checks that nothing wrong landed (slices before the changed one may).
std::vector<szResult_t> tamperedTransfer(bool seal, bool encrypt, const std::function<void(FakeNet&)>& tamper) {
  const size_t n = 9 * kSlice / 2;
  std::vector<szResult_t> results(2, szSuccess);
  onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy*, sz::HostSlots* slots) {
    std::vector<sz::SlotCompletion> done;
    std::vector<uint16_t> buf = rank == 0 ? kvLike(n, 4) : std::vector<uint16_t>(n, 0);
    results[size_t(rank)] = slots->run({hostRequest(rank == 0, 1 - rank, buf, false)}, &done);
    if (rank == 1) {
      const std::vector<uint16_t> want = kvLike(n, 4);
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i) wrong += buf[i] != 0 && buf[i] != want[i];
      EXPECT_EQ(wrong, 0u);
    }
  }, seal, encrypt, [&] {
    std::lock_guard<std::mutex> netsLock(gNetsMu);
    std::lock_guard<std::mutex> lock(gNets[0]->mu);
    tamper(*gNets[0]);
  });
  return results;
}

// One bit flipped on the way in a sealed slot: the receiving proxy refuses it, the receive fails
// with szCorruptFrame and the sender learns it (szRemoteError); no flipped byte reaches the buffer.
TEST(FakeWire, ASlotChangedOnTheWayIsRefusedByTheProxy) {
  for (bool encrypt : {false, true}) {
    SCOPED_TRACE(encrypt ? "encrypt" : "auth");
    const std::vector<szResult_t> results = tamperedTransfer(true, encrypt, [](FakeNet& net) { net.flipAt = 2; });
    EXPECT_EQ(results[1], szCorruptFrame);
    EXPECT_EQ(results[0], szRemoteError);
  }
}

// A slot whose header says its slice stayed in the sender's buffer (kSlotDirect, which only the
// ipc wire's kernels between threads of one GPU may use) is corrupt on a host channel: the
// receiver reads nothing at the address it names, fails with szCorruptFrame, and the sender
// learns it (szRemoteError).
TEST(FakeWire, ADirectSliceOnAHostChannelIsCorrupt) {
  const std::vector<szResult_t> results = tamperedTransfer(false, false, [](FakeNet& net) { net.directAt = 1; });
  EXPECT_EQ(results[1], szCorruptFrame);
  EXPECT_EQ(results[0], szRemoteError);
}

// A pair's host-channel ring and words are allocated at its first operations, not at create
// (SlotProxyChannel::connectAtInit false): none before, both ends after; a receiver that comes
// late (its ends made 300 ms after the sender's slots went out, which waited in the wire) gets
// every bit.
TEST(FakeWire, APairsSlotsAreMadeAtItsFirstOperation) {
  const size_t n = 9 * kSlice / 2 + 7;
  std::vector<uint64_t> before(2), after(2);
  onTwoRanks(&kFakeWire, &kFakeWire, [&](int rank, sz::SlotProxy* proxy, sz::HostSlots* slots) {
    before[size_t(rank)] = proxy->slotBytes();
    std::vector<sz::SlotCompletion> done;
    if (rank == 0) {
      std::vector<uint16_t> want = kvLike(n, 3);
      ASSERT_EQ(slots->run({hostRequest(true, 1, want, true)}, &done), szSuccess) << szGetLastError(nullptr);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::vector<uint16_t> got(n, 0);
      ASSERT_EQ(slots->run({hostRequest(false, 0, got, false)}, &done), szSuccess) << szGetLastError(nullptr);
      EXPECT_TRUE(got == kvLike(n, 3)) << "received bits differ";
    }
    after[size_t(rank)] = proxy->slotBytes();
  });
  const uint64_t end = kSlots * sz::slotStride(kSlice);  // a ring, without its words
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(before[size_t(r)], 0u) << "rank " << r;
    EXPECT_GE(after[size_t(r)], 2 * end) << "rank " << r;
    EXPECT_LT(after[size_t(r)], 3 * end) << "rank " << r;
  }
}

TEST(FakeWire, TheProxyRefusesAWireWithoutMessages) {
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  szBootstrap* b = nullptr;
  ASSERT_EQ(szBootstrapInit(id, 0, 1, 20000, &b), szSuccess) << szGetLastError(nullptr);
  std::unique_ptr<sz::SlotProxy> proxy;
  const sz::SlotProxyChannel areas{&kAreaWire, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, {}};
  EXPECT_EQ(sz::SlotProxy::create(b, &kFakeWire, {areas}, &proxy), szInternalError);
  EXPECT_NE(std::strstr(szGetLastError(nullptr), "message wire"), nullptr) << szGetLastError(nullptr);
  const sz::SlotProxyChannel ok{&kFakeWire, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, {}};
  EXPECT_EQ(sz::SlotProxy::create(b, &kAreaWire, {ok}, &proxy), szInternalError) << "a control wire without messages";
  EXPECT_EQ(proxy, nullptr);
  szBootstrapClose(b);
}

TEST(FakeWire, AChannelServesItsPairsOnly) {
  // Three ranks; the second channel serves the pair of ranks 0 and 1 only (wire_choice.h gives
  // each pair one wire): they get its slots, rank 2 none, and asking for them is an error.
  {
    std::lock_guard<std::mutex> lock(gNetsMu);
    gNets.clear();
  }
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      tConnects = 0;
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, 3, 20000, &b), szSuccess) << szGetLastError(nullptr);
      const sz::SlotProxyChannel all{&kFakeWire, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, {}};
      std::vector<uint8_t> serves(3, 0);  // this rank's side of the pair (0, 1)
      if (r < 2) serves[size_t(1 - r)] = 1;
      const sz::SlotProxyChannel pair{&kFakeWire, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, serves};
      std::unique_ptr<sz::SlotProxy> proxy;
      ASSERT_EQ(sz::SlotProxy::create(b, &kFakeWire, {all, pair}, &proxy), szSuccess) << szGetLastError(nullptr);
      for (int peer = 0; peer < 3; ++peer) {
        if (peer == r) continue;
        sz::SlotChannel ch{};
        EXPECT_EQ(proxy->channel(0, peer, 1, &ch), szSuccess);
        const bool served = r != 2 && peer != 2;
        EXPECT_EQ(proxy->channel(1, peer, 1, &ch), served ? szSuccess : szInvalidArgument) << r << " with " << peer;
        if (served) {
          EXPECT_NE(ch.ring, nullptr);
        }
        EXPECT_TRUE(proxy->flushed(1, peer, 0));
      }
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      // The first channel's wire breaks: each peer breaks, its served channels' words say so
      // (szRemoteError), and the channel it does not serve has none to touch.
      {
        std::lock_guard<std::mutex> netsLock(gNetsMu);
        std::lock_guard<std::mutex> lock(gNets[0]->mu);
        gNets[0]->failing = true;
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
      while (std::chrono::steady_clock::now() < until) proxy->progress();
      for (int peer = 0; peer < 3; ++peer) {
        if (peer == r) continue;
        sz::SlotChannel ch{};
        ASSERT_EQ(proxy->channel(0, peer, 1, &ch), szSuccess);
        EXPECT_EQ(*ch.localError, szRemoteError) << r << " with " << peer;
        if (proxy->channel(1, peer, 1, &ch) == szSuccess) {
          EXPECT_EQ(*ch.localError, szRemoteError) << r << " with " << peer << ", the pair's channel";
        }
      }
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      proxy.reset();
      szBootstrapClose(b);
    });
  for (std::thread& t : threads) t.join();
}

}  // namespace
