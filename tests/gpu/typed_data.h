// Test data of the compressible types for the GPU codec tests: KV-like values with the special
// patterns scattered through them (typedData); elements on a codebook's exponents (codedData)
// with escapes exactly where a test puts them (escapeAt), so a chunk or a frame gets any escape
// count a test needs; and the section sizes of docs/FORMAT.md, which say how many escapes a
// compressed frame holds before it must go raw (escapeBudget) and where its chunk counts are.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "splitzip.h"
#include "tests/encode_frame.h"
#include "tests/kv_like.h"

namespace sztest {

// KV-like values of `type` with the special patterns (NaN payloads of both signs, +-Inf, -0,
// denormals) scattered through them; random bytes for the types stored raw.
inline std::vector<uint8_t> typedData(szDataType_t type, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n * szTypeSize(type));
  if (type == szBfloat16) {
    auto kv = kvLikeBf16(n, seed, 0.8f);
    const uint16_t special[] = {0x7FC1, 0xFF81, 0x7FFF, 0x7F80, 0xFF80, 0x8000, 0x0000, 0x0001, 0x807F, 0x0080};
    for (size_t i = 0; i < n; i += 97 + rng() % 300) kv[i] = special[rng() % 10];
    memcpy(v.data(), kv.data(), v.size());
  } else if (type == szFloat32) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<uint32_t> f(n);
    for (auto& x : f) {
      float y = d(rng);
      memcpy(&x, &y, 4);
    }
    const uint32_t special[] = {0x7FC00001, 0xFF800001, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001, 0x807FFFFF};
    for (size_t i = 0; i < n; i += 89 + rng() % 300) f[i] = special[rng() % 7];
    memcpy(v.data(), f.data(), v.size());
  } else if (type == szFloat8e5m2) {
    szCodebook_t cb;
    szCodebookDefault(szFloat8e5m2, &cb);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t((rng() & 0x83) | (cb.exponents[rng() % 8] << 2));
    const uint8_t special[] = {0x7F, 0xFD, 0x7D, 0x7C, 0xFC, 0x80, 0x00, 0x01, 0x83};
    for (size_t i = 0; i < n; i += 61 + rng() % 300) v[i] = special[rng() % 9];
  } else if (type == szFloat16 || type == szFloat8e4m3) {
    // KV-like: exponents spread about the defaults' first entries (a spread of 1.2), so 3- and
    // 4-bit codebooks both compress (format version 2), with the special patterns: FP16's NaN
    // payloads, +-Inf, -0, denormals; E4M3's NaNs (0x7F, 0xFF), -0, subnormals and +-448.
    const bool fp16 = type == szFloat16;
    std::normal_distribution<float> d(0.0f, 1.2f);
    const int mid = fp16 ? 14 : 12, top = fp16 ? 31 : 15;  // E4M3 about 12, as KV scaled amax -> 448
    for (size_t i = 0; i < n; ++i) {
      const int e = std::min(top, std::max(0, mid + int(std::lround(d(rng)))));
      const uint32_t r = rng();
      if (fp16) {
        const uint16_t x = uint16_t((r & 0x83FF) | uint32_t(e) << 10);
        memcpy(&v[2 * i], &x, 2);
      } else {
        v[i] = uint8_t((r & 0x87) | uint32_t(e) << 3);
      }
    }
    const uint16_t special16[] = {0x7E01, 0xFD55, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x83FF, 0x7BFF};
    const uint8_t special8[] = {0x7F, 0xFF, 0x80, 0x01, 0x87, 0x7E, 0xFE};
    for (size_t i = 0; i < n; i += 97 + rng() % 300) {
      if (fp16) memcpy(&v[2 * i], &special16[rng() % 8], 2);
      else v[i] = special8[rng() % 7];
    }
  } else {
    for (auto& b : v) b = uint8_t(rng());
  }
  return v;
}

inline uint32_t expBitsOf(szDataType_t t) { return t == szFloat8e5m2 || t == szFloat16 ? 5 : t == szFloat8e4m3 ? 4 : 8; }
inline uint32_t mantBitsOf(szDataType_t t) {
  return t == szBfloat16 ? 7 : t == szFloat32 ? 23 : t == szFloat16 ? 10 : t == szFloat8e4m3 ? 3 : 2;
}

// Element i of `v` (little-endian, as the codec reads it) and its replacement.
inline uint32_t elemAt(const std::vector<uint8_t>& v, szDataType_t t, size_t i) {
  uint32_t w = 0;
  memcpy(&w, &v[i * szTypeSize(t)], szTypeSize(t));
  return w;
}
inline void setElem(std::vector<uint8_t>& v, szDataType_t t, size_t i, uint32_t w) {
  memcpy(&v[i * szTypeSize(t)], &w, szTypeSize(t));
}

