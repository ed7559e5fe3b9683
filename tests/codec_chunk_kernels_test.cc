// The CPU codec's per-chunk kernels agree byte for byte: the eight-element steps (portable C++
// and BMI2) and the 32-element AVX2 steps of FP16 and E4M3, where this CPU has them, against the
// one-element-at-a-time portable reference, for
// every type and code width they serve, at chunk lengths that leave tails, with escapes in every
// position of a step; and each decodes what it encoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codec/chunk_codec.h"
#include "codec/code_bits.h"

namespace {

using sz::ChunkCodec;
using sz::CodecTables;
using sz::TypeTraits;

struct Encoded {
  std::vector<uint8_t> sm, codes, esc;
  uint32_t escapes = 0;
};

Encoded encodeWith(const ChunkCodec& c, const TypeTraits& t, const std::vector<uint8_t>& in, uint32_t n,
                   const CodecTables& tab) {
  Encoded e;
  e.sm.assign((size_t(n) * t.smBits + 7) / 8 + 16, 0xA5);
  e.codes.assign((size_t(n) * tab.codeBits + 7) / 8 + 16, 0xA5);
  e.esc.assign(size_t(n) * 3 + 16, 0);
  // The frame's sections start zeroed where they are bit-packed, as szEncode leaves them.
  if (t.smBits % 8) memset(e.sm.data(), 0, e.sm.size() - 16);
  memset(e.codes.data(), 0, e.codes.size() - 16);
  e.escapes = c.encode(t, in.data(), n, tab, e.sm.data(), e.codes.data(), e.esc.data());
  e.esc.resize(size_t(e.escapes) * 3);
  return e;
}

TEST(CodecChunkKernels, StepsAndBmi2MatchThePortableKernel) {
  std::mt19937 rng(21);
  int kernels = 0;
  for (szDataType_t type : {szBfloat16, szFloat16, szFloat8e5m2, szFloat8e4m3}) {
    const TypeTraits t = sz::typeTraits(type);
    for (uint32_t bits : {3u, 4u}) {
      // A codebook of the first 2^bits exponents from the middle of the range; others escape.
      szCodebook_t cb;
      cb.type = type;
      cb.used = int(1u << bits);
      memset(cb.exponents, SZ_CODEBOOK_UNUSED, sizeof(cb.exponents));
      const uint32_t base = (1u << t.expBits) / 2 - (1u << bits) / 2;
      for (uint32_t i = 0; i < (1u << bits); ++i) cb.exponents[i] = uint8_t(base + i);
      // E4M3 with 4-bit codes: all 16 exponents in the codebook, so no escapes (its frames store
      // raw, but the kernels must still agree).
      CodecTables tab;
      sz::buildTables(cb, &tab);
      ASSERT_EQ(tab.codeBits, bits);
      std::vector<ChunkCodec> candidates;
      ChunkCodec c;
      if (sz::stepsChunkCodec(type, bits, &c)) candidates.push_back(c);
      if (__builtin_cpu_supports("bmi2") && sz::bmi2ChunkCodec(type, bits, &c)) candidates.push_back(c);
      if (__builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx2") && sz::avx2NarrowChunkCodec(type, bits, &c))
        candidates.push_back(c);
      candidates.push_back(sz::selectChunkCodec(type, bits));  // this CPU's pick (E4M3: AVX-512's decoder where it has one)
      ASSERT_FALSE(candidates.empty());
      for (uint32_t n : {1u, 7u, 8u, 9u, 31u, 32u, 33u, 63u, 64u, 65u, 1000u, 1023u, 1024u}) {
        std::vector<uint8_t> in(size_t(n) * t.elemBytes);
        for (uint32_t i = 0; i < n; ++i) {
          const uint32_t r = rng();
          // One element in five escapes, at every offset of a step over the sizes.
          const uint32_t e = r % 5 == 0 ? (base + (1u << bits) + r % 3) % (1u << t.expBits) : base + (r >> 8) % (1u << bits);
          const uint32_t w = t.join((r >> 3) & ((1u << t.smBits) - 1), e);
          memcpy(&in[size_t(i) * t.elemBytes], &w, t.elemBytes);
        }
        const ChunkCodec ref{sz::encodeChunkPortable, sz::decodeChunkPortable, "portable"};
        const Encoded want = encodeWith(ref, t, in, n, tab);
        for (const ChunkCodec& k : candidates) {
          SCOPED_TRACE(std::string(k.name) + " n=" + std::to_string(n));
          const Encoded got = encodeWith(k, t, in, n, tab);
          EXPECT_EQ(got.escapes, want.escapes);
          EXPECT_TRUE(got.sm == want.sm) << "sign-mantissa section (or the 16 guard bytes) differs";
          EXPECT_TRUE(got.codes == want.codes) << "code section (or the 16 guard bytes) differs";
          EXPECT_TRUE(got.esc == want.esc) << "escape records differ";
          std::vector<uint8_t> out(in.size() + 1, 0x5A), refOut(in.size() + 1, 0x5A);
          k.decode(t, got.sm.data(), got.codes.data(), n, tab, out.data());
          ref.decode(t, want.sm.data(), want.codes.data(), n, tab, refOut.data());
          EXPECT_TRUE(out == refOut) << "decodes differ (escapes not yet applied)";
          EXPECT_EQ(out.back(), 0x5A) << "decoder wrote past its output";
          ++kernels;
        }
      }
    }
  }
  EXPECT_GE(kernels, 8 * 13) << "every type and width has a step kernel";
}

// E4M3 with its 3-bit default codebook on arbitrary bytes: every byte value (NaN 0x7F/0xFF, +-0,
// subnormals, exponents 0 and 15 as escapes) at every position of a step, escapes from none to
// most elements of a step, against the portable kernel.
TEST(CodecChunkKernels, E4m3KernelsMatchThePortableOneOnEveryByte) {
  const TypeTraits t = sz::typeTraits(szFloat8e4m3);
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e4m3, &cb), szSuccess);
  ASSERT_EQ(sz::codebookBits(cb), 3u);
  CodecTables tab;
  sz::buildTables(cb, &tab);
  std::vector<ChunkCodec> candidates;
  ChunkCodec c;
  if (sz::stepsChunkCodec(szFloat8e4m3, 3, &c)) candidates.push_back(c);
  if (__builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx2") && sz::avx2NarrowChunkCodec(szFloat8e4m3, 3, &c))
    candidates.push_back(c);
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi"))
    candidates.push_back(ChunkCodec{sz::encodeChunkPortable, sz::e4m3DecodeVbmi(3), "avx512vbmi decode"});
  ASSERT_FALSE(candidates.empty());
  const ChunkCodec ref{sz::encodeChunkPortable, sz::decodeChunkPortable, "portable"};
  std::mt19937 rng(33);
  int cases = 0;
  for (uint32_t n : {1u, 31u, 32u, 33u, 95u, 1024u}) {
    for (uint32_t shift = 0; shift < 256; shift += 37) {  // every byte value lands on many positions
      std::vector<uint8_t> in(n);
      for (uint32_t i = 0; i < n; ++i) in[i] = uint8_t(i * 7 + shift + (rng() % 3 == 0 ? rng() : 0));
      const Encoded want = encodeWith(ref, t, in, n, tab);
      for (const ChunkCodec& k : candidates) {
        SCOPED_TRACE(std::string(k.name) + " n=" + std::to_string(n) + " shift=" + std::to_string(shift));
        const Encoded got = encodeWith(k, t, in, n, tab);
        EXPECT_EQ(got.escapes, want.escapes);
        EXPECT_TRUE(got.sm == want.sm && got.codes == want.codes && got.esc == want.esc) << "sections differ";
        std::vector<uint8_t> out(n + 1, 0x5A);
        k.decode(t, got.sm.data(), got.codes.data(), n, tab, out.data());
        for (uint32_t e = 0; e < got.escapes; ++e)  // the escapes, as the frame decoder applies them
          out[got.esc[3 * e] | got.esc[3 * e + 1] << 8] =
              uint8_t((out[got.esc[3 * e] | got.esc[3 * e + 1] << 8] & ~0x78) | got.esc[3 * e + 2] << 3);
        EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin())) << "the decoded bytes differ from the input";
        EXPECT_EQ(out.back(), 0x5A) << "decoder wrote past its output";
        ++cases;
      }
      if (n >= 32) {
        EXPECT_GT(want.escapes, 0u) << "arbitrary bytes escape (exponents outside the 8 of the codebook)";
      }
    }
  }
  EXPECT_GE(cases, 6 * 7);
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi")) {
    EXPECT_STREQ(sz::selectChunkCodec(szFloat8e4m3, 3).name, "avx2-narrow, avx512vbmi decode") << "this CPU's pick";
  }
}

