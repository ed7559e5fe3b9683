// The ib wire's pure logic, on every machine (no verbs, no NIC): SZ_IB_HCA parsing and matching
// (NCCL_IB_HCA's syntax), GID selection, the immediate, the receiving proxy's landing and credit
// bookkeeping (including writes striped over two queue pairs landing out of step order), the
// bytes a published slot puts on the wire, and the send queue's work-request accounting.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "transport/ib_gid.h"
#include "transport/ib_hca.h"
#include "transport/ib_sendq.h"
#include "transport/ib_steps.h"

namespace {

using namespace sz;

szIbHcaFilter parse(const char* spec) {
  szIbHcaFilter f;
  EXPECT_EQ(szIbParseHcaFilter(spec, &f), szSuccess) << spec << ": " << szGetLastError(nullptr);
  return f;
}

TEST(IbHca, EmptySelectsEverything) {
  for (const char* spec : {static_cast<const char*>(nullptr), ""}) {
    szIbHcaFilter f = parse(spec);
    EXPECT_TRUE(f.rules.empty());
    EXPECT_TRUE(szIbHcaSelected(f, "mlx5_0", 1));
    EXPECT_TRUE(szIbHcaSelected(f, "bnxt_re3", 2));
  }
}

TEST(IbHca, PrefixesPortsExclusionAndExactNames) {
  szIbHcaFilter f = parse("mlx5_0:1,mlx5_1");
  ASSERT_EQ(f.rules.size(), 2u);
  EXPECT_EQ(f.rules[0].name, "mlx5_0");
  EXPECT_EQ(f.rules[0].port, 1);
  EXPECT_EQ(f.rules[1].port, 0);
  EXPECT_TRUE(szIbHcaSelected(f, "mlx5_0", 1));
  EXPECT_FALSE(szIbHcaSelected(f, "mlx5_0", 2)) << "only port 1 of mlx5_0";
  EXPECT_TRUE(szIbHcaSelected(f, "mlx5_1", 2));
  EXPECT_TRUE(szIbHcaSelected(f, "mlx5_10", 1)) << "names are prefixes without '='";
  EXPECT_FALSE(szIbHcaSelected(f, "mlx5_2", 1));

  szIbHcaFilter exact = parse("=mlx5_1");
  EXPECT_TRUE(exact.exact);
  EXPECT_TRUE(szIbHcaSelected(exact, "mlx5_1", 1));
  EXPECT_FALSE(szIbHcaSelected(exact, "mlx5_10", 1));

  szIbHcaFilter without = parse("^mlx5_2");
  EXPECT_TRUE(without.exclude);
  EXPECT_FALSE(szIbHcaSelected(without, "mlx5_2", 1));
  EXPECT_FALSE(szIbHcaSelected(without, "mlx5_23", 1));
  EXPECT_TRUE(szIbHcaSelected(without, "mlx5_0", 1));

  szIbHcaFilter both = parse("^=mlx5_2:1");
  EXPECT_TRUE(both.exclude && both.exact);
  EXPECT_FALSE(szIbHcaSelected(both, "mlx5_2", 1));
  EXPECT_TRUE(szIbHcaSelected(both, "mlx5_2", 2));
  EXPECT_TRUE(szIbHcaSelected(both, "mlx5_23", 1));
}

TEST(IbHca, MalformedSpecsAreNamed) {
  const std::string longName(64, 'x');
  for (const std::string& spec : {std::string("mlx5_0,"), std::string(",mlx5_0"), std::string("mlx5_0:"),
                                  std::string("mlx5_0:0"), std::string("mlx5_0:256"), std::string("mlx5_0:1x"),
                                  std::string("mlx5_0:-1"), std::string("mlx5_0:+1"), std::string(":1"),
                                  std::string("^"), std::string("^="), longName}) {
    szIbHcaFilter f;
    EXPECT_EQ(szIbParseHcaFilter(spec.c_str(), &f), szInvalidArgument) << spec;
    EXPECT_NE(std::string(szGetLastError(nullptr)).find("SZ_IB_HCA"), std::string::npos) << szGetLastError(nullptr);
  }
  std::string many;
  for (size_t i = 0; i <= kSzIbMaxHcaRules; ++i) many += (i ? "," : "") + std::string("mlx5_") + std::to_string(i);
  szIbHcaFilter f;
  EXPECT_EQ(szIbParseHcaFilter(many.c_str(), &f), szInvalidArgument) << "more entries than the limit";
  EXPECT_EQ(szIbParseHcaFilter(std::string(63, 'y').c_str(), &f), szSuccess) << "63 characters is a name";
}

szIbGidEntry gid(std::initializer_list<uint8_t> bytes, szIbGidType type) {
  szIbGidEntry g{};
  size_t i = 0;
  for (uint8_t b : bytes) g.raw[i++] = b;
  g.type = type;
  return g;
}

TEST(IbGid, RoceV2Ipv4MappedFirstThenGlobal) {
  const szIbGidEntry linkLocalV1 = gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, kSzIbGidIbOrRoceV1);
  const szIbGidEntry linkLocalV2 = gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, kSzIbGidRoceV2);
  const szIbGidEntry globalV2 = gid({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, kSzIbGidRoceV2);
  const szIbGidEntry v4V1 = gid({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}, kSzIbGidIbOrRoceV1);
  const szIbGidEntry v4V2 = gid({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1}, kSzIbGidRoceV2);
  const szIbGidEntry none{};
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1, linkLocalV2, globalV2, v4V1, v4V2}, true, -1), 4);
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1, linkLocalV2, globalV2, v4V1}, true, -1), 2);
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1, linkLocalV2, v4V1, none}, true, -1), -1) << "RoCE v1 or link-local only";
  EXPECT_EQ(szIbPickGidIndex({}, true, -1), -1);
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1, none}, true, 0), 0) << "SZ_IB_GID_INDEX wins";
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1, none}, true, 1), -1) << "an empty entry";
  EXPECT_EQ(szIbPickGidIndex({linkLocalV1}, true, 7), -1) << "past the table";
  EXPECT_EQ(szIbPickGidIndex({}, false, -1), 0) << "InfiniBand: index 0, routed by LID";
  EXPECT_EQ(szIbPickGidIndex({}, false, 3), 3);
}

