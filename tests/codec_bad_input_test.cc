// Hostile and invalid inputs to the host codec: truncated and bit-flipped frames, forged escape
// indexes and section sizes, too-small outputs, bad codebooks and size arithmetic past 2^31.
// Every decode runs into a buffer with guard bytes behind its capacity: whatever the frame
// says, nothing past outCapacity may change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "encode_frame.h"
#include "splitzip.h"

namespace {

constexpr size_t kGuard = 64;
constexpr uint8_t kFill = 0xA5;


struct Decoded {
  szResult_t res;
  std::vector<uint8_t> out;  // the first `capacity` bytes of the output buffer
  bool guardIntact;
};

// Decodes the first `available` bytes of `frame` into `capacity` bytes followed by guard bytes.
Decoded decodeGuarded(const std::vector<uint8_t>& frame, size_t available, size_t capacity) {
  std::vector<uint8_t> buf(capacity + kGuard, kFill);
  Decoded d;
  d.res = szDecode(frame.data(), available, buf.data(), capacity, nullptr, nullptr);
  d.guardIntact = std::all_of(buf.begin() + capacity, buf.end(), [](uint8_t b) { return b == kFill; });
  d.out.assign(buf.begin(), buf.begin() + capacity);
  return d;
}

szResult_t infoResult(const std::vector<uint8_t>& frame, size_t available) {
  szFrameInfo_t info;
  return szFrameGetInfo(frame.data(), available, &info);
}

uint64_t getLe(const std::vector<uint8_t>& f, size_t off, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | f[off + i];
  return v;
}
void setLe(std::vector<uint8_t>& f, size_t off, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) f[off + i] = uint8_t(v >> (8 * i));
}

// Section offsets of a compressed frame, from its header, by docs/FORMAT.md.
struct Sections {
  uint64_t count, chunks, groups, indexOff, countsOff, escOff;
};
Sections sectionsOf(const std::vector<uint8_t>& f) {
  auto a16 = [](uint64_t v) { return (v + 15) / 16 * 16; };
  Sections s;
  s.count = getLe(f, 16, 8);
  s.chunks = (s.count + 1023) / 1024;
  s.groups = (s.chunks + 31) / 32;
  s.indexOff = 96 + a16(getLe(f, 32, 8)) + a16(getLe(f, 40, 8));
  s.countsOff = s.indexOff + 8 * s.groups;
  s.escOff = s.indexOff + a16(getLe(f, 48, 8));
  return s;
}

// BF16 whose exponents are all in the default codebook except at `escapes`, where the
// exponent is 200: exactly those positions escape.
std::vector<uint16_t> bf16WithEscapes(size_t n, const std::vector<size_t>& escapes, uint32_t seed = 1) {
  szCodebook_t cb;
  EXPECT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    uint32_t r = rng();
    x = uint16_t((r & 0x807F) | (uint32_t(cb.exponents[(r >> 8) % 16]) << 7));
  }
  for (size_t p : escapes) v[p] = uint16_t((v[p] & 0x807F) | (200u << 7));
  return v;
}

std::vector<uint8_t> bytesOf(const std::vector<uint16_t>& v) {
  return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                              reinterpret_cast<const uint8_t*>(v.data()) + 2 * v.size());
}

// A frame whose header is invalid: szFrameGetInfo and szDecode both reject it.
void expectCorrupt(const std::vector<uint8_t>& frame, size_t capacity, const char* what) {
  EXPECT_EQ(infoResult(frame, frame.size()), szCorruptFrame) << what;
  Decoded d = decodeGuarded(frame, frame.size(), capacity);
  EXPECT_EQ(d.res, szCorruptFrame) << what;
  EXPECT_TRUE(d.guardIntact) << what;
}

// A frame with a valid header and a bad escape index or escape record: szFrameGetInfo reads
// only the header, szDecode must reject it.
void expectCorruptPayload(const std::vector<uint8_t>& frame, size_t capacity, const char* what) {
  EXPECT_EQ(infoResult(frame, frame.size()), szSuccess) << what;
  Decoded d = decodeGuarded(frame, frame.size(), capacity);
  EXPECT_EQ(d.res, szCorruptFrame) << what;
  EXPECT_TRUE(d.guardIntact) << what;
}

