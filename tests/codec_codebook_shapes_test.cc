// Frames under codebooks of every shape, byte-compared with the reference encoder of
// docs/FORMAT.md: the AVX2 BF16 encoder splits the codebook by the exponents' high nibbles,
// so codebooks spanning one, two or all sixteen high nibbles, holding exponents 0 and 255, or
// seen once (used = 1) must all give the spec's frame.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "reference_frame.h"
#include "splitzip.h"

namespace {

szCodebook_t bf16Codebook(std::vector<uint8_t> exps, int used) {
  szCodebook_t cb;
  cb.type = szBfloat16;
  cb.used = used;
  memcpy(cb.exponents, exps.data(), SZ_CODEBOOK_SIZE);
  EXPECT_EQ(szCodebookValidate(&cb), szSuccess) << szGetLastError(nullptr);
  return cb;
}

// Elements whose exponents are mostly codebook entries (every entry used), one in `every`
// taken from anywhere in 0..255; signs and mantissas random.
std::vector<uint16_t> dataFor(const szCodebook_t& cb, size_t n, size_t every, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t r = rng(), e = i % every == 0 ? (r >> 24) : cb.exponents[(r >> 8) % 16];
    v[i] = uint16_t((r & 0x807F) | (e << 7));
  }
  return v;
}

void expectMatchesReference(const szCodebook_t& cb, const std::vector<uint16_t>& v, const char* what) {
  size_t max = 0, bytes = 0;
  ASSERT_EQ(szEncodeMaxSize(v.size(), szBfloat16, &max), szSuccess);
  std::vector<uint8_t> frame(max);
  ASSERT_EQ(szEncode(v.data(), v.size(), szBfloat16, &cb, 0, frame.data(), max, &bytes), szSuccess);
  frame.resize(bytes);
  auto ref = sztest::referenceEncode(v.data(), v.size(), szBfloat16, cb, false);
  ASSERT_EQ(frame.size(), ref.size()) << what << ", " << v.size() << " elements";
  ASSERT_TRUE(frame == ref) << what << ", " << v.size() << " elements";
  std::vector<uint16_t> out(v.size() + 1, 0xA5A5);
  ASSERT_EQ(szDecode(frame.data(), bytes, out.data(), 2 * v.size(), nullptr, nullptr), szSuccess);
  EXPECT_EQ(out.back(), 0xA5A5);
  out.pop_back();
  EXPECT_EQ(out, v) << what;
}

TEST(CodecCodebookShapes, FramesMatchTheReferenceEncoder) {
  const struct {
    const char* what;
    szCodebook_t cb;
  } books[] = {
      {"one high nibble (0x70..0x7F)",
       bf16Codebook({0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x7B, 0x7C, 0x7D, 0x7E, 0x7F}, 16)},
      {"two high nibbles (KV-like 115..130)",
       bf16Codebook({127, 126, 128, 125, 124, 123, 129, 122, 121, 120, 119, 118, 117, 116, 130, 115}, 16)},
      {"all sixteen high nibbles",
       bf16Codebook({0x05, 0x1A, 0x2F, 0x30, 0x4B, 0x56, 0x61, 0x7C, 0x87, 0x92, 0xAD, 0xB8, 0xC3, 0xDE, 0xE9, 0xF4}, 16)},
      {"extremes 0 and 255, used = 1",
       bf16Codebook({0, 255, 1, 254, 2, 253, 3, 252, 4, 251, 5, 250, 6, 249, 7, 248}, 1)},
  };
  for (const auto& b : books) {
    for (size_t n : {1, 31, 32, 33, 1023, 1024, 1025, 70001}) {
      expectMatchesReference(b.cb, dataFor(b.cb, n, 37, uint32_t(n)), b.what);  // ~2.7% escapes
      expectMatchesReference(b.cb, dataFor(b.cb, n, 1u << 30, uint32_t(n) + 1), b.what);  // none
    }
  }
}

}  // namespace
