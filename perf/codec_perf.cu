// GPU codec benchmark (issue: GPU codec at HBM speed). For one tensor type: device-to-device
// copy (the ceiling), szEncodeAsync and szDecodeAsync at the full size and at slice sizes,
// median of --iters runs timed with CUDA events, GB/s of uncompressed bytes; the decoded
// tensor is checked bit-exact. Prints a table and optionally writes JSON (-J FILE).
//   codec_perf [--data RAWFILE] [--type bf16|fp8e5m2|fp32] [--elems N] [--iters 20]
//              [--warmup 3] [-J FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "splitzip.h"

namespace {

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "codec_perf: %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)
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
      else src[i] = uint8_t((b >> 24 & 0x80) | ((((b >> 23) & 0xFF) - 112) & 0x1F) << 2 | (b >> 21 & 3));
    }
  }
  std::vector<uint8_t> t(bytes);
  for (size_t off = 0; off < bytes; off += src.size()) memcpy(&t[off], src.data(), std::min(src.size(), bytes - off));
  return t;
}

template <typename F>
double medianMs(int warmup, int iters, cudaStream_t s, F&& fn) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<float> t;
  for (int i = 0; i < iters; ++i) {
    CK(cudaEventRecord(a, s));
    fn();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Row {
  size_t bytes;
  double copyMs, encMs, decMs, ratio;
};

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
  {  // calibrate on the tensor's first 1/8 (the rest plays the evaluation role)
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
    if (bytes > full) continue;
    size_t n = bytes / es;
    Row r{bytes, 0, 0, 0, 0};
    r.copyMs = medianMs(o.warmup, o.iters, s, [&] { CK(cudaMemcpyAsync(copy, in, bytes, cudaMemcpyDeviceToDevice, s)); });
    r.encMs = medianMs(o.warmup, o.iters, s, [&] {
      SZ(szEncodeAsync(in, n, o.type, &cb, 0, frame, maxBytes, frameBytes, temp, tempBytes, s));
    });
    CK(cudaMemcpyAsync(&hostFrameBytes, frameBytes, sizeof(uint64_t), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    r.ratio = double(bytes) / double(hostFrameBytes);
    CK(cudaMemsetAsync(out, 0xA5, full, s));
    r.decMs = medianMs(o.warmup, o.iters, s, [&] { SZ(szDecodeAsync(frame, hostFrameBytes, out, full, status, s)); });
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
  double tinyEnc = medianMs(o.warmup, o.iters, s, [&] {
    SZ(szEncodeAsync(in, 1024, o.type, &cb, 0, frame, maxBytes, frameBytes, temp, tempBytes, s));
  });
  double tinyDec = medianMs(o.warmup, o.iters, s, [&] { SZ(szDecodeAsync(frame, maxBytes, out, full, status, s)); });

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
  printf("%10s %10s %10s %10s %10s %10s %10s %8s\n", "size", "copy_us", "enc_us", "dec_us", "copy_GB/s",
         "enc_GB/s", "dec_GB/s", "ratio");
  for (const Row& r : rows)
    printf("%10zu %10.1f %10.1f %10.1f %10.0f %10.0f %10.0f %8.4f\n", r.bytes, 1e3 * r.copyMs, 1e3 * r.encMs,
           1e3 * r.decMs, r.bytes / r.copyMs / 1e6, r.bytes / r.encMs / 1e6, r.bytes / r.decMs / 1e6, r.ratio);
  printf("# launch-bound (1024 elements): encode %.1f us, decode %.1f us\n", 1e3 * tinyEnc, 1e3 * tinyDec);
  if (!o.json.empty()) {
    FILE* f = fopen(o.json.c_str(), "w");
    if (!f) {
      fprintf(stderr, "codec_perf: cannot write %s\n", o.json.c_str());
      return 1;
    }
    fprintf(f, "{\"device\": \"%s\", \"type\": \"%s\", \"elems\": %zu, \"copy_gbs\": %.1f, \"encode_gbs\": %.1f, "
               "\"decode_gbs\": %.1f, \"ratio\": %.5f, \"model_ratio\": %.5f, \"escape_rate\": %.7f, "
               "\"launch_us\": {\"encode\": %.2f, \"decode\": %.2f}, \"sizes\": [",
            prop.name, o.typeName.c_str(), o.elems, copyGbs, full / big.encMs / 1e6, full / big.decMs / 1e6,
            big.ratio, model, escRate, 1e3 * tinyEnc, 1e3 * tinyDec);
    for (size_t i = 0; i < rows.size(); ++i)
      fprintf(f, "%s{\"bytes\": %zu, \"copy_gbs\": %.1f, \"encode_gbs\": %.1f, \"decode_gbs\": %.1f, \"ratio\": %.5f}",
              i ? ", " : "", rows[i].bytes, rows[i].bytes / rows[i].copyMs / 1e6, rows[i].bytes / rows[i].encMs / 1e6,
              rows[i].bytes / rows[i].decMs / 1e6, rows[i].ratio);
    fprintf(f, "]}\n");
    fclose(f);
  }
  return 0;
}
