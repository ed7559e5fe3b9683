// GPU tests of the batched warp encoder's paths (szEncodeBatchAsync: kernels/batch.cu,
// kernels/encode_warp.cuh; run on the H200 machine, skipped with a message elsewhere): items
// that must go raw among compressible ones, items at the escape budget's boundary, more items
// than the GPU holds warps with codebooks changing from item to item (a warp rebuilds its code
// table), per-item codebooks for E5M2 and FP32, and E5M2 codebooks holding exponents 0 and 31.
// Every frame is szEncode's byte for byte with its item's codebook, every decode restores every
// input byte, and the CPU frames first show that the data is what the test means (raw or not,
// how many escapes).
#include <algorithm>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/gpu/batch_test_util.h"
#include "tests/gpu/typed_data.h"

namespace {

using sztest::Codebooks;
using sztest::cpuEncode;
using sztest::DecodeItem;
using sztest::DecodeResult;
using sztest::EncodeResult;
using sztest::expectBatchRoundTrip;
using sztest::frameInfo;
using sztest::Item;

constexpr szDataType_t kTypes[] = {szBfloat16, szFloat32, szFloat8e5m2};

// Random bits (raw: almost every exponent escapes) and tiny items (raw: the fixed sections alone
// reach the raw size) between compressible items, one warp each, some misaligned.
TEST(GpuBatchCodecPaths, RawItemsAmongCompressibleOnes) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    SCOPED_TRACE("type " + std::to_string(type));
    const size_t es = szTypeSize(type), most = 40000;
    const szCodebook_t cb = sztest::defaultCodebook(type);
    const auto kv = sztest::typedData(type, most, 201);
    const auto bits = sztest::typedData(szUint8, most * es, 202);
    struct Plan {
      const std::vector<uint8_t>* data;
      size_t count;
      bool raw;
    };
    const Plan plan[] = {{&kv, 8192, false},  {&bits, 8192, true}, {&kv, 5003, false},   {&bits, 1000, true},
                         {&kv, 3, true},      {&kv, most, false},  {&bits, most, true},  {&kv, 1025, false}};
    std::vector<Item> items;
    for (size_t i = 0; i < std::size(plan); ++i) {
      const Plan& p = plan[i];
      items.push_back({p.data->data() + (i * 1237 % (most - p.count + 1)) * es, p.count, i % 3 == 1 ? es : 0,
                       i % 4 == 2 ? 1u : 0u});
      ASSERT_EQ(frameInfo(cpuEncode(items[i].data, p.count, type, &cb)).raw, p.raw ? 1 : 0) << "item " << i;
    }
    expectBatchRoundTrip(items, type, &cb);
  }
}

// Items holding one escape less than their frame's budget, exactly the budget and one more:
// the warp stops writing records at the budget (kernels/encode_warp.cuh) and the frame is
// compressed up to it, raw past it. Escapes anywhere, at the start and at the end; one and
// several escape groups.
TEST(GpuBatchCodecPaths, EscapeBudgetBoundary) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : kTypes) {
    SCOPED_TRACE("type " + std::to_string(type));
    const szCodebook_t cb = sztest::defaultCodebook(type);
    std::vector<std::vector<uint8_t>> data;
    std::vector<Item> items;
    for (size_t n : {size_t(5003), size_t(8192), size_t(40000)}) {
      const uint64_t budget = sztest::escapeBudget(n, type);
      ASSERT_GT(budget, 0u);
      for (uint64_t k : {budget - 1, budget, budget + 1}) {
        for (sztest::Where where : {sztest::Where::kAnywhere, sztest::Where::kAtStart, sztest::Where::kAtEnd}) {
          SCOPED_TRACE(std::to_string(n) + " elements, " + std::to_string(k) + " escapes " + sztest::whereName(where));
          auto v = sztest::codedData(type, n, cb, 203 + k);
          sztest::escapeAt(v, type, cb, sztest::escapePositions(n, k, where, 204 + k));
          sztest::expectBudgetSide(cpuEncode(v.data(), n, type, &cb), n, type, k);
          data.push_back(std::move(v));  // the buffer moves with it: items may point at it
          const size_t i = items.size();
          items.push_back({data.back().data(), n, i % 2 ? szTypeSize(type) : 0, i % 3 == 2 ? 1u : 0u});
        }
      }
    }
    expectBatchRoundTrip(items, type, &cb);
  }
}

