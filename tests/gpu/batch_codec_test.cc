// Batched GPU codec tests (szEncodeBatchAsync / szDecodeBatchAsync; run on the H200 machine,
// skipped with a message elsewhere): every item's frame is byte-identical to the CPU encoder's,
// decodes bit-exact (NaN payloads, -0, denormals, Inf), nothing is written past an item's frame
// or output; mixed sizes, types and alignments in one call; 4096 blocks of 16 KiB; a bad item
// (corrupt frame, too-small capacity, NULL pointer, codebook index past the table) fails alone
// with its own status; per-item codebooks (K and V of different exponent ranges in one call).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>

#include "tests/gpu/batch_test_util.h"
#include "tests/gpu/typed_data.h"
#include "tests/kv_like.h"

namespace {

using sztest::Codebooks;
using sztest::cpuEncode;
using sztest::DecodeItem;
using sztest::DecodeResult;
using sztest::EncodeResult;
using sztest::expectBatchRoundTrip;
using sztest::gpuDecodeBatch;
using sztest::gpuEncodeBatch;
using sztest::Item;
using sztest::kPoison;
using sztest::toDevice;
using sztest::toHost;
using sztest::typedData;

TEST(GpuBatchCodec, MixedSizesTypesAndAlignments) {
  SKIP_WITHOUT_GPU();
  std::vector<std::vector<uint8_t>> allFrames;
  std::vector<size_t> allRaw;
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2, szFloat16, szFloat8e4m3, szInt32}) {
    const size_t es = szTypeSize(type);
    const size_t big = (size_t(3) << 20) / es + 5;  // a few MiB, odd
    auto data = typedData(type, big, 10 + type);
    std::vector<Item> items;
    size_t k = 0;
    for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1025), size_t(33333), 4096 / es, 16384 / es, big,
                     16384 / es, size_t(3), 4096 / es + 1, size_t(0)}) {
      size_t start = (k * 4099) % (big - n + 1);
      const size_t inMis = k % 4 == 1 ? 1 : k % 4 == 2 ? 2 * es : 0, outMis = k % 3 == 1 ? 3 : 0;
      items.push_back({data.data() + start * es, n, inMis, outMis});
      ++k;
    }
    szCodebook_t cb;
    const szCodebook_t* cbp = nullptr;
    if (szTypeIsCompressible(type)) {  // calibrated on the data itself: few escapes, a real codebook
      szHistogram_t h;
      ASSERT_EQ(szHistogramInit(&h, type), szSuccess);
      ASSERT_EQ(szHistogramAccumulate(&h, data.data(), big), szSuccess);
      // FP16 and E4M3 with 3-bit codes (format version 2; 4-bit E4M3 frames are raw)
      const bool narrow = type == szFloat16 || type == szFloat8e4m3;
      ASSERT_EQ(narrow ? szCodebookFromHistogramBits(&h, 3, &cb) : szCodebookFromHistogram(&h, &cb), szSuccess);
      cbp = &cb;
    }
    auto frames = expectBatchRoundTrip(items, type, cbp);
    if (type == szBfloat16 || type == szFloat16) expectBatchRoundTrip(items, type, nullptr);  // the default codebook
    for (size_t i = 0; i < items.size(); ++i) {
      allFrames.push_back(frames[i]);
      allRaw.push_back(items[i].count * es);
    }
  }
  // Frames of every type and size in one decode batch: the compressed FP16 and E4M3 ones are the
  // second kernel's (kernels/batch.cu), the others the first's.
  size_t narrowFrames = 0;
  for (const auto& f : allFrames) narrowFrames += f.size() > 10 && f[4] == 2 && f[10] == 3;
  EXPECT_GE(narrowFrames, 8u) << "compressed FP16 and E4M3 frames in the batch";
  std::vector<DecodeItem> dec;
  for (size_t i = 0; i < allFrames.size(); ++i) dec.push_back({&allFrames[i], allFrames[i].size(), allRaw[i], i % 5, i % 7});
  DecodeResult out = gpuDecodeBatch(dec, true);
  for (size_t i = 0; i < allFrames.size(); ++i) {
    std::vector<uint8_t> cpu(allRaw[i] + 1);
    ASSERT_EQ(szDecode(allFrames[i].data(), allFrames[i].size(), cpu.data(), cpu.size(), nullptr, nullptr), szSuccess);
    EXPECT_EQ(out.statuses[i], szSuccess) << "item " << i;
    EXPECT_EQ(memcmp(out.outs[i].data(), cpu.data(), allRaw[i]), 0) << "item " << i;
  }
}

