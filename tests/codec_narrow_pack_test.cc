// The GPU codec's FP16 and E4M3 lane packing (kernels/narrow_pack.h), run on the host lane by
// lane in the kernels' layout (kernels/decode_lanes.cuh LaneShape: 16 input bytes a lane, 32
// lanes a step, steps through each 1024-element chunk), against the CPU codec's reference chunk
// kernel: every lane's symbol and code bytes equal the sections' bytes at the lane's offsets, FP16's warp-wide
// aligned stores (spanWords) rebuild each step's sections exactly, the decoder's field loads
// (fieldFromWords) read them back, and the lane decode rebuilds every element. The device code
// calls these same functions (bytePerm there is __byte_perm, here its emulation), so this checks
// their bit layout without a GPU; the kernels' own steps (the code table's signless index, the
// masks of partial lanes, the escape records, the staged stores) are the GPU suite's to check.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "codec/chunk_codec.h"
#include "codec/code_bits.h"
#include "codec/frame.h"
#include "kernels/narrow_pack.h"
#include "splitzip.h"

namespace {

using sz::TypeTraits;

constexpr uint32_t kLaneBytes = 16;

// A frame's sign-mantissa and code sections as the CPU codec's reference kernel writes them,
// chunk by chunk (codec/chunk_portable.cc), with 16 bytes of slack after each.
struct Sections {
  std::vector<uint8_t> sm, codes;
};

Sections encodeCpu(const std::vector<uint8_t>& in, szDataType_t type, const szCodebook_t& cb) {
  const TypeTraits t = sz::typeTraits(type);
  const uint64_t count = in.size() / t.elemBytes;
  sz::FrameLayout l;
  EXPECT_TRUE(sz::computeLayout(type, count, &l, sz::codebookBits(cb)));
  sz::CodecTables tab;
  sz::buildTables(cb, &tab);
  Sections s;
  s.sm.assign(l.smBytes + 16, 0);
  s.codes.assign(l.codeBytes + 16, 0);
  std::vector<uint8_t> esc(3 * sz::kChunkElems);
  for (uint64_t first = 0; first < count; first += sz::kChunkElems) {
    const uint32_t n = uint32_t(count - first < sz::kChunkElems ? count - first : sz::kChunkElems);
    sz::encodeChunkPortable(t, in.data() + first * t.elemBytes, n, tab, s.sm.data() + first * t.smBits / 8,
                            s.codes.data() + first * l.codeBits / 8, esc.data());
  }
  return s;
}

uint32_t loadWordLe(const uint8_t* p, size_t avail) {
  uint32_t w = 0;
  for (size_t b = 0; b < 4 && b < avail; ++b) w |= uint32_t(p[b]) << (8 * b);
  return w;
}

// The first `bytes` bytes of little-endian words w.
std::vector<uint8_t> wordBytes(const uint32_t* w, uint32_t bytes) {
  std::vector<uint8_t> out(bytes);
  for (uint32_t b = 0; b < bytes; ++b) out[b] = uint8_t(w[b / 4] >> (8 * (b % 4)));
  return out;
}

// Walks every lane of every step of `in` as the kernels do, checking the frame's sections.
template <int kType, uint32_t kBits>
void checkLanes(const std::vector<uint8_t>& in, const szCodebook_t& cb) {
  constexpr TypeTraits T = sz::typeTraits(kType);
  constexpr uint32_t kElems = kLaneBytes / T.elemBytes, kStepElems = 32 * kElems;
  constexpr uint32_t kSmBytes = kElems * T.smBits / 8, kCodeBytes = kElems * kBits / 8;
  constexpr uint32_t kSmWords = (kSmBytes + 3) / 4;
  ASSERT_EQ(sz::codebookBits(cb), kBits);
  const Sections f = encodeCpu(in, szDataType_t(kType), cb);
  const uint8_t* smSec = f.sm.data();
  const uint8_t* codeSec = f.codes.data();
  const uint64_t count = in.size() / T.elemBytes;
  uint8_t table[256];  // exponent -> code, 0x80: escape (the device table's convention)
  memset(table, 0x80, sizeof(table));
  for (uint32_t i = 0; i < (1u << kBits); ++i) table[cb.exponents[i]] = uint8_t(i);
  for (uint64_t step0 = 0; step0 < count; step0 += kStepElems) {
    const bool wholeStep = step0 + kStepElems <= count;
    uint32_t smWords[32][kSmWords] = {}, codeWords[32][2] = {};
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint64_t e0 = step0 + lane * kElems;
      const uint32_t n = e0 >= count ? 0 : uint32_t(count - e0 < kElems ? count - e0 : kElems);
      uint32_t v[4] = {};
      for (uint32_t b = 0; b < n * T.elemBytes; ++b) v[b / 4] |= uint32_t(in[e0 * T.elemBytes + b]) << (8 * (b % 4));
      uint64_t nib = 0;
      uint32_t entries[4] = {};  // the table's entries, element k in byte k (as the kernels' lookups)
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t w = T.elemBytes == 2 ? (v[k / 2] >> (16 * (k % 2))) & 0xFFFF : (v[k / 4] >> (8 * (k % 4))) & 0xFF;
        nib |= uint64_t(table[T.exponent(w)] & 0xF) << (4 * k);
        entries[k / 4] |= uint32_t(table[T.exponent(w)]) << (8 * (k % 4));
      }
      if constexpr (kType == szFloat16) {
        uint32_t sm[3];
        sz::packFp16Symbols(v, sm);
        memcpy(smWords[lane], sm, sizeof(sm));
      } else {
        uint32_t sm[2];
        sz::packE4m3Symbols(v, sm);
        memcpy(smWords[lane], sm, sizeof(sm));
      }
      const uint64_t codes = kBits == 4 ? nib
                                        : sz::entriesToCodes3(entries[0], entries[1]) |
                                              uint64_t(sz::entriesToCodes3(entries[2], entries[3])) << 24;
      codeWords[lane][0] = uint32_t(codes);
      codeWords[lane][1] = uint32_t(codes >> 32);
      if (n == 0) continue;
      const uint64_t smOff = e0 * T.smBits / 8, codeOff = sz::codeByte<kBits>(e0);
      const uint32_t smN = (n * T.smBits + 7) / 8, codeN = (n * kBits + 7) / 8;
      ASSERT_EQ(wordBytes(smWords[lane], smN), std::vector<uint8_t>(smSec + smOff, smSec + smOff + smN))
          << "symbols of elements " << e0 << "+" << n;
      ASSERT_EQ(wordBytes(codeWords[lane], codeN), std::vector<uint8_t>(codeSec + codeOff, codeSec + codeOff + codeN))
          << "codes of elements " << e0 << "+" << n;
      // The decoder's view: fields read back through aligned words, then the lane's elements.
      uint32_t smIn[kSmWords], codeIn[2] = {};
      const uint8_t* sp = smSec + smOff;
      const uint32_t lead = uint32_t(smOff % 4);
      uint32_t w[kSmWords + 1];
      for (uint32_t i = 0; i <= kSmWords; ++i)
        w[i] = 4 * i < lead + kSmBytes ? loadWordLe(sp - lead + 4 * i, f.sm.data() + f.sm.size() - (sp - lead + 4 * i)) : 0;
      if (n == kElems) {
        sz::fieldFromWords<kSmBytes>(w, lead, smIn);
      } else {
        memset(smIn, 0, sizeof(smIn));
        for (uint32_t b = 0; b < smN; ++b) smIn[b / 4] |= uint32_t(sp[b]) << (8 * (b % 4));
      }
      for (uint32_t b = 0; b < codeN; ++b) codeIn[b / 4] |= uint32_t(codeSec[codeOff + b]) << (8 * (b % 4));
      const uint64_t back = sz::codesToNibbles<kBits>(codeIn[0] | uint64_t(codeIn[1]) << 32);
      uint32_t out[4];
      if constexpr (kType == szFloat16) {
        uint32_t ex[2] = {};
        for (uint32_t k = 0; k < 8; ++k) ex[k / 4] |= uint32_t(cb.exponents[(back >> (4 * k)) & 0xF]) << (8 * (k % 4));
        sz::joinFp16(smIn, ex, out);
      } else {
        for (uint32_t j = 0; j < 4; ++j) {
          uint32_t ex4 = 0;
          for (uint32_t b = 0; b < 4; ++b)
            ex4 |= uint32_t(cb.exponents[(back >> (4 * (4 * j + b))) & 0xF]) << (T.mantBits + 8 * b);
          out[j] = sz::joinE4m3x4((smIn[j / 2] >> (16 * (j & 1))) & 0xFFFF, ex4);
        }
      }
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t orig = T.elemBytes == 2 ? (v[k / 2] >> (16 * (k % 2))) & 0xFFFF : (v[k / 4] >> (8 * (k % 4))) & 0xFF;
        const uint32_t got = T.elemBytes == 2 ? (out[k / 2] >> (16 * (k % 2))) & 0xFFFF : (out[k / 4] >> (8 * (k % 4))) & 0xFF;
        // An escape decodes with code 0's exponent until its record patches the exponent field.
        const uint32_t want = table[T.exponent(orig)] & 0x80 ? T.join(T.signMantissa(orig), cb.exponents[0]) : orig;
        ASSERT_EQ(got, want) << "element " << e0 + k;
      }
    }
    // FP16's whole steps: the warp's aligned stores, each lane given the next lane's first word.
    if (kType == szFloat16 && wholeStep) {
      std::vector<uint8_t> smSpan(32 * kSmBytes, 0xEE), codeSpan(32 * kCodeBytes, 0xEE);
      for (uint32_t lane = 0; lane < 32; ++lane) {
        const uint32_t next = lane < 31 ? 1 : 0;
        uint32_t sw[3];
        uint32_t sm[3];
        memcpy(sm, smWords[lane], sizeof(sm));
        const uint32_t sh = sz::spanWords<11>(sm, smWords[lane + next][0], lane, sw);
        for (uint32_t i = 0; i < 3; ++i)
          if (sh + 4 * i < 11) memcpy(&smSpan[11 * lane + sh + 4 * i], &sw[i], 4);
        if constexpr (kBits == 3) {
          const uint32_t x[1] = {codeWords[lane][0]};
          uint32_t cw[1];
          const uint32_t ch = sz::spanWords<3>(x, codeWords[lane + next][0], lane, cw);
          if (ch < 3) memcpy(&codeSpan[3 * lane + ch], &cw[0], 4);
        } else {
          memcpy(&codeSpan[4 * lane], &codeWords[lane][0], 4);
        }
      }
      const uint64_t smOff = step0 * 11 / 8, codeOff = sz::codeByte<kBits>(step0);
      ASSERT_EQ(smSpan, std::vector<uint8_t>(smSec + smOff, smSec + smOff + smSpan.size())) << "step at " << step0;
      ASSERT_EQ(codeSpan, std::vector<uint8_t>(codeSec + codeOff, codeSec + codeOff + codeSpan.size()))
          << "step at " << step0;
    }
  }
}

