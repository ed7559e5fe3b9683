// Host buffers over tcp without copies: a raw slice leaves from its caller's buffer (the proxy ships
// the slot's header and the payload in place as one message) and, once a receive's first slice
// arrived raw, its later slices land straight in its buffer. Ranks as threads, each with a slot
// proxy over the tcp wire and host slots on it (src/proto/slot_proxy.h, host_slots.h). Nothing
// touches a caller's buffer after its call returned: a receive that fails while the wire holds
// receives posted into its buffer has the pair failed (SlotProxy::releasePayloads), a pair the
// proxy breaks for a reason of its own drops the wire's requests too, and a peer's credit is
// applied only once the send it covers has left the buffer. Mixed content (raw and frames in
// place, a partial tail, segments, two operations each way in one group) stays bit-exact. Raw runs
// leave the pool threads asleep.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "base/bootstrap.h"
#include "host_request.h"
#include "src/proto/host_slots.h"
#include "src/proto/slot_proxy.h"
#include "transport/slot_words.h"
#include "transport/wire.h"

namespace {

using sztest::hostRequest;

constexpr uint64_t kSlice = 64 << 10;
constexpr uint32_t kSlots = 4;

// The control wire: tcp, with each rank's connection kept so that a test can forge messages.
void* gCtrl[8];
szResult_t captureConnect(szBootstrap* b, const szWireConfig& c, void** comm) {
  szResult_t r = szWireTcp.connect(b, c, comm);
  if (r == szSuccess) gCtrl[szBootstrapRank(b)] = *comm;
  return r;
}
const szWire kCtrlWire = [] {
  szWire w = szWireTcp;
  w.connect = captureConnect;
  return w;
}();

struct Ctrl {  // slot_proxy.cc's control message
  uint32_t kind;
  int32_t code;
  uint64_t step;
  uint32_t channel;
  uint32_t pad;
};

void sendCtrl(int from, int to, Ctrl m) {
  static Ctrl keep[8];
  keep[from] = m;
  szWireRequest* r = nullptr;
  ASSERT_EQ(szWireIsend(&szWireTcp, gCtrl[from], to, &keep[from], sizeof(Ctrl), &r), szSuccess);
  int done = 0;
  size_t got = 0;
  while (!done) ASSERT_EQ(szWireTcp.test(r, &done, &got), szSuccess);
}

// `nranks` ranks as threads, each with a slot proxy whose host channel (`slice`-byte slices,
// `nslots` slots) and control ride tcp, and host slots on it (operations time out after
// `timeoutMs`); fn(rank, bootstrap, proxy, slots) on each.
void onRanks(int nranks, uint64_t slice, uint32_t nslots, int timeoutMs,
             const std::function<void(int, szBootstrap*, sz::SlotProxy*, sz::HostSlots*)>& fn) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r)
    threads.emplace_back([&, r] {
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, nranks, 20000, &b), szSuccess) << szGetLastError(nullptr);
      std::unique_ptr<sz::SlotProxy> proxy;
      const sz::SlotProxyChannel host{&szWireTcp, sz::SlotMemory::kHost, slice, nslots, 0, nullptr, {}};
      ASSERT_EQ(sz::SlotProxy::create(b, &kCtrlWire, {host}, &proxy), szSuccess) << szGetLastError(nullptr);
      sz::CodebookDrift codebooks;
      std::unique_ptr<sz::HostSlots> slots;
      const sz::HostSlotConfig cfg{0, slice, 2, timeoutMs, false, nullptr, false};
      ASSERT_EQ(sz::HostSlots::create(proxy.get(), sz::proxyChannelSource(proxy.get(), 0),
                                      sz::proxyFlushed(proxy.get(), 0), r, nranks, cfg, &codebooks, &slots),
                szSuccess) << szGetLastError(nullptr);
      fn(r, b, proxy.get(), slots.get());
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      slots.reset();
      proxy.reset();
      szBootstrapClose(b);
    });
  for (std::thread& t : threads) t.join();
}