// More items than resident warps (kernels/batch.cu: 2 blocks of 8 warps a multiprocessor, 2112 on
// an H200), so warps take several items, each with a codebook of 4 drawn at random: a warp
// rebuilds its table when its item's codebook differs from its previous item's and keeps it
// when it does not. One codebook is another's exponents in reverse order (same escapes, other
// codes), so a stale table cannot go unseen; items whose index is past the table fail alone and
// leave the next item's table right.
TEST(GpuBatchCodecPaths, ManyItemsWithMixedCodebooks) {
  SKIP_WITHOUT_GPU();
  const szDataType_t type = szBfloat16;
  int dev = 0, sms = 0;
  CUDA_ASSERT(cudaGetDevice(&dev));
  CUDA_ASSERT(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const size_t resident = size_t(sms) * 2 * 8, n = std::max<size_t>(5000, 2 * resident + 123);
  szCodebook_t reversed = sztest::defaultCodebook(type);
  std::reverse(reversed.exponents, reversed.exponents + SZ_CODEBOOK_SIZE);
  const std::vector<szCodebook_t> table = {sztest::defaultCodebook(type), reversed, sztest::codebookFrom(type, 60),
                                           sztest::codebookFrom(type, 140)};
  const size_t poolElems = size_t(1) << 16;
  std::vector<std::vector<uint8_t>> pools;
  for (size_t g = 0; g < table.size(); ++g) {  // each codebook's data: a few escapes
    pools.push_back(sztest::codedData(type, poolElems, table[g], 205 + g));
    sztest::escapeAt(pools.back(), type, table[g], sztest::positionsIn(0, poolElems, poolElems / 500, 209 + g));
  }
  std::mt19937 rng(213);
  const size_t sizes[] = {1, 7, 512, 1023, 1024, 1025, 2048, 3000, 4096};
  std::vector<uint32_t> ids(n);
  std::vector<Item> items;
  for (size_t i = 0; i < n; ++i) {
    ids[i] = i % 97 == 50 ? uint32_t(table.size()) : uint32_t(rng() % table.size());
    const size_t count = sizes[rng() % std::size(sizes)], at = rng() % (poolElems - count + 1);
    items.push_back({pools[ids[i] % table.size()].data() + at * szTypeSize(type), count, i % 5 == 1 ? 2u : 0u,
                     i % 7 == 3 ? 1u : 0u});
  }
  size_t changes = 0, keeps = 0;  // between an item and the one its warp took before
  for (size_t i = resident; i < n; ++i) (ids[i] == ids[i - resident] ? keeps : changes) += 1;
  ASSERT_GT(changes, 1000u);
  ASSERT_GT(keeps, 300u);

  const Codebooks cbs(table, ids);
  const EncodeResult r = sztest::gpuEncodeBatch(items, type, cbs);
  std::vector<DecodeItem> dec;
  std::vector<size_t> good;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] >= table.size()) {
      EXPECT_EQ(r.statuses[i], szInvalidArgument) << "item " << i;
      EXPECT_TRUE(r.frames[i].empty()) << "item " << i;
      continue;
    }
    EXPECT_EQ(r.statuses[i], szSuccess) << "item " << i;
    const auto cpu = cpuEncode(items[i].data, items[i].count, type, &table[ids[i]]);
    EXPECT_TRUE(r.frames[i] == cpu) << "item " << i << " (" << items[i].count << " elements, codebook " << ids[i]
                                    << "): GPU frame differs from the CPU frame at byte "
                                    << sztest::firstDiff(r.frames[i], cpu);
    dec.push_back({&r.frames[i], r.frames[i].size(), items[i].count * szTypeSize(type), items[i].outMis,
                   items[i].inMis});
    good.push_back(i);
  }
  const DecodeResult out = sztest::gpuDecodeBatch(dec);
  for (size_t j = 0; j < good.size(); ++j) {
    const Item& it = items[good[j]];
    EXPECT_EQ(out.statuses[j], szSuccess) << "item " << good[j];
    EXPECT_EQ(memcmp(out.outs[j].data(), it.data, it.count * szTypeSize(type)), 0) << "item " << good[j];
  }
}