TEST(CodecBadInput, TruncatedSmallFrameEveryPrefix) {
  auto data = bf16WithEscapes(1500, {3, 700, 1400});
  for (int flags : {0, SZ_ENCODE_CRC}) {
    auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16, nullptr, flags);
    ASSERT_EQ(getLe(frame, 24, 8), 3u) << "three escapes";
    for (size_t len = 0; len < frame.size(); ++len) {
      EXPECT_EQ(infoResult(frame, len), szCorruptFrame) << "prefix " << len;
      Decoded d = decodeGuarded(frame, len, 2 * data.size());
      ASSERT_EQ(d.res, szCorruptFrame) << "prefix " << len << " flags " << flags;
      ASSERT_TRUE(d.guardIntact);
    }
    Decoded whole = decodeGuarded(frame, frame.size(), 2 * data.size());
    ASSERT_EQ(whole.res, szSuccess);
    EXPECT_EQ(whole.out, bytesOf(data));
  }
  std::vector<uint8_t> ints(300, 7);  // a raw frame
  auto raw = sztest::encodeFrame(ints.data(), ints.size(), szInt8);
  for (size_t len = 0; len < raw.size(); ++len)
    ASSERT_EQ(decodeGuarded(raw, len, ints.size()).res, szCorruptFrame) << "raw prefix " << len;
}

TEST(CodecBadInput, TruncatedLargeFrameSomePrefixes) {
  std::vector<size_t> esc;
  for (size_t p = 5; p < 300000; p += 4999) esc.push_back(p);
  auto data = bf16WithEscapes(300000, esc);
  auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  Sections s = sectionsOf(frame);
  ASSERT_EQ(getLe(frame, 24, 8), esc.size());
  for (size_t len : {size_t(0), size_t(1), size_t(95), size_t(96), size_t(97), size_t(s.indexOff - 1),
                     size_t(s.indexOff), size_t(s.escOff - 1), size_t(s.escOff),
                     frame.size() - 3, frame.size() - 1}) {
    EXPECT_EQ(infoResult(frame, len), szCorruptFrame) << "prefix " << len;
    Decoded d = decodeGuarded(frame, len, 2 * data.size());
    EXPECT_EQ(d.res, szCorruptFrame) << "prefix " << len;
    EXPECT_TRUE(d.guardIntact);
  }
  EXPECT_EQ(decodeGuarded(frame, frame.size(), 2 * data.size()).out, bytesOf(data));
}

// What a compressed frame decodes to when codebook entry `i` reads `e` instead: the elements
// coded i take exponent e, escapes (code 0 plus a patch) keep theirs.
std::vector<uint8_t> withCodebookEntry(const std::vector<uint16_t>& data, const szCodebook_t& cb,
                                       int i, uint8_t e, const std::set<size_t>& escapes) {
  std::vector<uint16_t> v = data;
  for (size_t k = 0; k < v.size(); ++k)
    if (!escapes.count(k) && ((v[k] >> 7) & 0xFF) == cb.exponents[i])
      v[k] = uint16_t((v[k] & 0x807F) | (uint32_t(e) << 7));
  return bytesOf(v);
}

TEST(CodecBadInput, HeaderBitFlipsCompressedFrame) {
  const std::set<size_t> escapes = {0, 1023, 1024, 2500, 4999};
  auto data = bf16WithEscapes(5000, {escapes.begin(), escapes.end()});
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  ASSERT_EQ(getLe(frame, 6, 2), 0u) << "compressed, no CRC";
  int successes = 0;
  for (size_t byte = 0; byte < SZ_FRAME_HEADER_BYTES; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto f = frame;
      f[byte] ^= uint8_t(1u << bit);
      Decoded d = decodeGuarded(f, f.size(), 2 * data.size());
      ASSERT_TRUE(d.guardIntact) << "byte " << byte << " bit " << bit;
      // Without a CRC only a codebook entry can change undetected, and only into an exponent
      // the codebook does not hold yet; the output then follows the changed codebook exactly.
      bool expectSuccess = false;
      if (byte >= 64 && byte < 80) {
        uint8_t e = f[byte];
        expectSuccess = std::find(cb.exponents, cb.exponents + 16, e) == cb.exponents + 16;
      }
      ASSERT_EQ(d.res, expectSuccess ? szSuccess : szCorruptFrame) << "byte " << byte << " bit " << bit;
      if (expectSuccess) {
        ++successes;
        EXPECT_EQ(d.out, withCodebookEntry(data, cb, int(byte - 64), f[byte], escapes))
            << "byte " << byte << " bit " << bit;
      }
    }
  }
  EXPECT_GT(successes, 0);
}