szCodebook_t codebookOf(szDataType_t type, uint32_t bits, const std::vector<uint8_t>& data) {
  szHistogram_t hist;
  EXPECT_EQ(szHistogramInit(&hist, type), szSuccess);
  EXPECT_EQ(szHistogramAccumulate(&hist, data.data(), data.size() / sz::typeTraits(type).elemBytes), szSuccess);
  szCodebook_t cb;
  EXPECT_EQ(szCodebookFromHistogramBits(&hist, int(bits), &cb), szSuccess);
  return cb;
}

// KV-like FP16: exponents around 14 with a thin tail, every so often a pattern of all 65536.
std::vector<uint8_t> fp16Data(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, 2.f);
  std::vector<uint8_t> v(2 * n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t h;
    if (i % 61 == 7) {
      h = uint32_t(i * 40503u) & 0xFFFF;
    } else {
      const int e = 14 + int(g(rng));
      h = (rng() & 0x83FF) | (uint32_t(e < 0 ? 0 : e > 31 ? 31 : e) << 10);
    }
    v[2 * i] = uint8_t(h);
    v[2 * i + 1] = uint8_t(h >> 8);
  }
  return v;
}

// E4M3: every byte value at every position of a lane, in KV-like surroundings.
std::vector<uint8_t> e4m3Data(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, 1.5f);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const int e = 7 + int(g(rng));
    v[i] = uint8_t((rng() & 0x87) | (uint32_t(e < 0 ? 0 : e > 15 ? 15 : e) << 3));
  }
  for (size_t i = 0; i < 256 * 16 && i < n; ++i) v[(i / 16) * 97 % (n - 16) / 16 * 16 + i % 16] = uint8_t(i / 16);
  return v;
}

