// GPU tests of szEncodeAsync's kernel paths (kernels/encode.cu; run on the H200 machine, skipped
// with a message elsewhere): the one-launch solo kernel of frames of at most 16 chunks (FP32,
// misaligned pointers, raw frames, chunks with more escapes than their slot holds (16 records, FP16 and E4M3 64),
// calibration on the device), the escape budget's boundary, the solo/grid boundary, the grid's
// chunk-ahead loads in ranges of several chunks, and E5M2 codebooks holding exponents 0 and 31.
// Every frame is szEncode's byte for byte (same codebook and flags), every decode restores every
// input byte, and each test first checks on the CPU frame that its data is what it means to be
// (raw or not, how many escapes, which chunk escapes how often).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/encode_frame.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/typed_data.h"
#include "tests/kv_samples.h"

namespace {

using sztest::cpuEncode;
using sztest::expectSame;
using sztest::frameInfo;

constexpr size_t kChunk = 1024;             // kChunkElems
constexpr size_t kSoloElems = 16 * kChunk;  // szEncodeAsync's solo kernel: at most 16 chunks
constexpr szDataType_t kTypes[] = {szBfloat16, szFloat32, szFloat8e5m2};

// Input and frame offsets from a cudaMalloc'd base: 16-byte aligned (the fast path), the input
// off by one element (2 bytes for BF16, 4 for FP32, 1 for E5M2), the frame off by bytes.
struct Mis {
  size_t in, out;
};
std::vector<Mis> misalignments(szDataType_t type) {
  const size_t es = szTypeSize(type);
  return {{0, 0}, {es, 0}, {0, 1}, {es, 3}};
}

void expectSameAtEveryAlignment(const std::vector<uint8_t>& data, size_t count, szDataType_t type,
                                const szCodebook_t* cb, int flags = 0) {
  for (const Mis& m : misalignments(type)) {
    SCOPED_TRACE("input +" + std::to_string(m.in) + ", frame +" + std::to_string(m.out));
    expectSame(data.data(), count, type, cb, flags, m.in, m.out);
  }
}

// Elements on `cb` whose chunk c escapes perChunk[c] times (fewer where the chunk is shorter),
// at its first and last element and at random places between.
struct Planned {
  std::vector<uint8_t> data;
  std::vector<uint32_t> perChunk;
  uint64_t escapes = 0;
};
Planned chunkEscapes(szDataType_t type, size_t count, const szCodebook_t& cb, const std::vector<size_t>& perChunk,
                     uint64_t seed) {
  Planned p;
  p.data = sztest::codedData(type, count, cb, seed);
  for (size_t c = 0; c * kChunk < count; ++c) {
    const size_t len = std::min(kChunk, count - c * kChunk), k = std::min(len, c < perChunk.size() ? perChunk[c] : 0);
    sztest::escapeAt(p.data, type, cb, sztest::positionsIn(c * kChunk, len, k, seed + c));
    p.perChunk.push_back(uint32_t(k));
    p.escapes += k;
  }
  return p;
}

// The CPU frame of `p` is compressed, with the planned escapes in every chunk.
void expectPlanned(const Planned& p, size_t count, szDataType_t type, const szCodebook_t& cb) {
  const auto frame = cpuEncode(p.data.data(), count, type, &cb);
  const szFrameInfo_t info = frameInfo(frame);
  ASSERT_EQ(info.raw, 0) << "the planned escapes fit the budget";
  ASSERT_EQ(info.escapeCount, p.escapes);
  ASSERT_EQ(sztest::chunkEscapeCounts(frame), p.perChunk);
}

// Escapes of chunks 0..15: none, a few, exactly a slot's 16 records, 17, 40 and a whole chunk
// of 1024 (E5M2: 400, as a 16-chunk E5M2 frame holds at most 666 escapes).
std::vector<size_t> slotPattern(szDataType_t type) {
  return {0, 17, 1, 40, 0, 16, 15, type == szFloat8e5m2 ? size_t(400) : kChunk, 0, 2, 33, 0, 0, 64, 3, 17};
}

TEST(GpuCodecPaths, SoloFp32) {
  SKIP_WITHOUT_GPU();
  const auto v = sztest::typedData(szFloat32, kSoloElems, 101);
  const szCodebook_t own = sztest::calibratedOn(szFloat32, v.data(), kSoloElems);
  for (size_t n : {size_t(100), size_t(1000), kChunk - 1, kChunk, kChunk + 1, size_t(7777), kSoloElems - 1, kSoloElems}) {
    for (const szCodebook_t* cb : {static_cast<const szCodebook_t*>(nullptr), &own}) {
      SCOPED_TRACE(std::to_string(n) + " elements, " + (cb ? "own" : "default") + " codebook");
      if (n >= 1000) {
        // Compressed, with escapes: under the default codebook NaN, Inf and denormals; under the
        // data's own (which holds those) the tails of the larger sizes.
        const szFrameInfo_t info = frameInfo(cpuEncode(v.data(), n, szFloat32, cb));
        EXPECT_EQ(info.raw, 0);
        if (cb == nullptr || n >= 7777) {
          EXPECT_GT(info.escapeCount, 0u);
        }
      }
      expectSame(v.data(), n, szFloat32, cb);
    }
  }
}

TEST(GpuCodecPaths, SoloMisalignedPointers) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const auto v = sztest::typedData(type, kSoloElems, 102);
    for (size_t n : {kSoloElems, size_t(5003)}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements");
      const szFrameInfo_t info = frameInfo(cpuEncode(v.data(), n, type, nullptr));
      ASSERT_EQ(info.raw, 0);
      ASSERT_GT(info.escapeCount, 0u);
      expectSameAtEveryAlignment(v, n, type, nullptr);
    }
  }
}