TEST(CodecBadInput, HeaderBitFlipsCrcFrameAlwaysDetected) {
  auto data = bf16WithEscapes(5000, {0, 1023, 1024, 2500, 4999});
  for (const auto& src : {bytesOf(data), std::vector<uint8_t>(777, 0x3C)}) {
    szDataType_t type = src.size() == 777 ? szInt8 : szBfloat16;  // compressed, then raw
    const auto frame = sztest::encodeFrame(src.data(), src.size() / szTypeSize(type), type, nullptr, SZ_ENCODE_CRC);
    ASSERT_EQ(getLe(frame, 6, 2) & 2, 2u);
    for (size_t byte = 0; byte < SZ_FRAME_HEADER_BYTES; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        auto f = frame;
        f[byte] ^= uint8_t(1u << bit);
        EXPECT_EQ(infoResult(f, f.size()), szCorruptFrame) << "byte " << byte << " bit " << bit;
        Decoded d = decodeGuarded(f, f.size(), src.size());
        ASSERT_EQ(d.res, szCorruptFrame) << "type " << type << " byte " << byte << " bit " << bit;
        ASSERT_TRUE(d.guardIntact);
      }
    }
    auto f = frame;  // and one payload byte
    f.back() ^= 1;
    EXPECT_EQ(decodeGuarded(f, f.size(), src.size()).res, szCorruptFrame);
  }
}

TEST(CodecBadInput, EscapePositionsOutsideTheChunk) {
  // Chunk 1 holds elements 1024..1499: 476 elements, its escape at position 376.
  auto data = bf16WithEscapes(1500, {10, 20, 1400});
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  Sections s = sectionsOf(frame);
  ASSERT_EQ(getLe(frame, s.countsOff, 2), 2u);
  ASSERT_EQ(getLe(frame, s.countsOff + 2, 2), 1u);
  ASSERT_EQ(getLe(frame, s.escOff + 6, 2), 376u);
  for (uint64_t pos : {476u, 477u, 1023u, 1024u, 65535u}) {
    auto f = frame;
    setLe(f, s.escOff + 6, pos, 2);
    expectCorruptPayload(f, 3000, "position past the short last chunk");
  }
  for (uint64_t pos : {1024u, 4096u, 65535u}) {
    auto f = frame;
    setLe(f, s.escOff + 3, pos, 2);  // chunk 0's second escape
    expectCorruptPayload(f, 3000, "position past a full chunk");
  }
  auto f = frame;
  setLe(f, s.escOff + 6, 475, 2);  // the last valid position still decodes
  EXPECT_EQ(decodeGuarded(f, f.size(), 3000).res, szSuccess);
  f = frame;
  setLe(f, s.escOff + 3, 10, 2);  // chunk 0: positions 10, 10
  expectCorruptPayload(f, 3000, "repeated position");
  setLe(f, s.escOff + 3, 9, 2);  // 10, 9
  expectCorruptPayload(f, 3000, "decreasing positions");
}

TEST(CodecBadInput, EscapeExponentOutOfRangeE5m2) {
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &cb), szSuccess);
  std::vector<uint8_t> v(4000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t((i & 0x83) | (cb.exponents[i % 16] << 2));
  v[100] = uint8_t(31 << 2);  // exponent 31 (Inf/NaN) is not in the codebook
  const auto frame = sztest::encodeFrame(v.data(), v.size(), szFloat8e5m2);
  Sections s = sectionsOf(frame);
  ASSERT_EQ(getLe(frame, 24, 8), 1u);
  ASSERT_EQ(frame[s.escOff + 2], 31);
  for (uint8_t e : {32, 33, 64, 255}) {
    auto f = frame;
    f[s.escOff + 2] = e;
    expectCorruptPayload(f, v.size(), "E5M2 escape exponent >= 32");
  }
  Decoded d = decodeGuarded(frame, frame.size(), v.size());
  ASSERT_EQ(d.res, szSuccess);
  EXPECT_EQ(d.out, v);
}

