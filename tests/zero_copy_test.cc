// Host buffers over tcp without copies: a raw slice leaves from its caller's buffer (the proxy ships
// the slot's header and the payload in place as one message) and, once a receive's first slice
// arrived raw, its later slices land straight in its buffer. Two ranks as threads, each with a
// slot proxy over the tcp wire and host slots on it (src/proto/slot_proxy.h, host_slots.h). A
// receive that fails while the wire holds receives posted into its buffer has the pair failed
// (SlotProxy::releasePayloads), so nothing lands there after it returned.
#include <gtest/gtest.h>

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

std::vector<uint16_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t x = seed * 2654435761u + 11;
  for (uint16_t& e : v) {
    x = x * 1664525u + 1013904223u;
    e = uint16_t(((x >> 20) & 1) << 15 | (120 + (x >> 28) % 8) << 7 | ((x >> 8) & 0x7F));
  }
  return v;
}

// Two ranks as threads, each with a slot proxy whose host channel and control ride tcp, and host
// slots on it (operations time out after `timeoutMs`); fn(rank, bootstrap, proxy, slots) on each.
void onTwoRanks(int timeoutMs,
                const std::function<void(int, szBootstrap*, sz::SlotProxy*, sz::HostSlots*)>& fn) {
  setenv("SZ_SOCKET_IFNAME", "lo", 0);
  szUniqueId id;
  ASSERT_EQ(szBootstrapGetUniqueId(&id), szSuccess) << szGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      szBootstrap* b = nullptr;
      ASSERT_EQ(szBootstrapInit(id, r, 2, 20000, &b), szSuccess) << szGetLastError(nullptr);
      std::unique_ptr<sz::SlotProxy> proxy;
      const sz::SlotProxyChannel host{&szWireTcp, sz::SlotMemory::kHost, kSlice, kSlots, 0, nullptr, {}};
      ASSERT_EQ(sz::SlotProxy::create(b, &szWireTcp, {host}, &proxy), szSuccess) << szGetLastError(nullptr);
      sz::CodebookDrift codebooks;
      std::unique_ptr<sz::HostSlots> slots;
      const sz::HostSlotConfig cfg{0, kSlice, 2, timeoutMs, false, nullptr, false};
      ASSERT_EQ(sz::HostSlots::create(proxy.get(), sz::proxyChannelSource(proxy.get(), 0),
                                      sz::proxyFlushed(proxy.get(), 0), r, 2, cfg, &codebooks, &slots),
                szSuccess) << szGetLastError(nullptr);
      fn(r, b, proxy.get(), slots.get());
      EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
      slots.reset();
      proxy.reset();
      szBootstrapClose(b);
    });
  for (std::thread& t : threads) t.join();
}

TEST(HostSlotsZeroCopy, RawSlicesLeaveFromAndLandInTheCallersBuffers) {
  const size_t n = 10 * kSlice / 2 + 77;  // elements: 10 slices and a bit, the ring of 4 wrapped
  for (bool frames : {false, true}) {
    SCOPED_TRACE(frames ? "frames" : "raw");
    onTwoRanks(10000, [&](int rank, szBootstrap*, sz::SlotProxy* proxy, sz::HostSlots* slots) {
      std::vector<uint16_t> buf = rank == 0 ? pattern(n, 3) : std::vector<uint16_t>(n, 0xABCD);
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
      EXPECT_TRUE(buf == pattern(n, 3)) << "the received elements differ";
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

// Publishes step `step` of a raw operation of `count` elements in `slices` slices on `ch`: the
// manual sender of the test below (the host slots' sender, minus its waits).
void publish(const sz::SlotChannel& ch, uint64_t step, uint64_t count, uint64_t slices, const uint16_t* data) {
  const uint32_t j = sz::slotOf(step, ch.nslots);
  uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  const uint64_t off = step * kSlice, bytes = std::min<uint64_t>(kSlice, count * 2 - off);
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

// The sender publishes the first slice and stalls; the receive times out with a receive posted
// into its buffer (the ring's first slots were posted before the first slice arrived, the next
// one after, in place). After it returned, the sender publishes the slices its credits allow and
// both proxies keep moving: none of it may reach the buffer (the pair was failed).
TEST(HostSlotsZeroCopy, AFailedReceiveLetsGoOfItsBuffer) {
  const uint64_t slices = 12, n = slices * kSlice / 2;
  auto driveFor = [](sz::SlotProxy* proxy, int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) proxy->progress();
  };
  onTwoRanks(600, [&](int rank, szBootstrap* b, sz::SlotProxy* proxy, sz::HostSlots* slots) {
    const std::vector<uint16_t> data = pattern(n, 5);
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
    publish(ch, 0, n, slices, data.data());
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
      publish(ch, step, n, slices, data.data());
    }
    driveFor(proxy, 400);
    EXPECT_EQ(szBootstrapBarrier(b), szSuccess);
  });
}

}  // namespace