TEST(GpuBatchCodec, PagedKvBlocks4096x16KiB) {
  SKIP_WITHOUT_GPU();
  const size_t blockElems = 8192, blocks = 4096;
  auto pool = sztest::kvLikeBf16(size_t(1) << 22, 21, 0.8f);
  for (size_t i = 0; i < pool.size(); i += 1000 + i % 777) pool[i] = uint16_t(0x0001 + (i & 0x8000));  // escapes
  std::vector<Item> items;
  for (size_t k = 0; k < blocks; ++k) {
    size_t page = (k * 2654435761u) % (pool.size() / blockElems);  // scattered pages
    items.push_back({reinterpret_cast<const uint8_t*>(pool.data() + page * blockElems), blockElems});
  }
  szCodebook_t cb;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cb), szSuccess);
  expectBatchRoundTrip(items, szBfloat16, &cb);
}

// KV-like BF16 blocks for the per-item codebook tests: `v` scaled by 2^shift, exactly (every
// exponent moves up by `shift`), so one codebook cannot cover both groups' exponents.
std::vector<uint16_t> scaledBf16(const std::vector<uint16_t>& v, int shift) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = uint32_t(v[i]) << 16;
    float f;
    memcpy(&f, &bits, 4);
    f = std::ldexp(f, shift);
    memcpy(&bits, &f, 4);
    out[i] = uint16_t(bits >> 16);
  }
  return out;
}

// The top-16 codebook of the elements of every vector in `parts` together (paper §3.3).
szCodebook_t calibrated(std::initializer_list<const std::vector<uint16_t>*> parts) {
  szHistogram_t h;
  szCodebook_t cb{};
  EXPECT_EQ(szHistogramInit(&h, szBfloat16), szSuccess);
  for (const auto* p : parts) EXPECT_EQ(szHistogramAccumulate(&h, p->data(), p->size()), szSuccess);
  EXPECT_EQ(szCodebookFromHistogram(&h, &cb), szSuccess);
  return cb;
}

double ratioOf(const std::vector<std::vector<uint8_t>>& frames, size_t rawBytes) {
  size_t total = 0;
  for (const auto& f : frames) total += f.size();
  return double(rawBytes) / double(total);
}