TEST(CodecBadInput, EscapeCountsLargerThanTheChunk) {
  // 150 escapes in chunk 0, none in chunk 1 (100 elements): moving 101 of them to chunk 1
  // keeps every sum consistent, so only the chunk-length rule can catch it.
  std::vector<size_t> esc;
  for (size_t p = 0; p < 150; ++p) esc.push_back(p);
  auto data = bf16WithEscapes(1124, esc);
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  ASSERT_EQ(getLe(frame, 6, 2), 0u) << "stays compressed";
  ASSERT_EQ(getLe(frame, 24, 8), 150u);
  Sections s = sectionsOf(frame);
  auto f = frame;
  setLe(f, s.countsOff, 49, 2);
  setLe(f, s.countsOff + 2, 101, 2);
  expectCorruptPayload(f, 2248, "chunk count 101 > chunk length 100");
  f = frame;
  setLe(f, s.countsOff + 2, 0xFFFF, 2);
  expectCorruptPayload(f, 2248, "chunk count 65535");
  f = frame;
  setLe(f, s.countsOff, 1025, 2);
  expectCorruptPayload(f, 2248, "chunk count 1025 in a full chunk");
  // Header escape_count above the element count, with escape_bytes and the frame grown to match.
  f = frame;
  setLe(f, 24, 1125, 8);
  setLe(f, 56, 3 * 1125, 8);
  f.resize(f.size() + 3 * (1125 - 150), 0);
  expectCorrupt(f, 2248, "escape_count > count");
}

TEST(CodecBadInput, EscapeCountsInconsistentWithGroupOffsets) {
  // 3 groups and a bit; one escape at position 0 of every chunk.
  const size_t n = 3 * 32 * 1024 + 100;
  std::vector<size_t> esc;
  for (size_t p = 0; p < n; p += 1024) esc.push_back(p);
  auto data = bf16WithEscapes(n, esc);
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  Sections s = sectionsOf(frame);
  ASSERT_EQ(s.groups, 4u);
  ASSERT_EQ(getLe(frame, s.indexOff + 8, 8), 32u);
  ASSERT_EQ(decodeGuarded(frame, frame.size(), 2 * n).out, bytesOf(data));
  struct Edit {
    const char* what;
    std::function<void(std::vector<uint8_t>&)> apply;
  };
  const Edit edits[] = {
      {"group 0 offset 1", [&](auto& f) { setLe(f, s.indexOff, 1, 8); }},
      {"group 1 offset +1", [&](auto& f) { setLe(f, s.indexOff + 8, 33, 8); }},
      {"group 2 offset -1", [&](auto& f) { setLe(f, s.indexOff + 16, 63, 8); }},
      {"group 3 offset huge", [&](auto& f) { setLe(f, s.indexOff + 24, ~uint64_t(0), 8); }},
      {"escape moved across a group boundary",
       [&](auto& f) {
         setLe(f, s.countsOff + 2 * 31, 0, 2);
         setLe(f, s.countsOff + 2 * 32, 2, 2);
       }},
      {"escape moved inside a group",
       [&](auto& f) {
         setLe(f, s.countsOff, 0, 2);
         setLe(f, s.countsOff + 2, 2, 2);
       }},
      {"chunk counts sum below escape_count", [&](auto& f) { setLe(f, s.countsOff + 2 * (s.chunks - 1), 0, 2); }},
      {"chunk counts sum above escape_count", [&](auto& f) { setLe(f, s.countsOff + 2 * (s.chunks - 1), 2, 2); }},
  };
  for (const Edit& e : edits) {
    auto f = frame;
    e.apply(f);
    expectCorruptPayload(f, 2 * n, e.what);
  }
}

