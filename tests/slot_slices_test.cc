// The slices of a device szSendv's buffer list (src/proto/slot_slices.h) without a GPU: each
// slice starts in one buffer and takes its segment group (src/proto/segment_groups.h), so a
// send needs codebooks for the groups of the buffers slices start in, and no others.
#include <gtest/gtest.h>

#include <vector>

#include "src/proto/segment_groups.h"
#include "src/proto/slot_slices.h"

namespace {

using namespace sz;

// A list of buffers of `bytes` each, laid end to end, with their groups by position.
struct List {
  std::vector<SlotSegment> segs;
  std::vector<int> groups;
};
List list(const std::vector<uint64_t>& bytes) {
  List l;
  uint64_t offset = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    l.segs.push_back(SlotSegment{nullptr, bytes[i], offset});
    l.groups.push_back(segmentGroup(i, bytes.size()));
    offset += bytes[i];
  }
  return l;
}

std::vector<uint32_t> starts(const List& l, uint64_t sliceBytes, uint64_t slices) {
  std::vector<uint32_t> out;
  forEachSliceStart(l.segs, sliceBytes, slices, [&](uint64_t i, uint32_t seg) {
    EXPECT_EQ(i, out.size());
    out.push_back(seg);
  });
  return out;
}

TEST(SlotSlices, KThenVTakeTwoGroups) {
  const uint64_t slice = 64 << 10;
  const List kv = list({4 * slice, 4 * slice});
  EXPECT_EQ(starts(kv, slice, 8), (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(sliceGroupMask(kv.segs, kv.groups, slice), (1u << segmentGroup(0, 2)) | (1u << segmentGroup(1, 2)));
  EXPECT_NE(segmentGroup(0, 2), segmentGroup(1, 2));
}

TEST(SlotSlices, ASliceTakesTheBufferItStartsIn) {
  const uint64_t slice = 64 << 10;
  // K of a slice and a half, V of a half: slice 1 starts in K and holds V's half too.
  const List kv = list({slice + slice / 2, slice / 2});
  EXPECT_EQ(starts(kv, slice, 2), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(sliceGroupMask(kv.segs, kv.groups, slice), 1u << segmentGroup(0, 2)) << "no slice starts in V";
  // V starting exactly on a slice boundary is V's.
  const List aligned = list({slice, slice / 2});
  EXPECT_EQ(starts(aligned, slice, 2), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(sliceGroupMask(aligned.segs, aligned.groups, slice), (1u << segmentGroup(0, 2)) | (1u << segmentGroup(1, 2)));
}

TEST(SlotSlices, BuffersSmallerThanASliceShareTheGroupOfTheFirst) {
  // K0 V0 K1 V1 ... of a quarter slice each: every slice starts in a K buffer of its quarter.
  const uint64_t slice = 64 << 10;
  const List kv = list(std::vector<uint64_t>(16, slice / 4));
  EXPECT_EQ(starts(kv, slice, 4), (std::vector<uint32_t>{0, 4, 8, 12}));
  uint32_t want = 0;
  for (uint32_t k : {0u, 4u, 8u, 12u}) want |= 1u << kv.groups[k];
  EXPECT_EQ(sliceGroupMask(kv.segs, kv.groups, slice), want);
  for (int g = 0; g < kSegmentGroups; ++g) {
    if (want >> g & 1) {
      EXPECT_LT(g, kSegmentQuarters) << "V (odd buffers) starts no slice";
    }
  }
}

TEST(SlotSlices, EmptyListAndEmptyBuffers) {
  const List none = list({});
  EXPECT_TRUE(starts(none, 4096, 1).empty());  // a send of no element: one empty step, no buffer
  EXPECT_EQ(sliceGroupMask(none.segs, none.groups, 4096), 0u);
  // A zero-byte segment at a slice boundary holds no slice start.
  List l = list({4096, 0, 4096});
  EXPECT_EQ(starts(l, 4096, 2), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(sliceGroupMask(l.segs, l.groups, 4096), (1u << l.groups[0]) | (1u << l.groups[2]));
}

}  // namespace
