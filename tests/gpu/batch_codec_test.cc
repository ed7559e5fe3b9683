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
#include <utility>

#include "../kv_like.h"
#include "gpu_test_util.h"

namespace {

using sztest::cpuEncode;

constexpr size_t kGuard = 64;
constexpr uint8_t kPoison = 0xA5;

// Regions of one device pool, each at a 256-byte boundary plus its misalignment and followed by
// poisoned guard bytes: many items without one allocation each.
struct Pool {
  uint8_t* base = nullptr;
  size_t total = 0;
  std::vector<size_t> off, bytes;
  Pool(const std::vector<size_t>& sizes, const std::vector<size_t>& mis) : bytes(sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      off.push_back((total + 255) / 256 * 256 + mis[i]);
      total = off.back() + sizes[i] + kGuard;
    }
    if (cudaMalloc(&base, total + 1) != cudaSuccess) base = nullptr;
    else cudaMemset(base, kPoison, total + 1);
  }
  ~Pool() { cudaFree(base); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  uint8_t* ptr(size_t i) const { return base + off[i]; }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> h(total);
    cudaMemcpy(h.data(), base, total, cudaMemcpyDeviceToHost);
    return h;
  }
  // True if region i holds only poison from byte `used` through its guard.
  static bool untouched(const std::vector<uint8_t>& h, const Pool& p, size_t i, size_t used) {
    return std::all_of(h.begin() + p.off[i] + used, h.begin() + p.off[i] + p.bytes[i] + kGuard,
                       [](uint8_t b) { return b == kPoison; });
  }
};