// A chunk with more escapes than its slot (slotRecords in kernels/encode_grid.cuh: 16 records
// for these types) is read again by the place pass, which regenerates its records.
TEST(GpuCodecPaths, SoloChunksOverflowingTheirSlot) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const szCodebook_t cb = sztest::defaultCodebook(type);
    for (size_t n : {kSoloElems, kSoloElems - 5, 3 * kChunk + 1}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements");
      const Planned p = chunkEscapes(type, n, cb, slotPattern(type), 103 + n);
      expectPlanned(p, n, type, cb);
      expectSameAtEveryAlignment(p.data, n, type, &cb);
    }
  }
}

// FP16's and E4M3's slots hold 64 records (their KV escapes ~20 times a chunk at 3-bit codes):
// chunks of none, 63, exactly 64, 65 and more escapes, in a solo frame and in the grid's ranges
// (40 chunks, the pattern repeated), at 3-bit codes (and FP16 at 4).
TEST(GpuCodecPaths, NarrowChunksOverflowingTheirSlot) {
  SKIP_WITHOUT_GPU();
  const std::vector<size_t> pattern = {0, 65, 1, 64, 63, 0, 70, 2, 0, 0, 64, 0, 3, 66, 0, 17};
  std::vector<size_t> repeated;
  for (int r = 0; r < 3; ++r) repeated.insert(repeated.end(), pattern.begin(), pattern.end());
  for (szDataType_t type : {szFloat16, szFloat8e4m3}) {
    for (int bits : {3, 4}) {
      if (type == szFloat8e4m3 && bits == 4) continue;  // always raw: nothing to place
      const auto kv = sztest::typedData(type, kSoloElems, 105);
      const szCodebook_t cb = sztest::calibratedCodebook(kv.data(), kSoloElems, type, bits);
      for (size_t n : {kSoloElems, kSoloElems - 5, 40 * kChunk - 3}) {
        SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(bits) + "-bit codes, " +
                     std::to_string(n) + " elements");
        const Planned p = chunkEscapes(type, n, cb, n > kSoloElems ? repeated : pattern, 106 + n);
        expectPlanned(p, n, type, cb);
        expectSameAtEveryAlignment(p.data, n, type, &cb);
      }
    }
  }
}