// KV-like BF16 (frames compress it) and random 15-bit words (frames would not pay).
std::vector<uint16_t> compressible(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t x = seed * 2654435761u + 11;
  for (uint16_t& e : v) {
    x = x * 1664525u + 1013904223u;
    e = uint16_t(((x >> 20) & 1) << 15 | (120 + (x >> 28) % 8) << 7 | ((x >> 8) & 0x7F));
  }
  return v;
}

std::vector<uint16_t> incompressible(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t x = seed * 2654435761u + 11;
  for (uint16_t& e : v) e = uint16_t(((x = x * 1664525u + 1013904223u) >> 16) & 0x7FFF);
  return v;
}

// Publishes step `step` of a raw operation of `count` elements in `slices` slices of `slice`
// bytes on `ch`: a manual sender (the host slots' sender, minus its waits).
void publish(const sz::SlotChannel& ch, uint64_t slice, uint64_t step, uint64_t count, uint64_t slices,
             const uint16_t* data) {
  const uint32_t j = sz::slotOf(step, ch.nslots);
  uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  const uint64_t off = step * slice, bytes = std::min<uint64_t>(slice, count * 2 - off);
  sz::SlotHeader h{};
  h.bytes = bytes;
  h.opCount = count;
  h.opSlices = slices;
  h.opType = szBfloat16;
  h.step = step;
  h.version = sz::kSlotProtocolVersion;
  memcpy(slot, &h, sizeof(h));
  memcpy(slot + sz::kSlotHeaderBytes, reinterpret_cast<const uint8_t*>(data) + off, bytes);
  if (ch.payloads) ch.payloads[j].data = nullptr;
  __atomic_store_n(&ch.signals[j].bytes, bytes, __ATOMIC_RELAXED);
  sz::slotStoreRelease(&ch.signals[j].ready, sz::readyValue(step));
}

void driveFor(sz::SlotProxy* proxy, int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) proxy->progress();
}

TEST(HostSlotsZeroCopy, RawSlicesLeaveFromAndLandInTheCallersBuffers) {
  const size_t n = 10 * kSlice / 2 + 77;  // elements: 10 slices and a bit, the ring of 4 wrapped
  for (bool frames : {false, true}) {
    SCOPED_TRACE(frames ? "frames" : "raw");
    onRanks(2, kSlice, kSlots, 10000, [&](int rank, szBootstrap*, sz::SlotProxy* proxy, sz::HostSlots* slots) {
      std::vector<uint16_t> buf = rank == 0 ? compressible(n, 3) : std::vector<uint16_t>(n, 0xABCD);
      std::vector<sz::SlotCompletion> done;
      ASSERT_EQ(slots->run({hostRequest(rank == 0, 1 - rank, buf, frames)}, &done), szSuccess) << szGetLastError(nullptr);
      uint64_t shipped = 0, landed = 0;
      proxy->callerBytes(&shipped, &landed);
      if (rank == 0) {
        // Every raw slice left from the buffer; with frames only the tail of 77 elements, whose
        // frame would outgrow it (a frame is never larger than its raw slice).
        EXPECT_EQ(shipped, frames ? 77u * 2 : n * 2);
        EXPECT_EQ(landed, 0u);
        return;
      }
      EXPECT_TRUE(buf == compressible(n, 3)) << "the received elements differ";
      EXPECT_EQ(shipped, 0u);
      if (frames) {
        EXPECT_EQ(landed, 0u);  // frames land in the slots and decode from there
      } else {
        // The slices after the first whose receives were posted after it arrived (the proxy had
        // posted the ring's first slots before): at least the last 10 - kSlots.
        EXPECT_GE(landed, (10 - kSlots) * kSlice);
        EXPECT_LE(landed, n * 2 - kSlice);
      }
    });
  }
}

