// The slot protocol's rules (kernels/slot_format.h) without a GPU: ring and credit arithmetic,
// the receiver's verdict on slot headers, and a sender and a receiver thread running the
// protocol over host memory exactly as the kernels do (credits, ready values, in-band headers),
// including a receiver that stops while holding slots.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/slot_format.h"

namespace {

using namespace sz;

TEST(SlotProtocol, SizesAndSlices) {
  EXPECT_EQ(opSlices(0, 4096), 1u);  // an empty operation still carries its count and type
  EXPECT_EQ(opSlices(1, 4096), 1u);
  EXPECT_EQ(opSlices(4096, 4096), 1u);
  EXPECT_EQ(opSlices(4097, 4096), 2u);
  EXPECT_EQ(opSlices(uint64_t(1) << 30, 256 << 10), 4096u);
  EXPECT_EQ(slotStride(256 << 10) % 256, 0u);
  EXPECT_GE(slotStride(256 << 10), kSlotHeaderBytes + SZ_FRAME_HEADER_BYTES + (256 << 10));
  EXPECT_LT(slotStride(256 << 10), kSlotHeaderBytes + SZ_FRAME_HEADER_BYTES + (256 << 10) + 256);
}

TEST(SlotProtocol, SmallOperationsAreCutFiner) {
  const uint64_t max = 256 << 10;
  EXPECT_EQ(opSliceBytes(0, max), kMinSlice);
  EXPECT_EQ(opSliceBytes(1000, max), kMinSlice);
  EXPECT_EQ(opSliceBytes(4 << 20, max), uint64_t(64) << 10);           // 64 slices of 64 KiB
  EXPECT_EQ(opSliceBytes(uint64_t(1) << 30, max), max);                // large: the channel's slice
  EXPECT_EQ(opSliceBytes((4 << 20) + 2, max) % kSliceAlign, 0u);       // whole elements, aligned
  EXPECT_LE(opSlices((4 << 20) + 2, opSliceBytes((4 << 20) + 2, max)), kTargetSlices);
  EXPECT_EQ(opSliceBytes(1000, 8192), 8192u);                          // never above the channel's slice
}

TEST(SlotProtocol, CreditsGateReuse) {
  const uint32_t n = 4;
  // Steps 0..3 find their slots free at the start; step 4 needs step 0's credit.
  for (uint32_t s = 0; s < n; ++s) EXPECT_TRUE(slotFree(initialCredit(slotOf(s, n)), s));
  EXPECT_FALSE(slotFree(initialCredit(slotOf(4, n)), 4));
  EXPECT_TRUE(slotFree(creditAfter(0, n), 4));
  EXPECT_FALSE(slotFree(creditAfter(0, n), 8));
  EXPECT_EQ(slotOf(4, n), 0u);
  EXPECT_NE(readyValue(3), readyValue(7));  // a slot's next use never looks ready early
  EXPECT_NE(readyValue(0), 0u);             // zeroed memory is not ready
}

SlotHeader header(uint64_t count, int type, uint64_t slices, uint64_t bytes, uint32_t flags, uint64_t step = 7) {
  SlotHeader h{};
  h.step = step;
  h.opCount = count;
  h.opType = uint32_t(type);
  h.opSlices = slices;
  h.bytes = bytes;
  h.flags = flags;
  h.version = kSlotProtocolVersion;
  return h;
}

TEST(SlotProtocol, ReceiverVerdicts) {
  const uint64_t cap = 1000;
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 200, 0), 7, 100, szBfloat16, 1, 200, cap), 0);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 150, kSlotFrame), 7, 100, szBfloat16, 1, 200, cap), 0);
  EXPECT_EQ(checkSlotHeader(header(101, szBfloat16, 1, 200, 0), 7, 100, szBfloat16, 1, 200, cap), szInvalidUsage);
  EXPECT_EQ(checkSlotHeader(header(100, szFloat16, 1, 200, 0), 7, 100, szBfloat16, 1, 200, cap), szInvalidUsage);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 2, 200, 0), 7, 100, szBfloat16, 1, 200, cap), szInvalidUsage);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 199, 0), 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 1001, kSlotFrame), 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 200, 0x20), 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
  // A slot that holds another step (a proxy or wire out of order) is corrupt, never decoded.
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 200, 0, 8), 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 150, kSlotFrame, 6), 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
  // A CRC flag is allowed (the host channel checks the CRC itself); a header of another protocol
  // version is corrupt whatever else it says.
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 200, kSlotCrc), 7, 100, szBfloat16, 1, 200, cap), 0);
  SlotHeader old = header(100, szBfloat16, 1, 200, 0);
  old.version = kSlotProtocolVersion - 1;
  EXPECT_EQ(checkSlotHeader(old, 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame);
}