TEST(GpuCodecPaths, SoloRawWhenIncompressible) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const auto bits = sztest::typedData(szUint8, kSoloElems * szTypeSize(type), 104);  // random bytes
    for (size_t n : {kChunk, size_t(7777), kSoloElems}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements");
      ASSERT_EQ(frameInfo(cpuEncode(bits.data(), n, type, nullptr)).raw, 1);
      expectSameAtEveryAlignment(bits, n, type, nullptr);
    }
  }
}

// Exactly the budget's escapes (sztest::escapeBudget, from docs/FORMAT.md's sizes) and one more:
// compressed, within 3 bytes of the raw size, then raw; anywhere in the frame, all at its start
// and all at its end. Solo and grid sizes, aligned and not.
TEST(GpuCodecPaths, EscapeBudgetBoundary) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const szCodebook_t cb = sztest::defaultCodebook(type);
    for (size_t n : {size_t(9999), kSoloElems, kSoloElems + 1, size_t(100003)}) {
      const uint64_t budget = sztest::escapeBudget(n, type);
      ASSERT_GT(budget, 0u);
      for (uint64_t k : {budget, budget + 1}) {
        for (sztest::Where where : {sztest::Where::kAnywhere, sztest::Where::kAtStart, sztest::Where::kAtEnd}) {
          SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements, " + std::to_string(k) +
                       " escapes " + sztest::whereName(where));
          auto v = sztest::codedData(type, n, cb, 105 + k);
          sztest::escapeAt(v, type, cb, sztest::escapePositions(n, k, where, 106 + k));
          sztest::expectBudgetSide(cpuEncode(v.data(), n, type, &cb), n, type, k);
          expectSame(v.data(), n, type, &cb);
          expectSame(v.data(), n, type, &cb, 0, szTypeSize(type), 1);
        }
      }
    }
  }
}

// Calibration on the device (SZ_ENCODE_CALIBRATE, no codebook) in the solo kernel, on data whose
// exponents the default codebook mostly misses: the frame is compressed only with the input's
// own top-16, which must be the one the host computes.
TEST(GpuCodecPaths, SoloCalibrationOnDevice) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const szCodebook_t shifted = sztest::codebookFrom(type, type == szFloat8e5m2 ? 14 : 60);
    for (size_t n : {size_t(1000), size_t(5003), kSoloElems}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements");
      auto v = sztest::codedData(type, n, shifted, 107);
      sztest::escapeAt(v, type, shifted, sztest::positionsIn(0, n, n / 300, 108));
      ASSERT_EQ(frameInfo(cpuEncode(v.data(), n, type, nullptr)).raw, 1) << "the default codebook does not fit";
      const szFrameInfo_t info = frameInfo(cpuEncode(v.data(), n, type, nullptr, SZ_ENCODE_CALIBRATE));
      ASSERT_EQ(info.raw, 0);
      ASSERT_EQ(info.escapeCount, n / 300);
      for (uint8_t e : shifted.exponents) EXPECT_TRUE(sztest::inCodebook(info.codebook, e)) << "exponent " << int(e);
      expectSameAtEveryAlignment(v, n, type, nullptr, SZ_ENCODE_CALIBRATE);
    }
  }
}

// 16 chunks are the solo kernel's, 17 the grid's: counts on both sides, escapes in the last solo
// chunk (at its first and last element), more than a slot's in the chunk before, and in the
// grid's 17th chunk (its first element).
TEST(GpuCodecPaths, SoloGridBoundaryCounts) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    const szCodebook_t cb = sztest::defaultCodebook(type);
    const size_t most = 17 * kChunk;
    std::vector<size_t> perChunk(17, 0);
    perChunk[14] = 17;
    perChunk[15] = 20;
    perChunk[16] = 3;
    const Planned p = chunkEscapes(type, most, cb, perChunk, 109);
    for (size_t n : {15 * kChunk + 1, kSoloElems - 1, kSoloElems, kSoloElems + 1, kSoloElems + 2, most}) {
      SCOPED_TRACE("type " + std::to_string(type) + ", " + std::to_string(n) + " elements");
      const szFrameInfo_t info = frameInfo(cpuEncode(p.data.data(), n, type, &cb));
      ASSERT_EQ(info.raw, 0);
      uint64_t planned = 0;  // the planned escapes among the first n elements
      for (size_t i = 0; i < n; ++i) planned += !sztest::inCodebook(cb, sztest::exponentAt(p.data, type, i));
      ASSERT_EQ(info.escapeCount, planned);
      expectSameAtEveryAlignment(p.data, n, type, &cb);
    }
  }
}