// Raw runs, the receives among them able to decode (SZ_CODEC=auto's receives whose sender chose
// raw), never wake the pool threads: woken for nothing, they cost auto's raw 1 MiB exchanges
// 12-30 % against codec off on two cores. A run whose sends encode wakes them once at its start.
TEST(HostSlotsZeroCopy, RawRunsLeaveThePoolAsleep) {
  const size_t n = 4 * kSlice / 2;  // elements: 4 slices
  onRanks(2, kSlice, kSlots, 10000, [&](int rank, szBootstrap*, sz::SlotProxy*, sz::HostSlots* slots) {
    std::vector<uint16_t> out = compressible(n, 5), in(n, 0);
    for (int k = 0; k < 5; ++k) {
      std::vector<sz::SlotCompletion> done;
      ASSERT_EQ(slots->run({hostRequest(true, 1 - rank, out, false), hostRequest(false, 1 - rank, in, false)}, &done),
                szSuccess) << szGetLastError(nullptr);
      ASSERT_TRUE(in == out) << "exchange " << k << ": the received elements differ";
    }
    EXPECT_EQ(slots->poolWakes(), 0u) << "raw exchanges woke the pool";
    std::vector<sz::SlotCompletion> done;
    ASSERT_EQ(slots->run({hostRequest(true, 1 - rank, out, true), hostRequest(false, 1 - rank, in, false)}, &done),
              szSuccess) << szGetLastError(nullptr);
    EXPECT_TRUE(in == out) << "the exchange of frames differs";
    EXPECT_EQ(slots->poolWakes(), 1u) << "a run that encodes wakes the pool once, at its start";
  });
}

// The sender publishes the first slice and stalls; the receive times out with a receive posted
// into its buffer (the ring's first slots were posted before the first slice arrived, the next
// one after, in place). After it returned, the sender publishes the slices its credits allow and
// both proxies keep moving: none of it may reach the buffer (the pair was failed).
TEST(HostSlotsZeroCopy, AFailedReceiveLetsGoOfItsBuffer) {
  const uint64_t slices = 12, n = slices * kSlice / 2;
  onRanks(2, kSlice, kSlots, 600, [&](int rank, szBootstrap* b, sz::SlotProxy* proxy, sz::HostSlots* slots) {
    const std::vector<uint16_t> data = compressible(n, 5);
    if (rank == 1) {
      std::vector<uint16_t> buf(n, 0x1234);
      std::vector<sz::SlotCompletion> done;
      EXPECT_EQ(slots->run({hostRequest(false, 0, buf, false)}, &done), szTimeout);
      EXPECT_TRUE(std::equal(data.begin(), data.begin() + kSlice / 2, buf.begin())) << "the first slice";
      const std::vector<uint16_t> after = buf;
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // the sender goes on
      driveFor(proxy, 400);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      EXPECT_TRUE(buf == after) << "the sender's later slices reached the buffer after the receive returned";
      uint64_t shipped = 0, landed = 0;
      proxy->callerBytes(&shipped, &landed);
      EXPECT_EQ(landed, 0u);
      return;
    }
    sz::SlotChannel ch{};
    ASSERT_EQ(proxy->channel(0, 1, 1, &ch), szSuccess) << szGetLastError(nullptr);
    publish(ch, kSlice, 0, n, slices, data.data());
    std::atomic<bool> stop{false};
    std::thread driver([&] {
      while (!stop) proxy->progress();
    });
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // the receive has returned
    stop = true;
    driver.join();
    // The slots the credits free (the receiver consumed the first slice): steps 1 to kSlots.
    for (uint64_t step = 1; step <= kSlots; ++step) {
      ASSERT_TRUE(sz::slotFree(sz::slotLoadAcquire(&ch.credits[sz::slotOf(step, ch.nslots)]), step)) << step;
      publish(ch, kSlice, step, n, slices, data.data());
    }
    driveFor(proxy, 400);
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
  });
}