// A raw slice left in the sender's buffer (kSlotDirect) is read from `src` only on a channel
// between threads of one process on one GPU, only whole, and never beside another flag: on any
// other channel (a peer process, a proxy, a host channel) the address means nothing here.
TEST(SlotProtocol, ADirectSliceOnlyWhereTheChannelReadsDirect) {
  const uint64_t cap = 1000;
  SlotHeader d = header(100, szBfloat16, 1, 200, kSlotDirect);
  d.src = 0x7f0000001000ull;
  EXPECT_EQ(checkSlotHeader(d, 7, 100, szBfloat16, 1, 200, cap, true), 0);
  EXPECT_EQ(checkSlotHeader(d, 7, 100, szBfloat16, 1, 200, cap, false), szCorruptFrame);
  EXPECT_EQ(checkSlotHeader(d, 7, 100, szBfloat16, 1, 200, cap), szCorruptFrame) << "the default: no direct channel";
  EXPECT_EQ(checkSlotHeader(d, 7, 100, szBfloat16, 1, 199, cap, true), szCorruptFrame) << "a slice of another size";
  SlotHeader framed = d;
  framed.flags = kSlotDirect | kSlotFrame;
  EXPECT_EQ(checkSlotHeader(framed, 7, 100, szBfloat16, 1, 200, cap, true), szCorruptFrame);
  SlotHeader crc = d;
  crc.flags = kSlotDirect | kSlotCrc;
  EXPECT_EQ(checkSlotHeader(crc, 7, 100, szBfloat16, 1, 200, cap, true), szCorruptFrame);
  SlotHeader nowhere = d;
  nowhere.src = 0;
  EXPECT_EQ(checkSlotHeader(nowhere, 7, 100, szBfloat16, 1, 200, cap, true), szCorruptFrame);
  SlotHeader wraps = d;  // a slice that would run past the end of the address space
  wraps.src = ~uint64_t(0) - 100;
  EXPECT_EQ(checkSlotHeader(wraps, 7, 100, szBfloat16, 1, 200, cap, true), szCorruptFrame);
  // The verdicts on what is not direct stay those of any channel.
  EXPECT_EQ(checkSlotHeader(d, 7, 101, szBfloat16, 1, 200, cap, true), szInvalidUsage);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 200, 0), 7, 100, szBfloat16, 1, 200, cap, true), 0);
  EXPECT_EQ(checkSlotHeader(header(100, szBfloat16, 1, 150, kSlotFrame), 7, 100, szBfloat16, 1, 200, cap, true), 0);
}

// Host memory standing in for the ring, the credits and the receiver's error word.
struct HostChannel {
  uint32_t nslots;
  uint64_t sliceBytes;
  std::vector<std::atomic<uint64_t>> ready, credits;
  std::vector<SlotHeader> headers;
  std::vector<std::vector<uint8_t>> payloads;
  std::atomic<int> error{0};
  HostChannel(uint32_t n, uint64_t slice)
      : nslots(n), sliceBytes(slice), ready(n), credits(n), headers(n), payloads(n, std::vector<uint8_t>(slice)) {
    for (uint32_t j = 0; j < n; ++j) {
      ready[j] = 0;
      credits[j] = initialCredit(j);
    }
  }
};

// Sends `msg` as steps [base, base + slices); false if the receiver's error word stopped it or
// a credit did not come within `spins` tries.
bool sendOp(HostChannel& ch, uint64_t base, const std::vector<uint8_t>& msg, int type, uint64_t count, long spins) {
  const uint64_t slices = opSlices(msg.size(), ch.sliceBytes);
  for (uint64_t i = 0; i < slices; ++i) {
    const uint64_t step = base + i;
    const uint32_t j = slotOf(step, ch.nslots);
    long tries = 0;
    while (!slotFree(ch.credits[j].load(std::memory_order_acquire), step)) {
      if (ch.error.load() != 0 || ++tries > spins) return false;
      std::this_thread::yield();
    }
    const uint64_t off = i * ch.sliceBytes, n = std::min<uint64_t>(ch.sliceBytes, msg.size() - off);
    memcpy(ch.payloads[j].data(), msg.data() + off, n);
    ch.headers[j] = header(count, type, slices, n, 0, step);
    ch.ready[j].store(readyValue(step), std::memory_order_release);
  }
  return true;
}