TEST(CodecBadInput, SectionSizesThatOverflow) {
  auto data = bf16WithEscapes(2000, {1, 2});
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  struct Field {
    size_t off;
    uint64_t value;
  };
  const std::vector<std::vector<Field>> forgeries = {
      {{16, ~uint64_t(0)}},                      // count: count * 2 overflows
      {{16, uint64_t(1) << 63}},                 // count * 2 overflows to 0
      {{16, uint64_t(1) << 61}},                 // count * 8 sign-mantissa bits overflows
      {{16, uint64_t(1) << 60},                  // consistent sections, 2^61 bytes of payload
       {32, uint64_t(1) << 60}, {40, uint64_t(1) << 59},
       {48, 8 * (uint64_t(1) << 45) + 2 * (uint64_t(1) << 50)}},
      {{24, ~uint64_t(0) / 3 + 1}, {56, (~uint64_t(0) / 3 + 1) * 3}},  // 3 * escapes wraps
      {{24, uint64_t(1) << 62}, {56, 3 * (uint64_t(1) << 62)}},
      {{24, ~uint64_t(0)}, {56, ~uint64_t(0)}},
      {{32, ~uint64_t(0)}}, {{40, ~uint64_t(0)}}, {{48, ~uint64_t(0)}}, {{56, ~uint64_t(0)}},
      {{32, 0}}, {{48, 0}},
  };
  for (size_t i = 0; i < forgeries.size(); ++i) {
    auto f = frame;
    for (const Field& fld : forgeries[i]) setLe(f, fld.off, fld.value, 8);
    SCOPED_TRACE(i);
    expectCorrupt(f, 4000, "forged size fields");
  }
  // Raw frames whose count * size wraps or exceeds the buffer.
  std::vector<uint8_t> ints(100, 1);
  const auto raw = sztest::encodeFrame(ints.data(), ints.size() / 4, szInt32);
  for (uint64_t count : {~uint64_t(0), ~uint64_t(0) / 4 + 1, uint64_t(1) << 40, uint64_t(26)}) {
    auto f = raw;
    setLe(f, 16, count, 8);
    expectCorrupt(f, ints.size(), "forged raw count");
  }
}

TEST(CodecBadInput, OutputBufferTooSmallIsInvalidArgument) {
  auto data = bf16WithEscapes(3000, {7});
  std::vector<uint8_t> ints(5000, 9);
  for (const auto& frame : {sztest::encodeFrame(data.data(), data.size(), szBfloat16), sztest::encodeFrame(ints.data(), 1250, szInt32)}) {
    szFrameInfo_t info;
    ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
    const size_t need = info.count * szTypeSize(info.type);
    ASSERT_EQ(need, info.raw ? 5000u : 6000u);
    for (size_t cap : {need - 1, need / 2, size_t(1), size_t(0)}) {
      Decoded d = decodeGuarded(frame, frame.size(), cap);
      EXPECT_EQ(d.res, szInvalidArgument) << "capacity " << cap;
      EXPECT_TRUE(d.guardIntact);
      EXPECT_TRUE(std::all_of(d.out.begin(), d.out.end(), [](uint8_t b) { return b == kFill; }))
          << "nothing is written when the output is too small";
    }
    EXPECT_EQ(szDecode(frame.data(), frame.size(), nullptr, need, nullptr, nullptr), szInvalidArgument);
    EXPECT_EQ(szDecode(nullptr, frame.size(), nullptr, need, nullptr, nullptr), szInvalidArgument);
  }
}

TEST(CodecBadInput, WrongMagicAndVersion) {
  auto data = bf16WithEscapes(2000, {});
  const auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  for (const char* magic : {"SZIQ", "PIZS", "szip", "\0\0\0\0"}) {
    auto f = frame;
    memcpy(f.data(), magic, 4);
    expectCorrupt(f, 4000, "magic");
  }
  for (uint64_t version : {0u, 2u, 0x100u, 0xFFFFu}) {
    auto f = frame;
    setLe(f, 4, version, 2);
    expectCorrupt(f, 4000, "version");
  }
  expectCorrupt(std::vector<uint8_t>(4096, 0), 4000, "all zeros");
  expectCorrupt(std::vector<uint8_t>(4096, 0xFF), 4000, "all ones");
}

