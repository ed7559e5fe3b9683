// The slot protocol's raw copy, standalone (issue: device data path v2, "the protocol's own cost
// <= 15%"). A raw 1 GiB sendrecv between two ranks on one GPU makes four copies of 1 GiB (each
// rank copies into the peer's slots and out of its own), one block per slice, two blocks of
// 512 threads per multiprocessor. This measures the same copies without the protocol: `ops`
// buffers of `bytes` cut into `piece`-byte pieces, one block per piece, the ops' pieces
// interleaved, in one launch, with the slot kernels' own block copy (kernels/block_copy.cuh), at
// one and two blocks per multiprocessor; next to cudaMemcpyAsync of the same bytes. GB/s of
// copied bytes (each byte read once and written once), median of --iters runs; -J FILE writes
// {"memcpy_gbs", "slot_copy_gbs"} (the better of the two grids) for perf/link_table.py.
//   copy_perf [--bytes 1G] [--ops 4] [--piece 256K] [--iters 20] [--warmup 3] [-J FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/block_copy.cuh"
#include "perf/common/cuda_timing.h"

namespace {

constexpr uint32_t kThreads = 512;

struct Pieces {
  uint8_t* const* dst;
  const uint8_t* const* src;
  uint64_t bytes, piece;
  uint32_t ops;
};

__global__ void __launch_bounds__(kThreads, 2) piecesKernel(Pieces P) {
  const uint64_t perOp = (P.bytes + P.piece - 1) / P.piece, total = perOp * P.ops;
  for (uint64_t p = blockIdx.x; p < total; p += gridDim.x) {
    const uint32_t op = uint32_t(p % P.ops);
    const uint64_t off = (p / P.ops) * P.piece, n = P.bytes - off < P.piece ? P.bytes - off : P.piece;
    sz::blockCopy<kThreads>(P.dst[op] + off, P.src[op] + off, n);
    __syncthreads();
  }
}

uint64_t parseBytes(const char* s) {
  char* end = nullptr;
  uint64_t v = strtoull(s, &end, 0);
  if (*end == 'K') v <<= 10;
  else if (*end == 'M') v <<= 20;
  else if (*end == 'G') v <<= 30;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t bytes = 1ull << 30, piece = 256 << 10;
  uint32_t ops = 4;
  int iters = 20, warmup = 3;
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bytes") bytes = parseBytes(argv[i + 1]);
    else if (a == "--piece") piece = parseBytes(argv[i + 1]);
    else if (a == "--ops") ops = uint32_t(atoi(argv[i + 1]));
    else if (a == "--iters") iters = atoi(argv[i + 1]);
    else if (a == "--warmup") warmup = atoi(argv[i + 1]);
    else if (a == "-J") json = argv[i + 1];
    else {
      fprintf(stderr, "copy_perf: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (bytes == 0 || bytes % 16 || piece == 0 || piece % 16 || ops == 0 || ops > 16 || iters < 1) {
    fprintf(stderr, "copy_perf: --bytes and --piece multiples of 16, --ops 1..16, --iters >= 1\n");
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<uint8_t*> dst(ops), src(ops);
  for (uint32_t k = 0; k < ops; ++k) {
    CK(cudaMalloc(&dst[k], bytes));
    CK(cudaMalloc(&src[k], bytes));
    CK(cudaMemset(src[k], int(k + 1), bytes));
  }
  uint8_t **dDst, **dSrc;
  CK(cudaMalloc(&dDst, ops * sizeof(uint8_t*)));
  CK(cudaMalloc(&dSrc, ops * sizeof(uint8_t*)));
  CK(cudaMemcpy(dDst, dst.data(), ops * sizeof(uint8_t*), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dSrc, src.data(), ops * sizeof(uint8_t*), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double total = double(bytes) * ops;
  auto gbs = [&](double ms) { return total / ms / 1e6; };
  const double memcpyMs = medianMs(warmup, iters, s, [&] {
    for (uint32_t k = 0; k < ops; ++k) CK(cudaMemcpyAsync(dst[k], src[k], bytes, cudaMemcpyDeviceToDevice, s));
  });
  printf("# copy_perf: %u ops of %llu bytes in %llu-byte pieces, %d multiprocessors, median of %d\n", ops,
         (unsigned long long)bytes, (unsigned long long)piece, sms, iters);
  printf("%-10s %8s %10s %10s %12s\n", "variant", "blocks", "ms", "GB/s", "vs memcpy");
  printf("%-10s %8s %10.3f %10.1f %12.3f\n", "memcpy", "-", memcpyMs, gbs(memcpyMs), 1.0);
  Pieces P{dDst, dSrc, bytes, piece, ops};
  double best = 0;
  for (int perSm : {1, 2}) {
    const unsigned blocks = unsigned(sms * perSm);
    const double ms = medianMs(warmup, iters, s, [&] {
      piecesKernel<<<blocks, kThreads, 0, s>>>(P);
      CK(cudaGetLastError());
    });
    std::vector<uint8_t> back(4096);
    bool ok = true;
    for (uint32_t k = 0; k < ops && ok; ++k) {
      CK(cudaMemcpy(back.data(), dst[k] + bytes - back.size(), back.size(), cudaMemcpyDeviceToHost));
      ok = std::all_of(back.begin(), back.end(), [k](uint8_t b) { return b == uint8_t(k + 1); });
      CK(cudaMemset(dst[k], 0, bytes));
    }
    if (!ok) {
      fprintf(stderr, "copy_perf: the block copy at %u blocks left wrong bytes\n", blocks);
      return 1;
    }
    best = std::max(best, gbs(ms));
    printf("%-10s %8u %10.3f %10.1f %12.3f\n", "slot", blocks, ms, gbs(ms), memcpyMs / ms);
  }
  if (!json.empty()) {
    FILE* f = fopen(json.c_str(), "w");
    if (f == nullptr) {
      fprintf(stderr, "copy_perf: cannot write %s\n", json.c_str());
      return 1;
    }
    fprintf(f, "{\"ops\": %u, \"bytes\": %llu, \"piece\": %llu, \"memcpy_gbs\": %.1f, \"slot_copy_gbs\": %.1f}\n", ops,
            (unsigned long long)bytes, (unsigned long long)piece, gbs(memcpyMs), best);
    fclose(f);
  }
  return 0;
}
