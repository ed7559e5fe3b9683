// Helpers of the batched GPU codec tests (szEncodeBatchAsync / szDecodeBatchAsync): items in
// one device pool, each region misaligned as asked and followed by poisoned guard bytes; one
// batched encode or decode on a stream of its own; and the round trip that checks every frame
// against szEncode's and every decoded byte against the input.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "splitzip.h"
#include "tests/gpu/gpu_test_util.h"

namespace sztest {

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
inline EncodeResult gpuEncodeBatch(const std::vector<Item>& items, szDataType_t type, const Codebooks& cbs,
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
inline DecodeResult gpuDecodeBatch(const std::vector<DecodeItem>& items, bool mapped = false) {
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
inline std::vector<std::vector<uint8_t>> expectBatchRoundTrip(const std::vector<Item>& items, szDataType_t type,
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

}  // namespace sztest