// Receives into `out`; returns the verdict (0, the mismatch error, or -1 when the sender stopped).
int recvOp(HostChannel& ch, uint64_t base, std::vector<uint8_t>& out, int type, uint64_t count, long spins,
           uint64_t stopAfter = ~uint64_t(0)) {
  const uint64_t slices = opSlices(out.size(), ch.sliceBytes);
  for (uint64_t i = 0; i < slices && i < stopAfter; ++i) {
    const uint64_t step = base + i;
    const uint32_t j = slotOf(step, ch.nslots);
    long tries = 0;
    while (ch.ready[j].load(std::memory_order_acquire) != readyValue(step)) {
      if (++tries > spins) return -1;
      std::this_thread::yield();
    }
    const uint64_t off = i * ch.sliceBytes, n = std::min<uint64_t>(ch.sliceBytes, out.size() - off);
    int v = checkSlotHeader(ch.headers[j], step, count, type, slices, n, ch.sliceBytes);
    if (v != 0) {
      ch.error = v;
      return v;
    }
    memcpy(out.data() + off, ch.payloads[j].data(), n);
    ch.credits[j].store(creditAfter(step, ch.nslots), std::memory_order_release);
  }
  return 0;
}

TEST(SlotProtocol, ThreadsMoveMessagesInOrder) {
  HostChannel ch(3, 64);
  std::vector<std::vector<uint8_t>> msgs;
  for (size_t k = 0; k < 20; ++k) {
    std::vector<uint8_t> m(k * 37 % 500);
    for (size_t i = 0; i < m.size(); ++i) m[i] = uint8_t(k * 31 + i);
    msgs.push_back(m);
  }
  std::thread sender([&] {
    uint64_t step = 0;
    for (const auto& m : msgs) {
      EXPECT_TRUE(sendOp(ch, step, m, szUint8, m.size(), 100000000));
      step += opSlices(m.size(), ch.sliceBytes);
    }
  });
  uint64_t step = 0;
  for (const auto& m : msgs) {
    std::vector<uint8_t> got(m.size(), 0xEE);
    EXPECT_EQ(recvOp(ch, step, got, szUint8, m.size(), 100000000), 0);
    EXPECT_EQ(got, m);
    step += opSlices(m.size(), ch.sliceBytes);
  }
  sender.join();
}

TEST(SlotProtocol, MismatchStopsBothSides) {
  HostChannel ch(2, 64);
  std::vector<uint8_t> msg(1000, 7), got(1001);
  bool sent = true;
  std::thread sender([&] { sent = sendOp(ch, 0, msg, szUint8, msg.size(), 100000000); });
  EXPECT_EQ(recvOp(ch, 0, got, szUint8, got.size(), 100000000), szInvalidUsage);
  sender.join();
  EXPECT_FALSE(sent);  // it saw the receiver's error word instead of waiting for credits
  EXPECT_EQ(ch.error.load(), szInvalidUsage);
}

TEST(SlotProtocol, ReceiverThatStopsHoldsTheSender) {
  HostChannel ch(4, 64);
  std::vector<uint8_t> msg(64 * 10, 1), got(msg.size());
  // The receiver drains 3 slices and stops: the sender can fill the 4 slots once more (steps
  // up to 3 + 4 = 7) and then finds no credit.
  std::thread receiver([&] { recvOp(ch, 0, got, szUint8, got.size(), 100000000, 3); });
  bool sent = sendOp(ch, 0, msg, szUint8, msg.size(), 200000);
  receiver.join();
  EXPECT_FALSE(sent);
  EXPECT_EQ(ch.ready[slotOf(6, 4)].load(), readyValue(6));
  EXPECT_NE(ch.ready[slotOf(7, 4)].load(), readyValue(7));
}

}  // namespace