// K and V blocks of E5M2 and FP32, interleaved, whose exponents sit in different ranges: each
// item encodes with its group's codebook (d_codebookIds), every frame carries it and is
// compressed, where one codebook of both must leave out what one group needs (raw frames).
TEST(GpuBatchCodecPaths, PerItemCodebooksForE5m2AndFp32) {
  SKIP_WITHOUT_GPU();
  for (szDataType_t type : {szFloat8e5m2, szFloat32}) {
    SCOPED_TRACE("type " + std::to_string(type));
    const bool e5m2 = type == szFloat8e5m2;
    const szCodebook_t onK = sztest::codebookFrom(type, e5m2 ? 2 : 100);
    const szCodebook_t onV = sztest::codebookFrom(type, e5m2 ? 12 : 125);
    const size_t blockElems = 8192, blocks = 48, es = szTypeSize(type);
    std::vector<uint8_t> kv[2];
    for (int g = 0; g < 2; ++g) {
      const szCodebook_t& on = g == 0 ? onK : onV;
      kv[g] = sztest::codedData(type, blockElems * blocks, on, 214 + g);
      sztest::escapeAt(kv[g], type, on, sztest::positionsIn(0, blockElems * blocks, blockElems * blocks / 1000, 216 + g));
    }
    std::vector<uint8_t> both = kv[0];
    both.insert(both.end(), kv[1].begin(), kv[1].end());
    const szCodebook_t cbK = sztest::calibratedOn(type, kv[0].data(), blockElems * blocks);
    const szCodebook_t cbV = sztest::calibratedOn(type, kv[1].data(), blockElems * blocks);
    const szCodebook_t cbBoth = sztest::calibratedOn(type, both.data(), 2 * blockElems * blocks);
    std::vector<Item> items;
    std::vector<uint32_t> ids;
    for (size_t b = 0; b < blocks; ++b) {
      items.push_back({kv[0].data() + b * blockElems * es, blockElems, 0, b % 3 == 1 ? 5u : 0u});
      ids.push_back(2);
      items.push_back({kv[1].data() + b * blockElems * es, blockElems, b % 4 == 3 ? es : 0, 0});
      ids.push_back(1);
    }
    const Codebooks perGroup({sztest::defaultCodebook(type), cbV, cbK}, ids);  // entry 0: no item's
    const auto mixed = expectBatchRoundTrip(items, type, perGroup);
    const auto single = expectBatchRoundTrip(items, type, &cbBoth);
    size_t mixedBytes = 0, singleBytes = 0, singleRaw = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      const szFrameInfo_t info = frameInfo(mixed[i]);
      EXPECT_EQ(info.raw, 0) << "item " << i;
      EXPECT_EQ(memcmp(info.codebook.exponents, perGroup.table[ids[i]].exponents, SZ_CODEBOOK_SIZE), 0) << "item " << i;
      mixedBytes += mixed[i].size();
      singleBytes += single[i].size();
      singleRaw += frameInfo(single[i]).raw;
    }
    // Each group's own codebook escapes 1 element in 1000. One codebook of both holds the 16 most
    // frequent of their 26 (E5M2) or 32 (FP32) exponents: a group misses at least 5 of its 16,
    // a third of its elements escape, more than a frame holds (E5M2 4 %, FP32 16 %).
    EXPECT_GE(singleRaw, blocks);
    EXPECT_LT(double(mixedBytes), 0.96 * double(singleBytes))
        << "per group " << mixedBytes << " bytes, one codebook " << singleBytes;
  }
}

// E5M2 items with codebooks holding exponents 0 and 31 (31 at code 0, and the data's own
// top-16), alternating item by item: +-0, denormals, +-Inf and NaN payloads come back bit-exact.
TEST(GpuBatchCodecPaths, E5m2CodebooksWithExponents0And31) {
  SKIP_WITHOUT_GPU();
  const szDataType_t type = szFloat8e5m2;
  const szCodebook_t edge = sztest::e5m2EdgeCodebook();
  const size_t most = 40000;
  auto v = sztest::codedData(type, most, edge, 218);
  sztest::escapeAt(v, type, edge, sztest::positionsIn(0, most, most / 500, 219));
  const szCodebook_t own = sztest::calibratedOn(type, v.data(), most);
  ASSERT_TRUE(sztest::inCodebook(own, 0) && sztest::inCodebook(own, 31));
  std::vector<Item> items;
  std::vector<uint32_t> ids;
  size_t k = 0;
  for (size_t n : {size_t(16384), size_t(5003), most, size_t(1025), size_t(100), size_t(8192), size_t(3000)}) {
    items.push_back({v.data() + (k * 997) % (most - n + 1), n, k % 2, k % 3 == 1 ? 2u : 0u});
    ids.push_back(uint32_t(k % 2));
    ++k;
  }
  const Codebooks cbs({edge, own}, ids);
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].count < 1000) continue;  // 100 elements: the fixed sections alone reach the raw size
    const szFrameInfo_t info = frameInfo(cpuEncode(items[i].data, items[i].count, type, cbs.of(i)));
    EXPECT_EQ(info.raw, 0) << "item " << i;
    EXPECT_GT(info.escapeCount, 0u) << "item " << i;
  }
  expectBatchRoundTrip(items, type, cbs);
}

}  // namespace