TEST(NarrowPack, Codes3RoundTrip) {
  // Entries of codes c0..c7 (escape flags 0x80 on some: they code as 0), to 24 bits and back.
  for (uint32_t c = 0; c < (1u << 24); c += 7) {
    uint32_t wa = 0, wb = 0, plain = 0;
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t code = (c >> (3 * k)) & 7, escape = (c % 5 == k % 5) ? 0x80 : 0;
      (k < 4 ? wa : wb) |= (escape != 0 ? escape : code) << (8 * (k % 4));
      plain |= (escape != 0 ? 0 : code) << (3 * k);
    }
    ASSERT_EQ(sz::entriesToCodes3(wa, wb), plain) << c;
    ASSERT_EQ(sz::codes3ToNibbles(plain), [&] {
      uint32_t nib = 0;
      for (uint32_t k = 0; k < 8; ++k) nib |= ((plain >> (3 * k)) & 7) << (4 * k);
      return nib;
    }()) << c;
  }
  EXPECT_EQ(sz::entriesToCodes3(0x03020100, 0x07060504), 0u | 1u << 3 | 2u << 6 | 3u << 9 | 4u << 12 | 5u << 15 | 6u << 18 | 7u << 21);
}

TEST(NarrowPack, Fp16LanesMatchCpuFrames) {
  for (uint32_t bits : {4u, 3u}) {
    const std::vector<uint8_t> v = fp16Data(70001, 5 + bits);
    const szCodebook_t cb = codebookOf(szFloat16, bits, v);
    for (size_t n : {size_t(70001), size_t(1024), size_t(257), size_t(9)}) {
      const std::vector<uint8_t> part(v.begin(), v.begin() + 2 * n);
      if (bits == 4) checkLanes<szFloat16, 4>(part, cb);
      else checkLanes<szFloat16, 3>(part, cb);
    }
  }
}