TEST(CodecBadInput, UnalignedInputAndOutputPointers) {
  std::mt19937 rng(5);
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2}) {
    // Large enough for several threads (above SZ_CPU_PARALLEL_BYTES) for BF16.
    const size_t count = type == szBfloat16 ? (3u << 20) + 7 : 70001;
    const size_t bytes = count * szTypeSize(type);
    std::vector<uint8_t> data(bytes);
    szCodebook_t cb;
    ASSERT_EQ(szCodebookDefault(type, &cb), szSuccess);
    for (size_t i = 0; i < count; ++i) {  // codebook exponents with random sign-mantissa bits
      uint32_t r = rng(), e = cb.exponents[r % 16], w;
      if (type == szBfloat16) w = (r & 0x807F0000u) >> 16 | e << 7;
      else if (type == szFloat32) w = (r & 0x807FFFFFu) | e << 23;
      else w = (r >> 8 & 0x83) | e << 2;
      memcpy(&data[i * szTypeSize(type)], &w, szTypeSize(type));
    }
    const auto aligned = sztest::encodeFrame(data.data(), count, type);
    size_t max = 0, frameBytes = 0;
    ASSERT_EQ(szEncodeMaxSize(count, type, &max), szSuccess);
    std::vector<uint8_t> in(bytes + 3), out(max + 5), dec(bytes + 1 + kGuard, kFill);
    memcpy(in.data() + 3, data.data(), bytes);
    ASSERT_EQ(szEncode(in.data() + 3, count, type, nullptr, 0, out.data() + 5, max, &frameBytes), szSuccess);
    ASSERT_EQ(frameBytes, aligned.size());
    EXPECT_EQ(memcmp(out.data() + 5, aligned.data(), frameBytes), 0) << "same frame at any alignment";
    ASSERT_EQ(szDecode(out.data() + 5, frameBytes, dec.data() + 1, bytes, nullptr, nullptr), szSuccess);
    EXPECT_EQ(memcmp(dec.data() + 1, data.data(), bytes), 0) << "type " << type;
    EXPECT_EQ(dec[0], kFill);
    EXPECT_TRUE(std::all_of(dec.begin() + 1 + bytes, dec.end(), [](uint8_t b) { return b == kFill; }));
  }
}

TEST(CodecBadInput, ZeroLengthInput) {
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2, szInt8}) {
    size_t max = 0, bytes = 0;
    ASSERT_EQ(szEncodeMaxSize(0, type, &max), szSuccess);
    EXPECT_EQ(max, size_t(SZ_FRAME_HEADER_BYTES));
    std::vector<uint8_t> frame(max);
    ASSERT_EQ(szEncode(nullptr, 0, type, nullptr, 0, frame.data(), frame.size(), &bytes), szSuccess);
    EXPECT_EQ(bytes, size_t(SZ_FRAME_HEADER_BYTES));
    szFrameInfo_t info;
    ASSERT_EQ(szFrameGetInfo(frame.data(), bytes, &info), szSuccess);
    EXPECT_EQ(info.count, 0u);
    EXPECT_EQ(info.type, type);
    EXPECT_EQ(info.frameBytes, size_t(SZ_FRAME_HEADER_BYTES));
    size_t count = 99;
    szDataType_t got = szNumTypes;
    EXPECT_EQ(szDecode(frame.data(), bytes, nullptr, 0, &count, &got), szSuccess);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(got, type);
    Decoded d = decodeGuarded(frame, bytes, 0);
    EXPECT_EQ(d.res, szSuccess);
    EXPECT_TRUE(d.guardIntact);
  }
  szHistogram_t h;
  ASSERT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  EXPECT_EQ(szHistogramAccumulate(&h, nullptr, 0), szSuccess);
  EXPECT_EQ(szHistogramAccumulate(&h, nullptr, 1), szInvalidArgument);
}

