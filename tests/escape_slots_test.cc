// The scratch a slot kernel's block takes to encode an FP16 or E4M3 slice
// (kernels/escape_slots.h): every slice of up to a slot's bytes, of either type, finds room for
// its range totals and a slot of records per chunk, the records 16-byte aligned.
#include <gtest/gtest.h>

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
      EXPECT_LE(narrowRangesOf(chunks) * 32, chunks + 31) << "ranges of at most 32 chunks";
    }
  }
  EXPECT_EQ(slotRecords(szFloat16), 64u);
  EXPECT_EQ(slotRecords(szFloat8e4m3), 64u);
  EXPECT_EQ(slotRecords(szBfloat16), 16u);
  // E4M3's 256 KiB slice (the ipc default): 256 chunks, 8 ranges, 48 KiB of records.
  EXPECT_EQ(narrowScratchBytes(uint64_t(256) << 10), 48u + 192u * 257u);
}

}  // namespace