// K and V of a paged pool, interleaved block by block, where V's exponents sit 8 above K's: a
// codebook per group (chosen per item by d_codebookIds) compresses each group as well as alone,
// where the one codebook of both must escape what it cannot hold.
TEST(GpuBatchCodec, PerItemCodebooksFollowEachGroup) {
  SKIP_WITHOUT_GPU();
  const size_t blockElems = 8192, blocks = 64;
  const auto k = sztest::kvLikeBf16(blockElems * blocks, 51, 0.8f);
  const auto v = scaledBf16(sztest::kvLikeBf16(blockElems * blocks, 52, 0.8f), 8);
  std::vector<Item> items;
  std::vector<uint32_t> ids;
  for (size_t b = 0; b < blocks; ++b) {  // some frames and inputs off the fast path's alignment
    const size_t kOutMis = b % 3 == 1 ? 5 : 0, vInMis = b % 4 == 3 ? 2 : 0;
    items.push_back({reinterpret_cast<const uint8_t*>(k.data() + b * blockElems), blockElems, 0, kOutMis});
    ids.push_back(2);
    items.push_back({reinterpret_cast<const uint8_t*>(v.data() + b * blockElems), blockElems, vInMis, 0});
    ids.push_back(1);
  }
  szCodebook_t dflt;
  ASSERT_EQ(szCodebookDefault(szBfloat16, &dflt), szSuccess);
  const szCodebook_t cbK = calibrated({&k}), cbV = calibrated({&v}), cbBoth = calibrated({&k, &v});
  ASSERT_NE(memcmp(cbK.exponents, cbV.exponents, SZ_CODEBOOK_SIZE), 0);
  // Entry 0 (the default) is used by no item: indices really select.
  const Codebooks perGroup({dflt, cbV, cbK}, ids);
  auto mixed = expectBatchRoundTrip(items, szBfloat16, perGroup);  // byte-identical to szEncode, bit-exact
  auto single = expectBatchRoundTrip(items, szBfloat16, &cbBoth);
  ASSERT_EQ(mixed.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {  // each frame carries its own item's codebook
    szFrameInfo_t info;
    ASSERT_EQ(szFrameGetInfo(mixed[i].data(), mixed[i].size(), &info), szSuccess) << "item " << i;
    EXPECT_EQ(info.raw, 0) << "item " << i;
    EXPECT_EQ(memcmp(info.codebook.exponents, perGroup.table[ids[i]].exponents, SZ_CODEBOOK_SIZE), 0) << "item " << i;
  }
  const size_t raw = items.size() * blockElems * 2;
  const double rMixed = ratioOf(mixed, raw), rSingle = ratioOf(single, raw);
  // On the CPU codec (whose frames these are, byte for byte): per-group 1.3194 (57 escapes in
  // 1 Mi elements, what 16 KiB blocks with 96-byte headers allow), one codebook 1.2994 (8225
  // escapes: it cannot hold both groups' tails), a gain of 1.5 %, 15 times the 0.1 % that
  // justifies a codebook of its own (docs/PIPELINE.md).
  EXPECT_GT(rMixed, 1.315) << "per-group codebooks";
  EXPECT_GT(rMixed, rSingle * 1.01) << "per-group " << rMixed << " vs one codebook " << rSingle;
}

// An index past the table fails its item alone (nothing written); types stored raw read no index.
TEST(GpuBatchCodec, CodebookIndexOutOfRangeFailsAlone) {
  SKIP_WITHOUT_GPU();
  const size_t n = 12, count = 5000;
  const auto kv = sztest::kvLikeBf16(n * count, 61, 0.8f);
  const auto hi = scaledBf16(kv, 8);
  std::vector<Item> items;
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < n; ++i) {
    items.push_back({reinterpret_cast<const uint8_t*>((i % 2 ? hi : kv).data() + i * count), count});
    ids.push_back(uint32_t(i % 2));
  }
  ids[3] = 2;  // == numCodebooks
  ids[8] = UINT32_MAX;
  const Codebooks cbs({calibrated({&kv}), calibrated({&hi})}, ids);
  EncodeResult r = gpuEncodeBatch(items, szBfloat16, cbs);
  for (size_t i = 0; i < n; ++i) {
    if (i == 3 || i == 8) {
      EXPECT_EQ(r.statuses[i], szInvalidArgument) << "item " << i;
      EXPECT_TRUE(r.frames[i].empty()) << "item " << i;  // and its output untouched (gpuEncodeBatch)
    } else {
      EXPECT_EQ(r.statuses[i], szSuccess) << "item " << i;
      EXPECT_TRUE(r.frames[i] == cpuEncode(items[i].data, count, szBfloat16, cbs.of(i))) << "item " << i;
    }
  }
  auto ints = typedData(szInt32, n * count, 62);
  std::vector<Item> rawItems;
  for (size_t i = 0; i < n; ++i) rawItems.push_back({ints.data() + i * count * 4, count});
  EncodeResult rr = gpuEncodeBatch(rawItems, szInt32, cbs);  // BF16 codebooks and bad indices: not read
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(rr.statuses[i], szSuccess) << "item " << i;
    EXPECT_TRUE(rr.frames[i] == cpuEncode(rawItems[i].data, count, szInt32, nullptr)) << "item " << i;
  }
}