TEST(CodecBadInput, InvalidCodebooksRejected) {
  szCodebook_t good;
  ASSERT_EQ(szCodebookDefault(szFloat8e5m2, &good), szSuccess);
  ASSERT_EQ(szCodebookValidate(&good), szSuccess);
  std::vector<szCodebook_t> bad;
  auto add = [&](auto edit) {
    szCodebook_t cb = good;
    edit(cb);
    bad.push_back(cb);
  };
  add([](szCodebook_t& cb) { cb.exponents[5] = cb.exponents[2]; });  // duplicate
  add([](szCodebook_t& cb) { cb.exponents[15] = cb.exponents[0]; });
  add([](szCodebook_t& cb) { cb.exponents[3] = 32; });  // E5M2 exponents are 0..31
  add([](szCodebook_t& cb) { cb.exponents[0] = 255; });
  add([](szCodebook_t& cb) { cb.used = 0; });
  add([](szCodebook_t& cb) { cb.used = 17; });
  add([](szCodebook_t& cb) { cb.used = -1; });
  add([](szCodebook_t& cb) { cb.type = szInt32; });    // not compressible
  add([](szCodebook_t& cb) { cb.type = szNumTypes; });
  std::vector<uint8_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t((i & 0x83) | (good.exponents[i % 16] << 2));
  size_t max = 0, bytes = 0;
  ASSERT_EQ(szEncodeMaxSize(data.size(), szFloat8e5m2, &max), szSuccess);
  std::vector<uint8_t> frame(max);
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(szCodebookValidate(&bad[i]), szInvalidArgument) << i;
    EXPECT_NE(std::string(szGetLastError(nullptr)), "") << i;
    // Large inputs and inputs so small that they are stored raw alike.
    for (size_t count : {data.size(), size_t(1)})
      EXPECT_EQ(szEncode(data.data(), count, szFloat8e5m2, &bad[i], 0, frame.data(), max, &bytes),
                szInvalidArgument) << i << " count " << count;
  }
  // A valid codebook of another type, a BF16 codebook reaching exponent 255, used = 1.
  szCodebook_t bf16;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &bf16), szSuccess);
  EXPECT_EQ(szEncode(data.data(), data.size(), szFloat8e5m2, &bf16, 0, frame.data(), max, &bytes),
            szInvalidArgument);
  bf16.exponents[15] = 255;
  bf16.used = 1;
  EXPECT_EQ(szCodebookValidate(&bf16), szSuccess);
  EXPECT_EQ(szCodebookValidate(nullptr), szInvalidArgument);
}

TEST(CodecBadInput, SizeArithmeticBeyond2Pow31Elements) {
  size_t max = 0;
  ASSERT_EQ(szEncodeMaxSize((size_t(1) << 31) + 1, szBfloat16, &max), szSuccess);
  EXPECT_EQ(max, 96u + 2 * ((size_t(1) << 31) + 1));
  ASSERT_EQ(szEncodeMaxSize(size_t(1) << 40, szBfloat16, &max), szSuccess);
  EXPECT_EQ(max, 96u + (size_t(1) << 41));
  ASSERT_EQ(szEncodeMaxSize(size_t(1) << 40, szFloat32, &max), szSuccess);
  EXPECT_EQ(max, 96u + (size_t(1) << 42));
  ASSERT_EQ(szEncodeMaxSize(size_t(1) << 40, szFloat8e5m2, &max), szSuccess);
  EXPECT_EQ(max, 96u + (size_t(1) << 40));
  ASSERT_EQ(szEncodeMaxSize(SIZE_MAX - 96, szUint8, &max), szSuccess);
  EXPECT_EQ(max, SIZE_MAX);
  max = 12345;
  for (auto [count, type] : {std::pair<size_t, szDataType_t>{SIZE_MAX - 95, szUint8},
                             {SIZE_MAX, szUint8},
                             {SIZE_MAX / 2 + 1, szBfloat16},
                             {SIZE_MAX / 4 + 1, szFloat32},
                             {SIZE_MAX / 8 + 1, szFloat64},
                             {SIZE_MAX, szFloat8e5m2},
                             {size_t(1) << 61, szBfloat16}}) {  // 8 * count sign-mantissa bits
    EXPECT_EQ(szEncodeMaxSize(count, type, &max), szInvalidArgument) << count << " of " << type;
    EXPECT_EQ(max, 12345u) << "untouched on error";
  }
  EXPECT_EQ(szEncodeMaxSize(10, szNumTypes, &max), szInvalidArgument);
  EXPECT_EQ(szEncodeMaxSize(10, szBfloat16, nullptr), szInvalidArgument);
  // szEncode checks sizes before touching the input: a small buffer with a huge count fails fast.
  std::vector<uint8_t> in(64), out(1024);
  size_t bytes = 0;
  EXPECT_EQ(szEncode(in.data(), size_t(1) << 40, szBfloat16, nullptr, 0, out.data(), out.size(), &bytes),
            szInvalidArgument);
  EXPECT_EQ(szEncode(in.data(), SIZE_MAX, szBfloat16, nullptr, 0, out.data(), SIZE_MAX, &bytes),
            szInvalidArgument);
  EXPECT_EQ(szEncode(in.data(), SIZE_MAX - 96, szUint8, nullptr, 0, out.data(), out.size(), &bytes),
            szInvalidArgument);
}