inline uint32_t exponentAt(const std::vector<uint8_t>& v, szDataType_t t, size_t i) {
  return (elemAt(v, t, i) >> mantBitsOf(t)) & ((1u << expBitsOf(t)) - 1);
}

// `w` with its biased exponent replaced by `e` (sign and mantissa kept).
inline uint32_t withExponent(szDataType_t t, uint32_t w, uint32_t e) {
  const uint32_t mant = mantBitsOf(t), mask = ((1u << expBitsOf(t)) - 1) << mant;
  return (w & ~mask) | (e << mant);
}

// A codebook of `type` with these 16 exponents, all of them seen.
inline szCodebook_t codebookOf(szDataType_t type, const std::vector<uint32_t>& exps) {
  szCodebook_t cb{};
  cb.type = type;
  cb.used = SZ_CODEBOOK_SIZE;
  EXPECT_EQ(exps.size(), size_t(SZ_CODEBOOK_SIZE));
  for (size_t i = 0; i < exps.size() && i < SZ_CODEBOOK_SIZE; ++i) cb.exponents[i] = uint8_t(exps[i]);
  EXPECT_EQ(szCodebookValidate(&cb), szSuccess) << szGetLastError(nullptr);
  return cb;
}

// The codebook of the 16 exponents first, first + 1, ..., first + 15.
inline szCodebook_t codebookFrom(szDataType_t type, uint32_t first) {
  std::vector<uint32_t> exps(SZ_CODEBOOK_SIZE);
  std::iota(exps.begin(), exps.end(), first);
  return codebookOf(type, exps);
}

inline szCodebook_t defaultCodebook(szDataType_t type) {
  szCodebook_t cb{};
  EXPECT_EQ(szCodebookDefault(type, &cb), szSuccess);
  return cb;
}

// The top-16 codebook of `count` elements at `data` (paper §3.3).
inline szCodebook_t calibratedOn(szDataType_t type, const void* data, size_t count) {
  return calibratedCodebook(data, count, type, 0);
}

inline bool inCodebook(const szCodebook_t& cb, uint32_t e) {
  return std::find(cb.exponents, cb.exponents + SZ_CODEBOOK_SIZE, uint8_t(e)) != cb.exponents + SZ_CODEBOOK_SIZE;
}

// `count` elements with random signs and mantissas whose exponents are `cb`'s, each of its 16
// codes (8 of a 3-bit codebook) equally likely: not one escape.
inline std::vector<uint8_t> codedData(szDataType_t type, size_t count, const szCodebook_t& cb, uint64_t seed) {
  int codeBits = 4;
  EXPECT_EQ(szCodebookCodeBits(&cb, &codeBits), szSuccess);
  const uint64_t codes = uint64_t(1) << codeBits;
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(count * szTypeSize(type));
  const uint32_t bits = 8 * uint32_t(szTypeSize(type)), mant = mantBitsOf(type);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng();
    const uint32_t w = uint32_t(r & ((1u << mant) - 1)) | uint32_t(cb.exponents[(r >> 32) % codes]) << mant |
                       uint32_t((r >> 63) & 1) << (bits - 1);
    setElem(v, type, i, w);
  }
  return v;
}

// Makes the elements at `positions` escapes under `cb`: each takes the next exponent outside the
// codebook in turn, its sign and mantissa kept, so the escapes carry every such exponent (zero
// and denormals, Inf and NaN payloads, where the codebook lacks them).
inline void escapeAt(std::vector<uint8_t>& v, szDataType_t type, const szCodebook_t& cb,
                     const std::vector<size_t>& positions) {
  std::vector<uint32_t> outside;
  for (uint32_t e = 0; e < (1u << expBitsOf(type)); ++e)
    if (!inCodebook(cb, e)) outside.push_back(e);
  size_t k = 0;
  for (size_t i : positions) setElem(v, type, i, withExponent(type, elemAt(v, type, i), outside[k++ % outside.size()]));
}

// `k` (<= len) distinct positions in [first, first + len), in increasing order: the first and
// the last of the span when k >= 2, the rest drawn at random.
inline std::vector<size_t> positionsIn(size_t first, size_t len, size_t k, uint64_t seed) {
  const bool most = k > len / 2;  // then the positions left out are drawn instead
  std::vector<char> taken(len, most);
  std::mt19937_64 rng(seed);
  size_t got = 0;
  auto flip = [&](size_t i) {
    if (taken[i] == most) {
      taken[i] = !most;
      ++got;
    }
  };
  const bool ends = k >= 2;
  if (ends && !most) {
    flip(0);
    flip(len - 1);
  }
  while (got < (most ? len - k : k)) {
    const size_t i = rng() % len;
    if (!(most && ends && (i == 0 || i == len - 1))) flip(i);
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < len; ++i)
    if (taken[i]) out.push_back(first + i);
  return out;
}