// The proxy breaks a pair for a reason of its own (here: a control message no proxy sends) while
// the tcp data wire holds a receive posted into a receive's buffer. The break drops the wire's
// requests with the peer too: else the receive would return with that request live, and a pass
// that tests another peer's requests on the same tcp connections (rank 2's here) would move the
// peer's later slices into the returned buffer.
TEST(HostSlotsZeroCopy, APairTheProxyBreaksDropsTheWiresRequestsIntoBuffers) {
  const uint64_t slices = 12, n = slices * kSlice / 2;
  onRanks(3, kSlice, kSlots, 3000, [&](int rank, szBootstrap* b, sz::SlotProxy* proxy, sz::HostSlots* slots) {
    const std::vector<uint16_t> data = incompressible(n, 5);
    // Ranks 0 and 2 exchange once: their pair is connected and rank 0's proxy keeps receives
    // from rank 2 posted (and tested) from then on.
    std::vector<uint16_t> small(1000, 7);
    std::vector<sz::SlotCompletion> done;
    if (rank != 1) { ASSERT_EQ(slots->run({hostRequest(rank == 0, 2 - rank, small, false)}, &done), szSuccess); }
    if (rank == 0) {
      std::vector<uint16_t> buf(n, 0x1234);
      EXPECT_EQ(slots->run({hostRequest(false, 1, buf, false)}, &done), szRemoteError) << szGetLastError(nullptr);
      const std::vector<uint16_t> after = buf;
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // rank 1 goes on
      driveFor(proxy, 500);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      size_t changed = 0;
      for (size_t i = 0; i < n; ++i) changed += buf[i] != after[i];
      EXPECT_EQ(changed, 0u) << "elements of the returned receive buffer written after it returned";
      return;
    }
    if (rank == 2) {
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      driveFor(proxy, 500);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      return;
    }
    // Rank 1: the first slice, raw; once rank 0 consumed it (its credit: rank 0 posted step
    // kSlots into its buffer before sending it), a control message that breaks the pair.
    sz::SlotChannel ch{};
    ASSERT_EQ(proxy->channel(0, 0, 1, &ch), szSuccess);
    publish(ch, kSlice, 0, n, slices, data.data());
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!sz::slotFree(sz::slotLoadAcquire(&ch.credits[0]), kSlots) && std::chrono::steady_clock::now() < giveUp)
      proxy->progress();
    ASSERT_TRUE(sz::slotFree(sz::slotLoadAcquire(&ch.credits[0]), kSlots));
    sendCtrl(1, 0, Ctrl{7, 0, 0, 0, 0});
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);  // rank 0's receive returned
    for (uint64_t step = 1; step <= kSlots; ++step) publish(ch, kSlice, step, n, slices, data.data());
    driveFor(proxy, 500);
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
  });
}