TEST(CodecBadInput, FrameClaiming2Pow40ElementsWithATinyBuffer) {
  auto data = bf16WithEscapes(1000, {});
  auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  const uint64_t n = uint64_t(1) << 40, chunks = n / 1024, groups = chunks / 32;
  setLe(frame, 16, n, 8);
  setLe(frame, 32, n, 8);      // sign-mantissa: one byte per element
  setLe(frame, 40, n / 2, 8);  // codes
  setLe(frame, 48, 8 * groups + 2 * chunks, 8);
  expectCorrupt(frame, 64, "2^40 elements in a 1.6 KB frame");
  Decoded d = decodeGuarded(frame, frame.size(), 64);
  EXPECT_TRUE(std::all_of(d.out.begin(), d.out.end(), [](uint8_t b) { return b == kFill; }));
  std::vector<uint8_t> bytes(1000, 3);
  auto raw = sztest::encodeFrame(bytes.data(), bytes.size(), szUint8);
  setLe(raw, 16, n, 8);
  expectCorrupt(raw, 64, "raw frame of 2^40 elements");
}

// The encoder stores zero elements raw, but a compressed zero-element frame is valid too: its
// header is all there is, and decoding must not read an escape index it does not have (found by
// the fuzzer under ASan: the exact-size buffer below makes an ASan build catch it again).
TEST(CodecBadInput, CompressedFrameOfZeroElements) {
  auto data = bf16WithEscapes(2000, {});
  auto frame = sztest::encodeFrame(data.data(), data.size(), szBfloat16);
  for (size_t off : {16, 32, 40, 48}) setLe(frame, off, 0, 8);  // count and section sizes
  frame.resize(SZ_FRAME_HEADER_BYTES);
  frame.shrink_to_fit();
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(info.raw, 0);
  EXPECT_EQ(info.count, 0u);
  size_t count = 7;
  EXPECT_EQ(szDecode(frame.data(), frame.size(), nullptr, 0, &count, nullptr), szSuccess);
  EXPECT_EQ(count, 0u);
}

TEST(CodecBadInput, DecoderWritesExactlyTheElements) {
  std::mt19937 rng(2);
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2, szInt64}) {
    for (size_t count : {1, 2, 3, 31, 33, 1023, 1025, 4097}) {
      const size_t bytes = count * szTypeSize(type);
      std::vector<uint8_t> data(bytes);
      for (auto& b : data) b = uint8_t(rng() % 4 == 0 ? rng() : 0x3C);  // mostly compressible
      auto frame = sztest::encodeFrame(data.data(), count, type);
      Decoded d = decodeGuarded(frame, frame.size(), bytes + 100);  // generous capacity
      ASSERT_EQ(d.res, szSuccess);
      EXPECT_EQ(memcmp(d.out.data(), data.data(), bytes), 0) << type << " " << count;
      EXPECT_TRUE(std::all_of(d.out.begin() + bytes, d.out.end(), [](uint8_t b) { return b == kFill; }))
          << "wrote past the elements: type " << type << " count " << count;
    }
  }
}

}  // namespace