TEST(GpuBatchCodec, BadEncodeItemsFailAlone) {
  SKIP_WITHOUT_GPU();
  auto data = typedData(szBfloat16, 100000, 31);
  std::vector<Item> items;
  for (size_t k = 0; k < 12; ++k) items.push_back({data.data() + 2 * k, 20000 + 3 * k});
  items[9].count = 0;  // a NULL input with no elements is fine
  std::vector<size_t> caps(items.size());
  for (size_t k = 0; k < items.size(); ++k) ASSERT_EQ(szEncodeMaxSize(items[k].count, szBfloat16, &caps[k]), szSuccess);
  caps[4] -= 1;  // one byte short of szEncodeMaxSize
  caps[6] = 0;
  EncodeResult r = gpuEncodeBatch(items, szBfloat16, nullptr, caps, /*nullIns=*/{2, 9}, /*nullOuts=*/{7});
  for (size_t k = 0; k < items.size(); ++k) {
    if (k == 2 || k == 4 || k == 6 || k == 7) {
      EXPECT_EQ(r.statuses[k], szInvalidArgument) << "item " << k;
      EXPECT_TRUE(r.frames[k].empty()) << "item " << k;
    } else {
      EXPECT_EQ(r.statuses[k], szSuccess) << "item " << k;
      EXPECT_TRUE(r.frames[k] == cpuEncode(items[k].data, items[k].count, szBfloat16, nullptr)) << "item " << k;
    }
  }
}

TEST(GpuBatchCodec, CountThatOverflowsFailsAlone) {
  SKIP_WITHOUT_GPU();
  sztest::DeviceBuffer in(2048), out(4096);
  std::vector<const void*> ins = {in.ptr(), in.ptr()};
  std::vector<void*> outs = {out.ptr(), out.ptr() + 2048};
  std::vector<size_t> counts = {SIZE_MAX / 2 + 7, 900}, caps = {2048, 2048};
  auto dIns = toDevice(ins);
  auto dOuts = toDevice(outs);
  auto dCounts = toDevice(counts);
  auto dCaps = toDevice(caps);
  auto dBytes = toDevice(std::vector<size_t>(2, 12345));
  auto dStatus = toDevice(std::vector<szResult_t>(2, szInternalError));
  CUDA_ASSERT(cudaDeviceSynchronize());
  ASSERT_EQ(szEncodeBatchAsync(dIns, dCounts, 2, szBfloat16, nullptr, 0, nullptr, 0, dOuts, dCaps, dBytes, dStatus, nullptr),
            szSuccess)
      << szGetLastError(nullptr);
  CUDA_ASSERT(cudaDeviceSynchronize());
  auto st = toHost(dStatus, 2);
  auto bytes = toHost(dBytes, 2);
  EXPECT_EQ(st[0], szInvalidArgument);
  EXPECT_EQ(bytes[0], 0u);
  EXPECT_EQ(st[1], szSuccess);
  EXPECT_GT(bytes[1], 96u);
  EXPECT_TRUE(out.guardIntact(2048 + bytes[1]));
  auto first = out.download(2048);
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](uint8_t b) { return b == kPoison; })) << "item 0 was written";
  for (void* p : {(void*)dIns, (void*)dOuts, (void*)dCounts, (void*)dCaps, (void*)dBytes, (void*)dStatus}) cudaFree(p);
}