TEST(IbSteps, ImmediateCarriesSlotAndStepCheck) {
  EXPECT_EQ(kIbMaxSlots, 1u << 20);
  for (uint32_t slot : {0u, 1u, 263u, kIbMaxSlots - 1})
    for (uint64_t step : {uint64_t(0), uint64_t(1), uint64_t(4095), uint64_t(4096), (uint64_t(1) << 40) + 7}) {
      const uint32_t imm = ibImm(slot, step);
      EXPECT_EQ(ibImmSlot(imm), slot);
      EXPECT_TRUE(ibImmStepMatches(imm, step));
      EXPECT_FALSE(ibImmStepMatches(imm, step + 1));
      EXPECT_TRUE(ibImmStepMatches(imm, step + 4096)) << "12 bits of the step";
    }
  EXPECT_EQ(ibStripeOf(0, 1), 0u);
  EXPECT_EQ(ibStripeOf(5, 2), 1u);
  EXPECT_EQ(ibStripeOf(6, 4), 2u);
}

TEST(IbSteps, WriteBytesAreHeaderAndPayload) {
  const uint64_t stride = slotStride(256 << 10);
  EXPECT_EQ(ibWriteBytes(0, stride), kSlotHeaderBytes);
  EXPECT_EQ(ibWriteBytes(1000, stride), kSlotHeaderBytes + 1000);
  EXPECT_EQ(ibWriteBytes(stride - kSlotHeaderBytes, stride), stride);
  EXPECT_EQ(ibWriteBytes(stride - kSlotHeaderBytes + 1, stride), 0u) << "a signal past the slot";
  EXPECT_EQ(ibWriteBytes(~uint64_t(0), stride), 0u);
}

TEST(IbSteps, LandingInOrderAndCredits) {
  const uint32_t nslots = 3;
  IbLanding l(nslots);
  std::vector<uint64_t> credits(nslots);
  for (uint32_t j = 0; j < nslots; ++j) credits[j] = initialCredit(j);
  uint32_t slot = 0;
  uint64_t step = 0, value = 0;
  EXPECT_FALSE(l.drained(credits.data(), &slot, &value)) << "nothing landed";
  for (uint64_t s = 0; s < 7; ++s) {
    ASSERT_EQ(l.land(ibImm(slotOf(s, nslots), s), &slot, &step), szSuccess) << s;
    EXPECT_EQ(slot, slotOf(s, nslots));
    EXPECT_EQ(step, s);
    EXPECT_FALSE(l.drained(credits.data(), &slot, &value)) << "the kernels have not drained step " << s;
    credits[slotOf(s, nslots)] = creditAfter(s, nslots);  // what the receiving kernel writes
    ASSERT_TRUE(l.drained(credits.data(), &slot, &value));
    EXPECT_EQ(slot, slotOf(s, nslots));
    EXPECT_EQ(value, creditAfter(s, nslots));
    l.creditSent();
    EXPECT_FALSE(l.drained(credits.data(), &slot, &value));
  }
}