// FP16 on every bit pattern (NaN payloads, Inf, -0, subnormals), in chunks of 1024 in order and
// shuffled, with its 4-bit default codebook and a 3-bit one, against the portable kernel.
TEST(CodecChunkKernels, Fp16KernelsMatchThePortableOneOnEveryPattern) {
  const TypeTraits t = sz::typeTraits(szFloat16);
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  std::vector<uint16_t> shuffled = all;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(7));
  szCodebook_t four, three;
  ASSERT_EQ(szCodebookDefault(szFloat16, &four), szSuccess);
  three = four;
  for (int i = 8; i < SZ_CODEBOOK_SIZE; ++i) three.exponents[i] = SZ_CODEBOOK_UNUSED;
  three.used = 8;
  int cases = 0;
  for (const szCodebook_t* cb : {&four, &three}) {
    CodecTables tab;
    sz::buildTables(*cb, &tab);
    ASSERT_EQ(tab.codeBits, cb == &four ? 4u : 3u);
    ChunkCodec k;
    if (!(__builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx2") &&
          sz::avx2NarrowChunkCodec(szFloat16, tab.codeBits, &k)))
      GTEST_SKIP() << "this CPU has no AVX2 and BMI2";
    const ChunkCodec ref{sz::encodeChunkPortable, sz::decodeChunkPortable, "portable"};
    for (const std::vector<uint16_t>* src : {&all, &shuffled})
      for (size_t first = 0; first < src->size(); first += 1024) {
        const uint32_t n = first + 1024 <= src->size() ? 1024 : uint32_t(src->size() - first);
        std::vector<uint8_t> in(size_t(n) * 2);
        memcpy(in.data(), src->data() + first, in.size());
        const Encoded want = encodeWith(ref, t, in, n, tab), got = encodeWith(k, t, in, n, tab);
        ASSERT_EQ(got.escapes, want.escapes) << "codes " << tab.codeBits << ", chunk at " << first;
        ASSERT_TRUE(got.sm == want.sm && got.codes == want.codes && got.esc == want.esc)
            << "sections differ: codes " << tab.codeBits << ", chunk at " << first;
        std::vector<uint8_t> out(in.size() + 1, 0x5A), refOut(in.size() + 1, 0x5A);
        k.decode(t, got.sm.data(), got.codes.data(), n, tab, out.data());
        ref.decode(t, want.sm.data(), want.codes.data(), n, tab, refOut.data());
        ASSERT_TRUE(out == refOut) << "decodes differ: codes " << tab.codeBits << ", chunk at " << first;
        ++cases;
      }
  }
  EXPECT_EQ(cases, 2 * 2 * 64);
}

}  // namespace
