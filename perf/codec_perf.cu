// GPU codec benchmark (issue: GPU codec at HBM speed). For one tensor type: device-to-device
// copy (the ceiling), szEncodeAsync and szDecodeAsync at the full size and at slice sizes,
// 1024-element calls (the fixed cost; a device copy of as many bytes is their floor), and the batched calls on 4096 blocks of 16 KiB (a paged
// KV pool: szEncodeBatchAsync / szDecodeBatchAsync, one call for all blocks). Each is timed two
// ways, GB/s of uncompressed bytes: per call (median of --iters runs, one CUDA event pair
// around each call) and back to back (50 calls between one event pair, as the SplitZip
// authors' benchmark times; median of 5 such runs). Every decode is checked bit-exact. Prints a
// table and optionally writes JSON (-J FILE).
//   codec_perf [--data RAWFILE] [--type bf16|fp8e5m2|fp32|fp16|fp8e4m3] [--elems N] [--iters 20]
//              [--warmup 3] [--min-bytes B (slice sizes below B left out)] [-J FILE]
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "splitzip.h"
#include "perf/common/cuda_timing.h"

namespace {

#define SZ(call)                                                                          \
  do {                                                                                    \
    szResult_t r_ = (call);                                                               \
    if (r_ != szSuccess) {                                                                \
      fprintf(stderr, "codec_perf: %s: %s (%s)\n", #call, szGetErrorString(r_), szGetLastError(nullptr)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

struct Options {
  std::string data, json, typeName = "bf16";
  szDataType_t type = szBfloat16;
  size_t elems = 0;
  size_t minBytes = 0;  // slice sizes below it are left out (ncu on the full-size calls only)
  int iters = 20, warmup = 3;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fprintf(stderr, "codec_perf: %s needs a value\n", a.c_str());
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--data") o.data = next();
    else if (a == "--type") o.typeName = next();
    else if (a == "--elems") o.elems = strtoull(next().c_str(), nullptr, 0);
    else if (a == "--min-bytes") o.minBytes = strtoull(next().c_str(), nullptr, 0);
    else if (a == "--iters") o.iters = atoi(next().c_str());
    else if (a == "--warmup") o.warmup = atoi(next().c_str());
    else if (a == "-J" || a == "--json") o.json = next();
    else {
      fprintf(stderr, "codec_perf: unknown argument %s\n", a.c_str());
      exit(2);
    }
  }
  if (o.typeName == "bf16") o.type = szBfloat16;
  else if (o.typeName == "fp8e5m2") o.type = szFloat8e5m2;
  else if (o.typeName == "fp32") o.type = szFloat32;
  else if (o.typeName == "fp16") o.type = szFloat16;
  else if (o.typeName == "fp8e4m3") o.type = szFloat8e4m3;
  else {
    fprintf(stderr, "codec_perf: unknown --type %s\n", o.typeName.c_str());
    exit(2);
  }
  if (o.elems == 0) o.elems = (size_t(512) << 20) / szTypeSize(o.type);
  if (o.iters < 1) o.iters = 1;
  return o;
}

// The tensor: the --data file repeated up to `elems` elements, or KV-like normal values.
std::vector<uint8_t> makeTensor(const Options& o) {
  size_t es = szTypeSize(o.type), bytes = o.elems * es;
  std::vector<uint8_t> src;
  if (!o.data.empty()) {
    FILE* f = fopen(o.data.c_str(), "rb");
    if (!f) {
      fprintf(stderr, "codec_perf: cannot open %s\n", o.data.c_str());
      exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    src.resize(size_t(n) / es * es);
    if (src.empty() || fread(src.data(), 1, src.size(), f) != src.size()) {
      fprintf(stderr, "codec_perf: cannot read %s\n", o.data.c_str());
      exit(1);
    }
    fclose(f);
  } else {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.0f, 0.8f);
    src.resize(size_t(1 << 22) * es);
    for (size_t i = 0; i < src.size() / es; ++i) {
      float v = d(rng);
      uint32_t b;
      memcpy(&b, &v, 4);
      if (o.type == szBfloat16) { uint16_t h = uint16_t((b + 0x7FFF + ((b >> 16) & 1)) >> 16); memcpy(&src[2 * i], &h, 2); }
      else if (o.type == szFloat32) memcpy(&src[4 * i], &b, 4);
      else if (o.type == szFloat16) { uint16_t h = __half_as_ushort(__float2half_rn(v)); memcpy(&src[2 * i], &h, 2); }
      else if (o.type == szFloat8e4m3) src[i] = uint8_t(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3));
      else src[i] = uint8_t((b >> 24 & 0x80) | ((((b >> 23) & 0xFF) - 112) & 0x1F) << 2 | (b >> 21 & 3));
    }
  }
  std::vector<uint8_t> t(bytes);
  for (size_t off = 0; off < bytes; off += src.size()) memcpy(&t[off], src.data(), std::min(src.size(), bytes - off));
  return t;
}

// Back to back: `kBackToBack` calls between one event pair; ms per call, median of 5 runs.
constexpr int kBackToBack = 50;
template <typename F>
double backToBackMs(cudaStream_t s, F&& fn) {
  return medianMs(1, 5, s, [&] {
    for (int i = 0; i < kBackToBack; ++i) fn();
  }) / kBackToBack;
}

struct Row {
  size_t bytes;
  double copyMs, encMs, decMs, encB2bMs, decB2bMs, ratio, copyB2bMs;
};

struct Batched {
  size_t blocks = 0, blockBytes = 16384;
  double encMs = 0, decMs = 0, encB2bMs = 0, decB2bMs = 0, ratio = 0;
};

template <typename T>
T* upload(const std::vector<T>& v) {
  T* d;
  CK(cudaMalloc(&d, v.size() * sizeof(T)));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// 4096 blocks of 16 KiB of the tensor (fewer if it is smaller), each its own frame, in one
// batched call; the decoded blocks are checked against the tensor.
Batched measureBatched(const Options& o, const std::vector<uint8_t>& host, const uint8_t* in, const szCodebook_t& cb,
                       cudaStream_t s) {
  Batched r;
  const size_t es = szTypeSize(o.type), blockElems = r.blockBytes / es;
  r.blocks = std::min<size_t>(4096, host.size() / r.blockBytes);
  if (r.blocks == 0) return r;  // a tensor smaller than one block: no batched figure
  size_t maxBytes;
  SZ(szEncodeMaxSize(blockElems, o.type, &maxBytes));
  const size_t stride = (maxBytes + 255) / 256 * 256;
  uint8_t *frames, *out;
  CK(cudaMalloc(&frames, r.blocks * stride));
  CK(cudaMalloc(&out, r.blocks * r.blockBytes));
  std::vector<const void*> ins(r.blocks);
  std::vector<void*> frameOuts(r.blocks), outs(r.blocks);
  for (size_t k = 0; k < r.blocks; ++k) {
    ins[k] = in + k * r.blockBytes;
    frameOuts[k] = frames + k * stride;
    outs[k] = out + k * r.blockBytes;
  }
  const void** dIns = upload(ins);
  void** dFrameOuts = upload(frameOuts);  // the encoder's outputs are the decoder's frames
  void** dOuts = upload(outs);
  size_t* dCounts = upload(std::vector<size_t>(r.blocks, blockElems));
  size_t* dCaps = upload(std::vector<size_t>(r.blocks, stride));
  size_t* dOutCaps = upload(std::vector<size_t>(r.blocks, r.blockBytes));
  size_t *dFrameBytes, *dCountsOut;
  szResult_t* dStatus;
  CK(cudaMalloc(&dFrameBytes, r.blocks * sizeof(size_t)));
  CK(cudaMalloc(&dCountsOut, r.blocks * sizeof(size_t)));
  CK(cudaMalloc(&dStatus, r.blocks * sizeof(szResult_t)));
  auto enc = [&] {
    SZ(szEncodeBatchAsync(dIns, dCounts, r.blocks, o.type, &cb, 1, nullptr, 0, dFrameOuts, dCaps, dFrameBytes, dStatus, s));
  };
  auto dec = [&] { SZ(szDecodeBatchAsync(dFrameOuts, dFrameBytes, r.blocks, dOuts, dOutCaps, dCountsOut, dStatus, s)); };
  r.encMs = medianMs(o.warmup, o.iters, s, enc);
  r.encB2bMs = backToBackMs(s, enc);
  std::vector<size_t> frameBytes(r.blocks);
  std::vector<szResult_t> st(r.blocks);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(frameBytes.data(), dFrameBytes, r.blocks * sizeof(size_t), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(st.data(), dStatus, r.blocks * sizeof(szResult_t), cudaMemcpyDeviceToHost));
  size_t total = 0;
  for (size_t k = 0; k < r.blocks; ++k) {
    if (st[k] != szSuccess) {
      fprintf(stderr, "codec_perf: batched encode of block %zu failed: %s\n", k, szGetErrorString(st[k]));
      exit(1);
    }
    total += frameBytes[k];
  }
  r.ratio = double(r.blocks * r.blockBytes) / double(total);
  CK(cudaMemsetAsync(out, 0xA5, r.blocks * r.blockBytes, s));
  r.decMs = medianMs(o.warmup, o.iters, s, dec);
  r.decB2bMs = backToBackMs(s, dec);
  CK(cudaStreamSynchronize(s));
  std::vector<uint8_t> back(r.blocks * r.blockBytes);
  CK(cudaMemcpy(back.data(), out, back.size(), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(st.data(), dStatus, r.blocks * sizeof(szResult_t), cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < r.blocks; ++k)
    if (st[k] != szSuccess || memcmp(back.data() + k * r.blockBytes, host.data() + k * r.blockBytes, r.blockBytes) != 0) {
      fprintf(stderr, "codec_perf: batched decode of block %zu is NOT bit-exact (status %d)\n", k, int(st[k]));
      exit(1);
    }
  for (void* p : {(void*)frames, (void*)out, (void*)dIns, (void*)dFrameOuts, (void*)dOuts,
                  (void*)dCounts, (void*)dCaps, (void*)dOutCaps, (void*)dFrameBytes, (void*)dCountsOut, (void*)dStatus})
    CK(cudaFree(p));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::vector<uint8_t> host = makeTensor(o);
  const size_t es = szTypeSize(o.type), full = host.size();
  size_t maxBytes, tempBytes;
  SZ(szEncodeMaxSize(o.elems, o.type, &maxBytes));
  SZ(szEncodeTempSize(o.elems, o.type, &tempBytes));
  uint8_t *in, *frame, *out, *copy, *temp;
  uint64_t* frameBytes;
  int* status;
  CK(cudaMalloc(&in, full));
  CK(cudaMalloc(&out, full));
  CK(cudaMalloc(&copy, full));
  CK(cudaMalloc(&frame, maxBytes));
  CK(cudaMalloc(&temp, tempBytes));
  CK(cudaMalloc(&frameBytes, sizeof(uint64_t)));
  CK(cudaMalloc(&status, sizeof(int)));
  CK(cudaMemcpy(in, host.data(), full, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  szCodebook_t cb;
  if (o.type == szFloat16 || o.type == szFloat8e4m3) {  // the GPU histogram lacks these: on the host
    szHistogram_t h;
    SZ(szHistogramInit(&h, o.type));
    SZ(szHistogramAccumulate(&h, host.data(), o.elems / 8 + 1));
    SZ(szCodebookFromHistogram(&h, &cb));
  } else {  // calibrate on the tensor's first 1/8 (the rest plays the evaluation role)
    unsigned long long* counts;
    CK(cudaMalloc(&counts, 256 * sizeof(unsigned long long)));
    CK(cudaMemset(counts, 0, 256 * sizeof(unsigned long long)));
    SZ(szHistogramAsync(in, o.elems / 8 + 1, o.type, counts, s));
    szHistogram_t h;
    SZ(szHistogramInit(&h, o.type));
    CK(cudaMemcpyAsync(h.counts, counts, sizeof(h.counts), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    SZ(szCodebookFromHistogram(&h, &cb));
    CK(cudaFree(counts));
  }

  std::vector<Row> rows;
  std::vector<size_t> sizes = {size_t(1) << 20, size_t(4) << 20, size_t(16) << 20, size_t(64) << 20, full};
  uint64_t hostFrameBytes = 0;
  for (size_t bytes : sizes) {
    if (bytes > full || (bytes < o.minBytes && bytes != full)) continue;
    size_t n = bytes / es;
    Row r{bytes, 0, 0, 0, 0, 0, 0, 0};
    auto cp = [&] { CK(cudaMemcpyAsync(copy, in, bytes, cudaMemcpyDeviceToDevice, s)); };
    r.copyMs = medianMs(o.warmup, o.iters, s, cp);
    r.copyB2bMs = backToBackMs(s, cp);
    auto enc = [&] { SZ(szEncodeAsync(in, n, o.type, &cb, 0, frame, maxBytes, frameBytes, temp, tempBytes, s)); };
    r.encMs = medianMs(o.warmup, o.iters, s, enc);
    r.encB2bMs = backToBackMs(s, enc);
    CK(cudaMemcpyAsync(&hostFrameBytes, frameBytes, sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    r.ratio = double(bytes) / double(hostFrameBytes);
    CK(cudaMemsetAsync(out, 0xA5, full, s));
    auto dec = [&] { SZ(szDecodeAsync(frame, hostFrameBytes, out, full, status, s)); };
    r.decMs = medianMs(o.warmup, o.iters, s, dec);
    r.decB2bMs = backToBackMs(s, dec);
    int st = -1;
    CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<uint8_t> back(bytes);
    CK(cudaMemcpy(back.data(), out, bytes, cudaMemcpyDeviceToHost));
    if (st != szSuccess || memcmp(back.data(), host.data(), bytes) != 0) {
      fprintf(stderr, "codec_perf: decode of %zu bytes is NOT bit-exact (status %d)\n", bytes, st);
      return 1;
    }
    rows.push_back(r);
  }
  // The frame of the full tensor, for its escape rate.
  std::vector<uint8_t> hf(hostFrameBytes);
  CK(cudaMemcpy(hf.data(), frame, hf.size(), cudaMemcpyDeviceToHost));
  szFrameInfo_t info;
  SZ(szFrameGetInfo(hf.data(), hf.size(), &info));
  double escRate = double(info.escapeCount) / double(o.elems);
  double smBytes = o.type == szBfloat16 ? 1.0 : o.type == szFloat32 ? 3.0 : 3.0 / 8.0;
  double model = double(es) / (smBytes + 0.5 + 3.0 * escRate);
  // Launch-bound time: encode and decode of 1024 elements.
  // Its floor: a device copy of the same 1024 elements.
  auto tinyEncCall = [&] { SZ(szEncodeAsync(in, 1024, o.type, &cb, 0, frame, maxBytes, frameBytes, temp, tempBytes, s)); };
  double tinyEnc = medianMs(o.warmup, o.iters, s, tinyEncCall), tinyEncB2b = backToBackMs(s, tinyEncCall);
  uint64_t tinyFrameBytes = 0;
  CK(cudaMemcpy(&tinyFrameBytes, frameBytes, sizeof(uint64_t), cudaMemcpyDeviceToHost));
  auto tinyDecCall = [&] { SZ(szDecodeAsync(frame, tinyFrameBytes, out, full, status, s)); };
  double tinyDec = medianMs(o.warmup, o.iters, s, tinyDecCall), tinyDecB2b = backToBackMs(s, tinyDecCall);
  {
    int st = -1;
    std::vector<uint8_t> back(1024 * es);
    CK(cudaMemcpy(&st, status, sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(back.data(), out, back.size(), cudaMemcpyDeviceToHost));
    if (st != szSuccess || memcmp(back.data(), host.data(), back.size()) != 0) {
      fprintf(stderr, "codec_perf: decode of 1024 elements is NOT bit-exact (status %d)\n", st);
      return 1;
    }
  }
  auto tinyCopyCall = [&] { CK(cudaMemcpyAsync(copy, in, 1024 * es, cudaMemcpyDeviceToDevice, s)); };
  double tinyCopy = medianMs(o.warmup, o.iters, s, tinyCopyCall), tinyCopyB2b = backToBackMs(s, tinyCopyCall);
  const Batched bat = measureBatched(o, host, in, cb, s);

  const Row& big = rows.back();
  double copyGbs = full / big.copyMs / 1e6;
  printf("# codec_perf on %s (%d SMs), type %s, %zu elements (%.0f MiB), median of %d runs\n",
         prop.name, prop.multiProcessorCount, o.typeName.c_str(), o.elems, full / 1048576.0, o.iters);
  printf("# codebook:");
  for (int i = 0; i < 16; ++i) printf(" %d", cb.exponents[i]);
  printf("  escape rate %.5f%%, ratio %.4f (model %.4f, %+.3f%%)\n", 100 * escRate, big.ratio, model,
         100 * (big.ratio / model - 1));
  printf("# ceiling: copy %.0f GB/s of tensor (%.0f GB/s read+write) -> codec bound %.0f GB/s\n",
         copyGbs, 2 * copyGbs, 2 * copyGbs / (1 + 1 / model));
  printf("# b2b: %d calls back to back between one event pair\n", kBackToBack);
  printf("%10s %10s %10s %10s %10s %10s %10s %11s %11s %11s %8s\n", "size", "copy_us", "enc_us", "dec_us",
         "copy_GB/s", "enc_GB/s", "dec_GB/s", "copyb2b_GB/s", "encb2b_GB/s", "decb2b_GB/s", "ratio");
  for (const Row& r : rows)
    printf("%10zu %10.1f %10.1f %10.1f %10.0f %10.0f %10.0f %11.0f %11.0f %11.0f %8.4f\n", r.bytes, 1e3 * r.copyMs,
           1e3 * r.encMs, 1e3 * r.decMs, r.bytes / r.copyMs / 1e6, r.bytes / r.encMs / 1e6, r.bytes / r.decMs / 1e6,
           r.bytes / r.copyB2bMs / 1e6, r.bytes / r.encB2bMs / 1e6, r.bytes / r.decB2bMs / 1e6, r.ratio);
  printf("# launch-bound (1024 elements): encode %.1f us, decode %.1f us; back to back %.1f / %.1f us per call; "
         "device copy %.1f us, back to back %.1f us\n",
         1e3 * tinyEnc, 1e3 * tinyDec, 1e3 * tinyEncB2b, 1e3 * tinyDecB2b, 1e3 * tinyCopy, 1e3 * tinyCopyB2b);
  const double batBytes = double(bat.blocks * bat.blockBytes);
  if (bat.blocks > 0)
    printf("# batched (%zu blocks of %zu bytes, one call): encode %.1f us %.0f GB/s, decode %.1f us %.0f GB/s; back "
           "to back %.0f / %.0f GB/s; ratio %.4f\n",
           bat.blocks, bat.blockBytes, 1e3 * bat.encMs, batBytes / bat.encMs / 1e6, 1e3 * bat.decMs,
           batBytes / bat.decMs / 1e6, batBytes / bat.encB2bMs / 1e6, batBytes / bat.decB2bMs / 1e6, bat.ratio);
  if (!o.json.empty()) {
    FILE* f = fopen(o.json.c_str(), "w");
    if (!f) {
      fprintf(stderr, "codec_perf: cannot write %s\n", o.json.c_str());
      return 1;
    }
    fprintf(f, "{\"device\": \"%s\", \"type\": \"%s\", \"elems\": %zu, \"copy_gbs\": %.1f, \"encode_gbs\": %.1f, "
               "\"decode_gbs\": %.1f, \"encode_b2b_gbs\": %.1f, \"decode_b2b_gbs\": %.1f, \"ratio\": %.5f, "
               "\"model_ratio\": %.5f, \"escape_rate\": %.7f, \"launch_us\": {\"encode\": %.2f, \"decode\": %.2f, "
               "\"encode_b2b\": %.2f, \"decode_b2b\": %.2f, \"copy\": %.2f, \"copy_b2b\": %.2f}, ",
            prop.name, o.typeName.c_str(), o.elems, copyGbs, full / big.encMs / 1e6, full / big.decMs / 1e6,
            full / big.encB2bMs / 1e6, full / big.decB2bMs / 1e6, big.ratio, model, escRate, 1e3 * tinyEnc,
            1e3 * tinyDec, 1e3 * tinyEncB2b, 1e3 * tinyDecB2b, 1e3 * tinyCopy, 1e3 * tinyCopyB2b);
    if (bat.blocks > 0)
      fprintf(f, "\"batched\": {\"blocks\": %zu, \"block_bytes\": %zu, \"encode_gbs\": %.1f, \"decode_gbs\": %.1f, "
                 "\"encode_b2b_gbs\": %.1f, \"decode_b2b_gbs\": %.1f, \"encode_us\": %.2f, \"decode_us\": %.2f, "
                 "\"ratio\": %.5f}, ",
              bat.blocks, bat.blockBytes, batBytes / bat.encMs / 1e6, batBytes / bat.decMs / 1e6,
              batBytes / bat.encB2bMs / 1e6, batBytes / bat.decB2bMs / 1e6, 1e3 * bat.encMs, 1e3 * bat.decMs, bat.ratio);
    fprintf(f, "\"sizes\": [");
    for (size_t i = 0; i < rows.size(); ++i)
      fprintf(f, "%s{\"bytes\": %zu, \"copy_gbs\": %.1f, \"copy_b2b_gbs\": %.1f, \"encode_gbs\": %.1f, "
                 "\"decode_gbs\": %.1f, \"encode_b2b_gbs\": %.1f, \"decode_b2b_gbs\": %.1f, \"ratio\": %.5f}",
              i ? ", " : "", rows[i].bytes, rows[i].bytes / rows[i].copyMs / 1e6,
              rows[i].bytes / rows[i].copyB2bMs / 1e6, rows[i].bytes / rows[i].encMs / 1e6,
              rows[i].bytes / rows[i].decMs / 1e6, rows[i].bytes / rows[i].encB2bMs / 1e6,
              rows[i].bytes / rows[i].decB2bMs / 1e6, rows[i].ratio);
    fprintf(f, "]}\n");
    fclose(f);
  }
  return 0;
}