TEST(IbSteps, StripedWritesLandOutOfStepOrder) {
  // Two stripes: steps 0, 2, 4 on one queue pair, 1, 3, 5 on the other; the second's land first.
  const uint32_t nslots = 4;
  IbLanding l(nslots);
  std::vector<uint64_t> credits(nslots);
  for (uint32_t j = 0; j < nslots; ++j) credits[j] = initialCredit(j);
  uint32_t slot = 0, cslot = 0;
  uint64_t step = 0, value = 0;
  for (uint64_t s : {1, 3, 0, 2}) {
    ASSERT_EQ(l.land(ibImm(slotOf(s, nslots), s), &slot, &step), szSuccess);
    EXPECT_EQ(step, s);
  }
  // Credits go back in landing order: step 1 first, held until drained, then 3.
  credits[slotOf(3, nslots)] = creditAfter(3, nslots);
  EXPECT_FALSE(l.drained(credits.data(), &cslot, &value)) << "step 1 (landed first) is not drained";
  credits[slotOf(1, nslots)] = creditAfter(1, nslots);
  ASSERT_TRUE(l.drained(credits.data(), &cslot, &value));
  EXPECT_EQ(cslot, 1u);
  l.creditSent();
  ASSERT_TRUE(l.drained(credits.data(), &cslot, &value));
  EXPECT_EQ(cslot, 3u);
  EXPECT_EQ(value, creditAfter(3, nslots));
  l.creditSent();
  // Slot 1's next step is 5, never 1 again.
  EXPECT_EQ(l.land(ibImm(1, 1), &slot, &step), szRemoteError) << "a step that already landed";
  ASSERT_EQ(l.land(ibImm(1, 5), &slot, &step), szSuccess);
  EXPECT_EQ(step, 5u);
}

TEST(IbSteps, ImmediatesOutOfTurnAreRefused) {
  IbLanding l(4);
  uint32_t slot = 0;
  uint64_t step = 0;
  EXPECT_EQ(l.land(ibImm(4, 4), &slot, &step), szRemoteError) << "no slot 4 in a ring of 4";
  EXPECT_EQ(l.land(ibImm(2, 6), &slot, &step), szRemoteError) << "slot 2 holds step 2 next";
  EXPECT_EQ(l.land(ibImm(2, 2), &slot, &step), szSuccess);
  EXPECT_EQ(l.land(ibImm(2, 2), &slot, &step), szRemoteError) << "twice";
}

TEST(IbSteps, AWriteOverASlotNotYetCreditedIsRefused) {
  // Slot 1 of 2 holds step 1; its next step, 3, may come only once step 1's credit went back.
  const uint32_t nslots = 2;
  IbLanding l(nslots);
  std::vector<uint64_t> credits(nslots);
  for (uint32_t j = 0; j < nslots; ++j) credits[j] = initialCredit(j);
  uint32_t slot = 0;
  uint64_t step = 0, value = 0;
  ASSERT_EQ(l.land(ibImm(1, 1), &slot, &step), szSuccess);
  EXPECT_EQ(l.land(ibImm(1, 3), &slot, &step), szRemoteError) << "step 1 is still being read";
  credits[1] = creditAfter(1, nslots);  // drained, but the credit has not left
  EXPECT_EQ(l.land(ibImm(1, 3), &slot, &step), szRemoteError) << "the sender has no credit yet";
  ASSERT_TRUE(l.drained(credits.data(), &slot, &value));
  l.creditSent();
  EXPECT_EQ(l.land(ibImm(1, 3), &slot, &step), szSuccess);
  EXPECT_EQ(step, 3u);
}

TEST(IbSendQueue, SelectiveSignallingAndBound) {
  IbSendQueue q(8, 4);
  EXPECT_TRUE(q.idle());
  std::vector<uint64_t> signalled;
  for (int i = 0; i < 8; ++i) {
    ASSERT_FALSE(q.full());
    uint64_t id = 0;
    if (q.post(false, &id)) signalled.push_back(id);
    EXPECT_EQ(id, uint64_t(i + 1));
  }
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.outstanding(), 8u);
  EXPECT_EQ(signalled, (std::vector<uint64_t>{4, 8})) << "one in four";
  q.complete(4);
  EXPECT_FALSE(q.full());
  EXPECT_EQ(q.outstanding(), 4u);
  q.complete(2);  // an id already retired changes nothing
  EXPECT_EQ(q.outstanding(), 4u);
  q.complete(99);  // nor one never posted
  EXPECT_EQ(q.outstanding(), 4u);
  q.complete(8);
  EXPECT_TRUE(q.idle());
  EXPECT_TRUE(q.tailSignalled());
  uint64_t id = 0;
  EXPECT_FALSE(q.post(false, &id));
  EXPECT_FALSE(q.tailSignalled()) << "an unsignalled request at the tail";
  EXPECT_TRUE(q.post(true, &id)) << "a forced signal";
  EXPECT_TRUE(q.tailSignalled());
  q.complete(id);
  EXPECT_TRUE(q.idle());
}

TEST(IbSendQueue, TheFillingPostIsSignalled) {
  // A depth below the signalling period: the post that fills the queue asks for a completion,
  // so a full queue can always drain.
  IbSendQueue q(3, 16);
  uint64_t id = 0;
  EXPECT_FALSE(q.post(false, &id));
  EXPECT_FALSE(q.post(false, &id));
  EXPECT_TRUE(q.post(false, &id));
  EXPECT_TRUE(q.full());
  q.complete(id);
  EXPECT_TRUE(q.idle());
}

}  // namespace