// A (hostile) peer credits a step whose message the tcp wire is still reading from the caller's
// buffer (16 MiB: more than the sockets hold). The credit is held until the send is through, so
// the send does not complete on it (it times out, and the pair is failed): what the caller
// writes into its buffer after the call returned never reaches the peer.
TEST(HostSlotsZeroCopy, ACreditForBytesNotYetSentDoesNotCompleteTheSend) {
  constexpr uint64_t kBigSlice = 16 << 20;  // one slice, more than the sockets hold
  const uint64_t n = kBigSlice / 2;
  onRanks(2, kBigSlice, 2, 2000, [&](int rank, szBootstrap* b, sz::SlotProxy* proxy, sz::HostSlots* slots) {
    std::vector<sz::SlotCompletion> done;
    if (rank == 0) {
      std::vector<uint16_t> buf = incompressible(n, 9);
      const szResult_t res = slots->run({hostRequest(true, 1, buf, false)}, &done);
      EXPECT_NE(res, szSuccess) << "the send completed on a credit for bytes the wire had not sent";
      memset(buf.data(), 0xEE, n * 2);  // the caller's buffer is its own again
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      driveFor(proxy, 1500);
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0 shipped; its socket is full
    sendCtrl(1, 0, Ctrl{1, 0, 0, 0, 0});  // "drained step 0"
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
    sz::SlotChannel ch{};
    ASSERT_EQ(proxy->channel(0, 0, 0, &ch), szSuccess);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (sz::slotLoadAcquire(&ch.signals[0].ready) != 1 && std::chrono::steady_clock::now() < giveUp) proxy->progress();
    const uint8_t* p = ch.ring + sz::kSlotHeaderBytes;
    size_t ee = 0;
    for (uint64_t i = 0; i + 1 < n * 2; i += 2) ee += p[i] == 0xEE && p[i + 1] == 0xEE;
    EXPECT_EQ(ee, 0u) << "elements the sender wrote after its szSend returned reached the peer";
    driveFor(proxy, 200);
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
  });
}

sz::Op segmented(bool send, int peer, std::vector<std::vector<uint16_t>>& bufs, bool frames) {
  sz::Op q;
  q.api = send ? "szSendv" : "szRecvv";
  q.send = send;
  q.peer = peer;
  q.type = szBfloat16;
  q.frames = frames;
  q.mayDecode = !send;
  uint64_t off = 0;
  for (auto& b : bufs) {
    q.segs.push_back(sz::SlotSegment{reinterpret_cast<uint8_t*>(b.data()), b.size() * 2, off});
    q.segGroups.push_back(0);
    off += b.size() * 2;
  }
  q.count = off / 2;
  return q;
}


// Mixed content: the first slice incompressible (raw: later slices register their places), later
// ones compressible (frames landing in place, decoded from a copy), a partial tail; two sends
// and two receives with the same peer in one group, one of them over segments whose boundaries
// fall inside slices; the ring wraps several times.
TEST(HostSlotsZeroCopy, MixedFramesRawAndSegmentsInOneGroup) {
  const size_t half = kSlice / 2;
  std::vector<uint16_t> a = incompressible(half, 1), tail = compressible(9 * half + 333, 2);
  a.insert(a.end(), tail.begin(), tail.end());
  std::vector<uint16_t> b = compressible(3 * half, 3), braw = incompressible(2 * half + 5, 4);
  b.insert(b.begin(), braw.begin(), braw.end());
  for (bool frames : {true, false}) {
    onRanks(2, kSlice, 4, 10000, [&](int rank, szBootstrap*, sz::SlotProxy* proxy, sz::HostSlots* slots) {
      std::vector<sz::SlotCompletion> done;
      if (rank == 0) {
        std::vector<uint16_t> a0 = a;
        std::vector<std::vector<uint16_t>> bs = {std::vector<uint16_t>(b.begin(), b.begin() + 1000),
                                                 std::vector<uint16_t>(b.begin() + 1000, b.begin() + 50000),
                                                 std::vector<uint16_t>(b.begin() + 50000, b.end())};
        ASSERT_EQ(slots->run({hostRequest(true, 1, a0, frames), segmented(true, 1, bs, frames)}, &done), szSuccess)
            << szGetLastError(nullptr);
        return;
      }
      std::vector<uint16_t> ra(a.size(), 0xABCD);
      std::vector<std::vector<uint16_t>> rb = {std::vector<uint16_t>(40000, 1), std::vector<uint16_t>(40000, 2),
                                               std::vector<uint16_t>(b.size() - 80000, 3)};
      ASSERT_EQ(slots->run({hostRequest(false, 0, ra, false), segmented(false, 0, rb, false)}, &done), szSuccess)
          << szGetLastError(nullptr);
      EXPECT_TRUE(ra == a) << "a differs";
      std::vector<uint16_t> got;
      for (auto& s : rb) got.insert(got.end(), s.begin(), s.end());
      EXPECT_TRUE(got == b) << "b differs";
      uint64_t shipped = 0, landed = 0;
      proxy->callerBytes(&shipped, &landed);
      EXPECT_GT(landed, 0u) << "no slice landed in place";
    });
  }
}

}  // namespace