TEST(GpuBatchCodec, CorruptItemsAmongGoodOnesMatchTheCpuDecoder) {
  SKIP_WITHOUT_GPU();
  auto v = sztest::kvLikeBf16(40000, 7, 0.8f);
  v[5] = 0x0001;      // an escape in the first group
  v[33000] = 0x7F81;  // and one in the second
  auto frame = cpuEncode(v.data(), v.size(), szBfloat16, nullptr);
  szFrameInfo_t info;
  ASSERT_EQ(szFrameGetInfo(frame.data(), frame.size(), &info), szSuccess);
  ASSERT_GE(info.escapeCount, 2u);
  const size_t raw = v.size() * 2;
  std::mt19937 rng(8);
  std::vector<std::vector<uint8_t>> frames;
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = frame;
    if (trial % 3 != 0) {  // every third item stays good
      size_t pos = trial < 192 ? size_t(trial / 2) : (trial % 2 ? frame.size() - 1 - rng() % 200 : rng() % frame.size());
      bad[pos] ^= uint8_t(1u << (rng() % 8));
    }
    frames.push_back(bad);
  }
  std::vector<DecodeItem> items;
  for (size_t i = 0; i < frames.size(); ++i) items.push_back({&frames[i], frames[i].size(), raw, i % 3, i % 2});
  items[3].frameBytes = frame.size() - 1;  // truncated
  items[6].frameBytes = 50;                // shorter than a header
  items[9].capacity = raw - 2;             // output too small
  items[12].nullFrame = true;
  DecodeResult out = gpuDecodeBatch(items);
  int corrupt = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::vector<uint8_t> cpuOut(raw);
    szResult_t cpu = items[i].nullFrame ? szInvalidArgument
                                        : szDecode(frames[i].data(), items[i].frameBytes, cpuOut.data(),
                                                   items[i].capacity, nullptr, nullptr);
    EXPECT_EQ(out.statuses[i], cpu) << "item " << i;
    if (out.statuses[i] == szSuccess) {
      EXPECT_EQ(out.counts[i], v.size());
      EXPECT_EQ(memcmp(out.outs[i].data(), cpuOut.data(), raw), 0) << "item " << i;
    } else {
      ++corrupt;
    }
  }
  EXPECT_EQ(out.statuses[0], szSuccess);
  EXPECT_EQ(out.statuses[3], szCorruptFrame);
  EXPECT_EQ(out.statuses[6], szCorruptFrame);
  EXPECT_EQ(out.statuses[9], szInvalidArgument);
  EXPECT_EQ(out.statuses[12], szInvalidArgument);
  EXPECT_GT(corrupt, 50);
}

TEST(GpuBatchCodec, InvalidArgumentsAtEnqueue) {
  SKIP_WITHOUT_GPU();
  const void* in[1] = {nullptr};
  void* out[1] = {nullptr};
  size_t n[1] = {0};
  szResult_t st[1];
  uint32_t ids[1] = {0};
  szCodebook_t cbs[2];
  ASSERT_EQ(szCodebookDefault(szBfloat16, &cbs[0]), szSuccess);
  ASSERT_EQ(szCodebookDefault(szFloat32, &cbs[1]), szSuccess);
  EXPECT_EQ(szEncodeBatchAsync(in, n, 1, szNumTypes, nullptr, 0, nullptr, 0, out, n, n, st, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeBatchAsync(nullptr, n, 1, szBfloat16, nullptr, 0, nullptr, 0, out, n, n, st, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeBatchAsync(in, n, 1, szBfloat16, nullptr, 0, nullptr, SZ_ENCODE_CRC, out, n, n, st, nullptr),
            szInvalidUsage);
  EXPECT_EQ(szEncodeBatchAsync(in, n, 1, szBfloat16, cbs, 2, ids, 0, out, n, n, st, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeBatchAsync(in, n, 1, szBfloat16, nullptr, 1, ids, 0, out, n, n, st, nullptr), szInvalidArgument);
  EXPECT_EQ(szEncodeBatchAsync(in, n, 1, szBfloat16, cbs, SZ_BATCH_MAX_CODEBOOKS + 1, ids, 0, out, n, n, st, nullptr),
            szInvalidArgument);
  EXPECT_EQ(szDecodeBatchAsync(in, n, 1, out, n, nullptr, nullptr, nullptr), szInvalidArgument);
  // Empty batches enqueue nothing and read no array.
  EXPECT_EQ(szEncodeBatchAsync(nullptr, nullptr, 0, szBfloat16, nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr,
                               nullptr),
            szSuccess);
  EXPECT_EQ(szDecodeBatchAsync(nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), szSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