TEST(NarrowPack, EveryFp16PatternMatchesCpuFrames) {
  // All 65536 patterns, amid codable elements so the frame stays compressed.
  for (uint32_t bits : {4u, 3u}) {
    std::vector<uint8_t> v = fp16Data(65536 * 8, 11);
    const szCodebook_t cb = codebookOf(szFloat16, bits, v);
    for (uint32_t p = 0; p < 65536; ++p) {
      v[16 * p + 2 * (p % 8)] = uint8_t(p);
      v[16 * p + 2 * (p % 8) + 1] = uint8_t(p >> 8);
    }
    if (bits == 4) checkLanes<szFloat16, 4>(v, cb);
    else checkLanes<szFloat16, 3>(v, cb);
  }
}

TEST(NarrowPack, E4m3LanesMatchCpuFrames) {
  for (uint32_t bits : {4u, 3u}) {
    const std::vector<uint8_t> v = e4m3Data(100003, 3 + bits);
    const szCodebook_t cb = codebookOf(szFloat8e4m3, bits, v);
    for (size_t n : {size_t(100003), size_t(1024), size_t(513), size_t(17)}) {
      const std::vector<uint8_t> part(v.begin(), v.begin() + n);
      if (bits == 4) checkLanes<szFloat8e4m3, 4>(part, cb);
      else checkLanes<szFloat8e4m3, 3>(part, cb);
    }
  }
}

}  // namespace
