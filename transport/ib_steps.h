// The ib wire's step bookkeeping (docs/PIPELINE.md, "The ib wire"): what the immediate of an
// RDMA write carries, how the receiving proxy turns it back into a slot and a step, which credits
// it forwards, and how many bytes a published slot puts on the wire. Pure arithmetic over the slot
// format (kernels/slot_format.h), unit-tested on the CPU (tests/ib_pure_test.cc).
//
// Steps of one slot follow each other strictly: step s + nslots of slot j is published only after
// the receiver drained step s. So the receiver knows the one step each slot can hold next, and
// the immediate needs only the slot; 12 low bits of the step ride along as a check. Writes of one
// channel may be striped over several queue pairs (one per NIC) and land out of step order: each
// slot still lands in order, which is all the kernels need.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "kernels/slot_format.h"
#include "splitzip.h"

namespace sz {

constexpr uint32_t kIbImmSlotBits = 20;
constexpr uint32_t kIbMaxSlots = 1u << kIbImmSlotBits;  // SZ_SLOT_COUNT's bound too
constexpr uint32_t kIbImmStepMask = (1u << (32 - kIbImmSlotBits)) - 1;

constexpr uint32_t ibImm(uint32_t slot, uint64_t step) {
  return slot | (uint32_t(step) & kIbImmStepMask) << kIbImmSlotBits;
}
constexpr uint32_t ibImmSlot(uint32_t imm) { return imm & (kIbMaxSlots - 1); }
constexpr bool ibImmStepMatches(uint32_t imm, uint64_t step) {
  return imm >> kIbImmSlotBits == (uint32_t(step) & kIbImmStepMask);
}

// The queue pair (stripe) that carries step `step` of a channel striped over `stripes`.
constexpr uint32_t ibStripeOf(uint64_t step, uint32_t stripes) { return uint32_t(step % stripes); }

// Bytes the sender writes for a published slot whose signal says `payload` bytes (the header and
// the payload, exactly), or 0 if that cannot fit a slot of `stride` bytes (a corrupt signal).
constexpr uint64_t ibWriteBytes(uint64_t payload, uint64_t stride) {
  return payload <= stride - kSlotHeaderBytes ? kSlotHeaderBytes + payload : 0;
}

// The receiving proxy's view of one channel: the step each slot holds next, and the steps that
// landed whose credits have not gone back yet (in landing order).
class IbLanding {
 public:
  explicit IbLanding(uint32_t nslots = 0) : nslots_(nslots), next_(nslots), free_(nslots) {
    for (uint32_t j = 0; j < nslots; ++j) next_[j] = free_[j] = j;
  }
  // A write with immediate `imm` landed: its slot and step. szRemoteError if the immediate names
  // no slot of the channel, or not the step that slot holds next, or a slot whose previous step
  // was not credited back yet (the peer broke the protocol: it wrote over a slot in use).
  szResult_t land(uint32_t imm, uint32_t* slot, uint64_t* step) {
    const uint32_t j = ibImmSlot(imm);
    if (j >= nslots_ || !ibImmStepMatches(imm, next_[j]) || free_[j] != next_[j]) return szRemoteError;
    *slot = j;
    *step = next_[j];
    next_[j] += nslots_;
    undrained_.push_back(*step);
    return szSuccess;
  }
  // The oldest landed step's credit, once the kernels drained it (`credits`: the receiver's
  // credit words, which its kernels write): true with the slot and the credit value to send back
  // (then creditSent()), else false. Credits go back in landing order.
  bool drained(const volatile uint64_t* credits, uint32_t* slot, uint64_t* value) const {
    if (undrained_.empty()) return false;
    const uint64_t s = undrained_.front();
    const uint32_t j = slotOf(s, nslots_);
    if (credits[j] < creditAfter(s, nslots_)) return false;
    *slot = j;
    *value = creditAfter(s, nslots_);
    return true;
  }
  void creditSent() {
    const uint64_t s = undrained_.front();
    free_[slotOf(s, nslots_)] = s + nslots_;  // the sender may write the slot's next step now
    undrained_.pop_front();
  }

 private:
  uint32_t nslots_;
  std::vector<uint64_t> next_;
  std::vector<uint64_t> free_;  // per slot: the step the sender has been credited to write next
  std::deque<uint64_t> undrained_;
};

}  // namespace sz