// Range warps of several chunks (kernels/encode.cu: at least 16384 ranges, so above 16384 chunks
// a range takes chunks/16384 or one more), which load each whole chunk while they encode the one
// before: a grid frame of `chunks` chunks (the last `tail` elements short) of a real KV sample,
// tiled, with escapes sprinkled through it, at the first and last element of ranges (long and
// short ones, at the frame's start, middle and end), and more than a slot's in chunks that were
// loaded ahead, in the first and last chunk of a range, in a whole chunk and in the partial last.
// codeBits 3: a codebook calibrated on the tiled sample at 3-bit codes (FP16, E4M3), else the
// type's default.
void expectGridRanges(szDataType_t type, const char* sample, size_t chunks, size_t tail, int codeBits = 4) {
  if (getenv("SZ_TEST_SMALL")) {
    GTEST_SKIP() << "SZ_TEST_SMALL set: " << chunks << " chunks skipped";
  }
  const size_t count = chunks * kChunk - tail, es = szTypeSize(type);
  const size_t ranges = std::max(std::min<size_t>(chunks, 16384), (chunks + 31) / 32);
  const size_t per = chunks / ranges, extra = chunks % ranges;
  ASSERT_GE(per, 2u) << "every range has several chunks";
  ASSERT_GT(extra, 2u) << "and some one more";
  auto first = [&](size_t w) { return w * per + std::min(w, extra); };  // range w's first chunk

  const std::vector<uint8_t> kv = sztest::readKvSample(sample);
  ASSERT_GE(kv.size(), 1000000u);
  const size_t kvElems = kv.size() / es;
  std::vector<uint8_t> v(count * es);
  for (size_t i = 0; i < count; ++i) memcpy(&v[i * es], &kv[(i * 7919) % kvElems * es], es);

  const szCodebook_t cb = codeBits == 4 ? sztest::defaultCodebook(type) : sztest::calibratedCodebook(v.data(), count, type, codeBits);
  std::vector<size_t> at = sztest::positionsIn(0, count, count / 10000, 110);
  for (size_t w : {size_t(0), size_t(1), extra - 1, extra, extra + 1, ranges / 2, ranges - 2, ranges - 1}) {
    at.push_back(first(w) * kChunk);
    at.push_back(std::min(first(w + 1) * kChunk, count) - 1);
  }
  struct Heavy {
    size_t chunk, escapes;
  };
  const Heavy heavy[] = {{first(3) + 1, 17},      {first(extra - 1) + per, 40}, {first(ranges / 2) + 1, kChunk},
                         {first(extra), 16},      {first(ranges - 1), 18},      {chunks - 2, 17},
                         {chunks - 1, 33},        {first(5) + 1, 64},           {first(6), 65}};
  for (const Heavy& h : heavy) {
    const size_t len = std::min(kChunk, count - h.chunk * kChunk);
    for (size_t i : sztest::positionsIn(h.chunk * kChunk, len, h.escapes, 111 + h.chunk)) at.push_back(i);
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  sztest::escapeAt(v, type, cb, at);

  const auto frame = cpuEncode(v.data(), count, type, &cb);
  const szFrameInfo_t info = frameInfo(frame);
  ASSERT_EQ(info.raw, 0);
  ASSERT_GE(info.escapeCount, at.size());  // the sample's own escapes come on top
  const auto counts = sztest::chunkEscapeCounts(frame);
  ASSERT_EQ(counts.size(), chunks);
  for (const Heavy& h : heavy) EXPECT_GE(counts[h.chunk], h.escapes) << "chunk " << h.chunk;
  EXPECT_EQ(counts[first(ranges / 2) + 1], kChunk) << "a chunk of escapes only";
  expectSame(v.data(), count, type, &cb);
}

TEST(GpuCodecPaths, GridE5m2ChunkAheadInRangesOfSeveralChunks) {
  SKIP_WITHOUT_GPU();
  expectGridRanges(szFloat8e5m2, "tinystories_kv_eval_e5m2.safetensors", 3 * 16384 + 1234, 100);  // 49 MiB
}

TEST(GpuCodecPaths, GridBf16PartialLastChunkInRangesOfSeveralChunks) {
  SKIP_WITHOUT_GPU();
  expectGridRanges(szBfloat16, "tinystories_kv_eval_bf16.safetensors", 2 * 16384 + 4000, 333);  // 72 MiB
}

// FP16's and E4M3's slots (64 records) in ranges of several chunks, at 3-bit codes.
TEST(GpuCodecPaths, GridFp16And3BitE4m3InRangesOfSeveralChunks) {
  SKIP_WITHOUT_GPU();
  expectGridRanges(szFloat16, "tinystories_kv_eval_fp16.safetensors", 2 * 16384 + 4000, 333, 3);  // 72 MiB
  expectGridRanges(szFloat8e4m3, "tinystories_kv_eval_e4m3.safetensors", 3 * 16384 + 1234, 100, 3);  // 49 MiB
}

// E5M2's code table is indexed by the whole element byte (kernels/encode_lanes.cuh): codebooks
// holding exponent 0 (+-0, denormals) and 31 (+-Inf, NaN payloads of both signs), one with 31 at
// code 0 (the code escapes also take in the sections), the data's own top-16, and the same
// calibrated on the device, through the grid and the solo kernel.
TEST(GpuCodecPaths, E5m2CodebooksWithExponents0And31) {
  SKIP_WITHOUT_GPU();
  const szCodebook_t edge = sztest::e5m2EdgeCodebook();
  const size_t big = (size_t(1) << 20) + 77;
  auto v = sztest::codedData(szFloat8e5m2, big, edge, 112);
  sztest::escapeAt(v, szFloat8e5m2, edge, sztest::positionsIn(0, big, big / 500, 113));  // exponents 1-7, 22-30
  for (int b : {0x00, 0x01, 0x02, 0x03, 0x80, 0x81, 0x82, 0x83, 0x7C, 0x7D, 0x7E, 0x7F, 0xFC, 0xFD, 0xFE, 0xFF})
    ASSERT_NE(std::count(v.begin(), v.begin() + 5003, uint8_t(b)), 0) << "byte " << b << " in every size";
  const szCodebook_t own = sztest::calibratedOn(szFloat8e5m2, v.data(), big);
  ASSERT_TRUE(sztest::inCodebook(own, 0) && sztest::inCodebook(own, 31));
  for (size_t n : {big, size_t(100000), kSoloElems, size_t(5003)}) {
    for (const szCodebook_t* cb : {&edge, &own, static_cast<const szCodebook_t*>(nullptr)}) {
      const int flags = cb ? 0 : SZ_ENCODE_CALIBRATE;
      SCOPED_TRACE(std::to_string(n) + " elements, " + (cb == &edge ? "31 at code 0" : cb ? "own" : "calibrated"));
      const szFrameInfo_t info = frameInfo(cpuEncode(v.data(), n, szFloat8e5m2, cb, flags));
      ASSERT_EQ(info.raw, 0);
      ASSERT_GT(info.escapeCount, 0u);
      ASSERT_TRUE(sztest::inCodebook(info.codebook, 0) && sztest::inCodebook(info.codebook, 31));
      expectSameAtEveryAlignment(v, n, szFloat8e5m2, cb, flags);
    }
  }
}

}  // namespace