// The sections of a compressed frame of `count` elements of `type` with `codeBits`-bit codes
// (docs/FORMAT.md).
struct FrameSections {
  uint64_t chunks, groups;
  uint64_t fixed;      // payload bytes before the escape section
  uint64_t countsOff;  // the chunk counts, from the frame's start
  uint64_t raw;        // count * element size
};
inline FrameSections frameSections(size_t count, szDataType_t type, int codeBits = 4) {
  auto a16 = [](uint64_t x) { return (x + 15) / 16 * 16; };
  FrameSections s;
  s.chunks = (count + 1023) / 1024;
  s.groups = (s.chunks + 31) / 32;
  const uint64_t smBytes = (uint64_t(count) * (8 * szTypeSize(type) - expBitsOf(type)) + 7) / 8;
  const uint64_t codeBytes = (uint64_t(count) * uint64_t(codeBits) + 7) / 8;
  s.countsOff = SZ_FRAME_HEADER_BYTES + a16(smBytes) + a16(codeBytes) + 8 * s.groups;
  s.fixed = a16(smBytes) + a16(codeBytes) + a16(8 * s.groups + 2 * s.chunks);
  s.raw = uint64_t(count) * szTypeSize(type);
  return s;
}

// The most escapes a compressed frame of `count` elements holds: it goes raw once its payload
// (the fixed sections and 3 bytes an escape) would reach the raw size. 0 also where the fixed
// sections alone reach it (tiny counts, always raw): tests use larger ones.
inline uint64_t escapeBudget(size_t count, szDataType_t type) {
  const FrameSections s = frameSections(count, type);
  return s.fixed >= s.raw ? 0 : (s.raw - s.fixed - 1) / 3;
}

inline szFrameInfo_t frameInfo(const std::vector<uint8_t>& frame) {
  szFrameInfo_t info{};
  EXPECT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess) << szGetLastError(nullptr);
  return info;
}

// Where a test puts k escapes among n elements: anywhere, or all in a run at the start (chunks
// of escapes only, the budget reached early) or at the end (reached in the last chunks).
enum class Where { kAnywhere, kAtStart, kAtEnd };
inline const char* whereName(Where w) {
  return w == Where::kAnywhere ? "anywhere" : w == Where::kAtStart ? "at the start" : "at the end";
}
inline std::vector<size_t> escapePositions(size_t n, size_t k, Where w, uint64_t seed) {
  return w == Where::kAnywhere ? positionsIn(0, n, k, seed) : positionsIn(w == Where::kAtStart ? 0 : n - k, k, k, seed);
}

// `frame` (of `count` elements of `type`, holding `escapes` escapes against the budget) is on the
// side of the budget it must be: compressed with every escape and within 3 bytes of the raw
// size (the budget is tight), or raw one escape past it.
inline void expectBudgetSide(const std::vector<uint8_t>& frame, size_t count, szDataType_t type, uint64_t escapes) {
  const uint64_t budget = escapeBudget(count, type);
  const szFrameInfo_t info = frameInfo(frame);
  if (escapes <= budget) {
    EXPECT_EQ(info.raw, 0) << escapes << " escapes, budget " << budget << ": compressed";
    EXPECT_EQ(info.escapeCount, escapes);
    if (escapes == budget) {
      EXPECT_GE(frame.size() + 3, SZ_FRAME_HEADER_BYTES + count * szTypeSize(type)) << "a tight budget";
    }
  } else {
    EXPECT_EQ(info.raw, 1) << escapes << " escapes, budget " << budget << ": raw";
  }
}

// The escapes of each chunk of a compressed frame, from its counts section.
inline std::vector<uint32_t> chunkEscapeCounts(const std::vector<uint8_t>& frame) {
  const szFrameInfo_t info = frameInfo(frame);
  int codeBits = 4;
  if (!info.raw) {
    EXPECT_EQ(szCodebookCodeBits(&info.codebook, &codeBits), szSuccess);
  }
  const FrameSections s = frameSections(info.count, info.type, codeBits);
  std::vector<uint32_t> counts;
  if (info.raw || frame.size() < s.countsOff + 2 * s.chunks) return counts;
  for (uint64_t c = 0; c < s.chunks; ++c)
    counts.push_back(uint32_t(frame[s.countsOff + 2 * c] | frame[s.countsOff + 2 * c + 1] << 8));
  return counts;
}

// An E5M2 codebook holding the exponents of zeros and denormals (0) and of Inf and NaN (31):
// 31 has code 0, the code the sections also hold for every escape, and 0 the last code.
inline szCodebook_t e5m2EdgeCodebook() {
  return codebookOf(szFloat8e5m2, {31, 15, 14, 16, 13, 17, 12, 18, 11, 19, 10, 20, 9, 21, 8, 0});
}

}  // namespace sztest