template <class T>
T* toDevice(const std::vector<T>& v) {
  T* d = nullptr;
  if (cudaMalloc(&d, std::max<size_t>(v.size(), 1) * sizeof(T)) != cudaSuccess) return nullptr;
  cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
std::vector<T> toHost(const T* d, size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

struct Item {
  const uint8_t* data;  // host elements
  size_t count;
  size_t inMis = 0, outMis = 0;
};

struct EncodeResult {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<szResult_t> statuses;
};

// A batch's codebooks: the table (empty: the type's default) and each item's index into it
// (empty: no d_codebookIds, every item uses the first). One codebook pointer converts to it.
struct Codebooks {
  std::vector<szCodebook_t> table;
  std::vector<uint32_t> ids;
  Codebooks(const szCodebook_t* cb = nullptr) {  // implicit: the single-codebook calls pass a pointer
    if (cb != nullptr) table.push_back(*cb);
  }
  Codebooks(std::vector<szCodebook_t> t, std::vector<uint32_t> i) : table(std::move(t)), ids(std::move(i)) {}
  // Item i's codebook, as szEncode takes it (NULL: the default).
  const szCodebook_t* of(size_t i) const {
    if (table.empty()) return nullptr;
    return ids.empty() ? &table[0] : &table[ids[i]];
  }
};

// Encodes `items` in one szEncodeBatchAsync on a stream of its own. `capacity` (if set) replaces
// the items' szEncodeMaxSize; the items listed in `nullIns` / `nullOuts` get NULL pointers.
EncodeResult gpuEncodeBatch(const std::vector<Item>& items, szDataType_t type, const Codebooks& cbs,
                            const std::vector<size_t>& capacity = {}, const std::vector<size_t>& nullIns = {},
                            const std::vector<size_t>& nullOuts = {}) {
  auto listed = [](const std::vector<size_t>& v, size_t i) { return std::find(v.begin(), v.end(), i) != v.end(); };
  const size_t n = items.size(), es = szTypeSize(type);
  std::vector<size_t> inBytes, outCap, inMis, outMis, counts;
  for (size_t i = 0; i < n; ++i) {
    size_t max = 0;
    EXPECT_EQ(szEncodeMaxSize(items[i].count, type, &max), szSuccess);
    inBytes.push_back(items[i].count * es);
    outCap.push_back(i < capacity.size() ? capacity[i] : max);
    inMis.push_back(items[i].inMis);
    outMis.push_back(items[i].outMis);
    counts.push_back(items[i].count);
  }
  Pool in(inBytes, inMis), out(outCap, outMis);
  std::vector<const void*> ins(n);
  std::vector<void*> outs(n);
  for (size_t i = 0; i < n; ++i) {
    cudaMemcpy(in.ptr(i), items[i].data, inBytes[i], cudaMemcpyHostToDevice);
    ins[i] = listed(nullIns, i) ? nullptr : in.ptr(i);
    outs[i] = listed(nullOuts, i) ? nullptr : out.ptr(i);
  }
  auto dIns = toDevice(ins);
  auto dOuts = toDevice(outs);
  auto dCounts = toDevice(counts);
  auto dCaps = toDevice(outCap);
  auto dBytes = toDevice(std::vector<size_t>(n, 12345));
  auto dStatus = toDevice(std::vector<szResult_t>(n, szInternalError));
  uint32_t* dIds = cbs.ids.empty() ? nullptr : toDevice(cbs.ids);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the legacy-stream setup is done before `s` runs
  szResult_t res = szEncodeBatchAsync(dIns, dCounts, n, type, cbs.table.empty() ? nullptr : cbs.table.data(),
                                      cbs.table.size(), dIds, 0, dOuts, dCaps, dBytes, dStatus, s);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EncodeResult r;
  r.statuses = toHost(dStatus, n);
  auto bytes = toHost(dBytes, n);
  auto pool = out.download();
  for (size_t i = 0; i < n; ++i) {
    EXPECT_LE(bytes[i], outCap[i]) << "item " << i;
    size_t b = std::min(bytes[i], outCap[i]);
    r.frames.emplace_back(pool.begin() + out.off[i], pool.begin() + out.off[i] + b);
    EXPECT_TRUE(Pool::untouched(pool, out, i, b)) << "encoder wrote past item " << i << "'s frame";
    if (r.statuses[i] != szSuccess) {
      EXPECT_EQ(bytes[i], 0u) << "item " << i;
    }
  }
  for (void* p : {(void*)dIns, (void*)dOuts, (void*)dCounts, (void*)dCaps, (void*)dBytes, (void*)dStatus, (void*)dIds})
    cudaFree(p);
  cudaStreamDestroy(s);
  return r;
}

struct DecodeItem {
  const std::vector<uint8_t>* frame;
  size_t frameBytes;  // available to the decoder
  size_t capacity;
  size_t frameMis = 0, outMis = 0;
  bool nullFrame = false;
};

struct DecodeResult {
  std::vector<std::vector<uint8_t>> outs;
  std::vector<szResult_t> statuses;
  std::vector<size_t> counts;
};

// Decodes `items` in one szDecodeBatchAsync; statuses in mapped pinned memory when `mapped`.
DecodeResult gpuDecodeBatch(const std::vector<DecodeItem>& items, bool mapped = false) {
  const size_t n = items.size();
  std::vector<size_t> fBytes, caps, fMis, oMis, avail;
  for (const DecodeItem& it : items) {
    fBytes.push_back(it.frame->size());
    caps.push_back(it.capacity);
    fMis.push_back(it.frameMis);
    oMis.push_back(it.outMis);
    avail.push_back(it.frameBytes);
  }
  Pool fr(fBytes, fMis), out(caps, oMis);
  std::vector<const void*> frames(n);
  std::vector<void*> outs(n);
  for (size_t i = 0; i < n; ++i) {
    cudaMemcpy(fr.ptr(i), items[i].frame->data(), fBytes[i], cudaMemcpyHostToDevice);
    frames[i] = items[i].nullFrame ? nullptr : fr.ptr(i);
    outs[i] = out.ptr(i);
  }
  auto dFrames = toDevice(frames);
  auto dOuts = toDevice(outs);
  auto dAvail = toDevice(avail);
  auto dCaps = toDevice(caps);
  auto dCounts = toDevice(std::vector<size_t>(n, 12345));
  szResult_t* status = nullptr;
  if (mapped) {
    EXPECT_EQ(cudaHostAlloc(&status, n * sizeof(szResult_t), cudaHostAllocMapped), cudaSuccess);
    std::fill(status, status + n, szInternalError);
  } else {
    status = toDevice(std::vector<szResult_t>(n, szInternalError));
  }
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the legacy-stream setup is done before `s` runs
  szResult_t res = szDecodeBatchAsync(dFrames, dAvail, n, dOuts, dCaps, dCounts, status, s);
  EXPECT_EQ(res, szSuccess) << szGetLastError(nullptr);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  DecodeResult r;
  r.statuses = mapped ? std::vector<szResult_t>(status, status + n) : toHost(status, n);
  r.counts = toHost(dCounts, n);
  auto pool = out.download();
  for (size_t i = 0; i < n; ++i) {
    r.outs.emplace_back(pool.begin() + out.off[i], pool.begin() + out.off[i] + caps[i]);
    EXPECT_TRUE(Pool::untouched(pool, out, i, caps[i])) << "decoder wrote past item " << i << "'s output";
    if (r.statuses[i] != szSuccess) {
      EXPECT_EQ(r.counts[i], 0u) << "item " << i;
    }
  }
  for (void* p : {(void*)dFrames, (void*)dOuts, (void*)dAvail, (void*)dCaps, (void*)dCounts}) cudaFree(p);
  if (mapped) cudaFreeHost(status);
  else cudaFree(status);
  cudaStreamDestroy(s);
  return r;
}

// Encodes on the GPU in one batch and checks every frame against szEncode, then decodes them
// in one batch and checks every bit; returns the frames.
std::vector<std::vector<uint8_t>> expectBatchRoundTrip(const std::vector<Item>& items, szDataType_t type,
                                                       const Codebooks& cbs) {
  EncodeResult enc = gpuEncodeBatch(items, type, cbs);
  std::vector<DecodeItem> dec;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    EXPECT_EQ(enc.statuses[i], szSuccess) << "item " << i;
    auto cpu = cpuEncode(it.data, it.count, type, cbs.of(i));
    EXPECT_FALSE(cpu.empty()) << szGetLastError(nullptr);
    EXPECT_TRUE(enc.frames[i] == cpu) << "item " << i << " (" << it.count << " elements, type " << type
                                      << "): GPU frame differs from the CPU frame";
    dec.push_back({&enc.frames[i], enc.frames[i].size(), it.count * szTypeSize(type), it.outMis, it.inMis});
  }
  DecodeResult out = gpuDecodeBatch(dec);
  for (size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(out.statuses[i], szSuccess) << "item " << i;
    EXPECT_EQ(out.counts[i], items[i].count) << "item " << i;
    EXPECT_EQ(memcmp(out.outs[i].data(), items[i].data, items[i].count * szTypeSize(type)), 0)
        << "item " << i << " (" << items[i].count << " elements): decode not bit-exact";
  }
  return enc.frames;
}

// Test data of each type: KV-like values with the special patterns (NaN payloads of both signs,
// +-Inf, -0, denormals) scattered through it.
std::vector<uint8_t> typedData(szDataType_t type, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n * szTypeSize(type));
  if (type == szBfloat16) {
    auto kv = sztest::kvLikeBf16(n, seed, 0.8f);
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
  } else {
    for (auto& b : v) b = uint8_t(rng());
  }
  return v;
}

TEST(GpuBatchCodec, MixedSizesTypesAndAlignments) {
  SKIP_WITHOUT_GPU();
  std::vector<std::vector<uint8_t>> allFrames;
  std::vector<size_t> allRaw;
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2, szFloat8e4m3, szInt32}) {
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
      ASSERT_EQ(szCodebookFromHistogram(&h, &cb), szSuccess);
      cbp = &cb;
    }
    auto frames = expectBatchRoundTrip(items, type, cbp);
    if (type == szBfloat16) expectBatchRoundTrip(items, type, nullptr);  // the default codebook
    for (size_t i = 0; i < items.size(); ++i) {
      allFrames.push_back(frames[i]);
      allRaw.push_back(items[i].count * es);
    }
  }
  // Frames of every type and size in one decode batch.
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
