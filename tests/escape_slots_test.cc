// The scratch a slot kernel's block takes to encode an FP16 or E4M3 slice
// (kernels/escape_slots.h): every slice of up to a slot's bytes, of either type, finds room for
// its range totals and a slot of records per chunk, the records 16-byte aligned.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/escape_slots.h"

namespace {

using namespace sz;

TEST(EscapeSlots, NarrowSlicesFitTheirBlocksScratch) {
  for (uint64_t slice : {uint64_t(4096), uint64_t(256) << 10, (uint64_t(1) << 20) + 4096, uint64_t(3) << 20,
                         uint64_t(64) << 20, (uint64_t(1) << 30) - 4096}) {
    for (int type : {int(szFloat16), int(szFloat8e4m3)}) {
      const uint64_t elems = slice / typeTraits(type).elemBytes, chunks = (elems + kChunkElems - 1) / kChunkElems;
      const uint64_t need = narrowRecordsOff(chunks) + uint64_t(slotBytes(type)) * chunks;
      EXPECT_LE(need, narrowScratchBytes(slice)) << "slice " << slice << " type " << type;
      EXPECT_GE(narrowRecordsOff(chunks), 4 * narrowRangesOf(chunks)) << "totals before the records";
      EXPECT_EQ(narrowRecordsOff(chunks) % 16, 0u);
      const uint64_t ranges = narrowRangesOf(chunks);
      EXPECT_LE(chunks, ranges * 32) << "ranges of at most 32 chunks";
      EXPECT_LE(ranges, chunks) << "no empty range";
      EXPECT_GE(ranges, std::min<uint64_t>(chunks, kNarrowMinRanges)) << "two ranges a warp where there are chunks";
    }
  }
  EXPECT_EQ(slotRecords(szFloat16), 64u);
  EXPECT_EQ(slotRecords(szFloat8e4m3), 64u);
  EXPECT_EQ(slotRecords(szBfloat16), 16u);
  // E4M3's 256 KiB slice (the ipc default): 257 chunks at most, 32 ranges (128 bytes of totals).
  EXPECT_EQ(narrowScratchBytes(uint64_t(256) << 10), 128u + 192u * 257u);
  EXPECT_EQ(narrowRangesOf(128), 32u);  // FP16's 256 KiB slice: 4 chunks a range
  EXPECT_EQ(narrowRangesOf(5), 5u);
  EXPECT_EQ(narrowRangesOf(4096), 128u);
}

}  // namespace
