// The main job: a prefill -> decode KV-cache transfer between two ranks, the way a
// disaggregated serving engine does it. The prefill rank holds one request's KV cache in a
// paged pool like vLLM's (per layer, K and V blocks of 16 tokens, [num_blocks, 16, kv_heads,
// head_dim]), scattered through the pool by a block table; it sends the request's blocks with
// one szSendv, so every block goes through one compressed pipeline. The decode rank receives
// them into its own pool at other block ids with szRecvv and checks every bit. The same transfer
// runs over the raw wire (codec off) in the same run for comparison. Then it says, from rates
// measured here, whether compression can pay on this wire (paper App. B: it pays on wires slower
// than B_hide = codec rate / ratio), and runs both transfers once more over a link emulated below
// B_hide (SZ_TCP_LINK_GBPS or SZ_IPC_LINK_GBPS: the wires' own pacing), where it does.
//
//   mpirun -np 2 build/examples/disagg_kv_transfer [--data KV.safetensors] [--wire tcp|nccl|ipc]
//          [--iters N]
// Without mpirun the two ranks run as threads of one process. Device pools (cudaMalloc) are
// used when the build has CUDA and a GPU is present (one GPU per rank where there are two).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "splitzip.h"
#include "tools/cli_common.h"
#include "tools/tensor_file.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif
#if SZ_HAVE_MPI
#include <mpi.h>
#endif

namespace {

constexpr int kBlockTokens = 16;

struct KvShape {
  int tensors = 0;  // layers x {K, V}
  int tokens = 0, heads = 0, headDim = 0;
  size_t tokenElems() const { return size_t(heads) * size_t(headDim); }
};

// Shapes of the KV sample (every tensor [tokens, kv_heads, head_dim], same shape).
KvShape readShape(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  uint64_t len = 0;
  if (!f.read(reinterpret_cast<char*>(&len), 8) || len > (64u << 20))
    throw sztool::CliError(path + ": not a safetensors file");
  std::string header(len, '\0');
  if (!f.read(&header[0], std::streamsize(len))) throw sztool::CliError(path + ": truncated header");
  KvShape s;
  nlohmann::json index = nlohmann::json::parse(header);
  for (auto it = index.begin(); it != index.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") continue;
    const nlohmann::json& shape = it.value().at("shape");
    if (shape.size() != 3) throw sztool::CliError(path + ": tensor " + name + " is not [tokens, heads, dim]");
    s.tokens = shape[0];
    s.heads = shape[1];
    s.headDim = shape[2];
    ++s.tensors;
  }
  if (s.tensors == 0) throw sztool::CliError(path + ": no tensors");
  return s;
}

// A paged pool: for every tensor (layer x K/V), `blocks` blocks of 16 tokens.
struct Pool {
  uint8_t* base = nullptr;
  bool device = false;
  size_t blockBytes = 0, tensorBytes = 0;
  uint8_t* block(int tensor, int id) const { return base + size_t(tensor) * tensorBytes + size_t(id) * blockBytes; }
};

bool useDevice() {
#if SZ_HAVE_CUDA
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#else
  return false;
#endif
}

Pool makePool(const KvShape& s, int blocks, bool device) {
  Pool p;
  p.device = device;
  p.blockBytes = kBlockTokens * s.tokenElems() * 2;
  p.tensorBytes = p.blockBytes * size_t(blocks);
  size_t bytes = p.tensorBytes * size_t(s.tensors);
#if SZ_HAVE_CUDA
  if (device) {
    sztool::check(cudaMalloc(&p.base, bytes) == cudaSuccess ? szSuccess : szUnhandledCudaError, "cudaMalloc pool");
    cudaMemset(p.base, 0xA5, bytes);
    return p;
  }
#endif
  p.base = static_cast<uint8_t*>(malloc(bytes));
  memset(p.base, 0xA5, bytes);
  return p;
}

void copyTo(const Pool& p, uint8_t* dst, const uint8_t* src, size_t bytes) {
#if SZ_HAVE_CUDA
  if (p.device) {
    cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    return;
  }
#endif
  (void)p;
  memcpy(dst, src, bytes);
}

void freePool(Pool& p) {
#if SZ_HAVE_CUDA
  if (p.device) {
    cudaFree(p.base);
    return;
  }
#endif
  free(p.base);
}

// The request's block list: for each tensor, its blocks in token order through the block table.
struct BlockList {
  std::vector<void*> ptrs;
  std::vector<size_t> counts;
};

BlockList blockList(const Pool& p, const KvShape& s, const std::vector<int>& table) {
  BlockList l;
  int nblocks = (s.tokens + kBlockTokens - 1) / kBlockTokens;
  for (int t = 0; t < s.tensors; ++t)
    for (int b = 0; b < nblocks; ++b) {
      int tokens = std::min(kBlockTokens, s.tokens - b * kBlockTokens);
      l.ptrs.push_back(p.block(t, table[size_t(b)]));
      l.counts.push_back(size_t(tokens) * s.tokenElems());
    }
  return l;
}

// A block table: the request's blocks at random, distinct ids of a pool twice as large.
std::vector<int> blockTable(int nblocks, uint32_t seed) {
  std::vector<int> ids(size_t(2 * nblocks));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
  ids.resize(size_t(nblocks));
  return ids;
}

// The codec's rate on this machine for the sample, uncompressed GB/s: min(encode, decode), each
// the median of several calls, with the codec the pools use (the CPU codec for host pools, the
// GPU codec for device pools, on the current device).
double codecGBps(const sztool::TensorData& kv, bool device) {
  constexpr int kCalls = 7;
  const size_t bytes = kv.count * 2;
  size_t cap = 0;
  sztool::check(szEncodeMaxSize(kv.count, szBfloat16, &cap), "szEncodeMaxSize");
  std::vector<double> enc, dec;
#if SZ_HAVE_CUDA
  if (device) {
    size_t tempBytes = 0;
    sztool::check(szEncodeTempSize(kv.count, szBfloat16, &tempBytes), "szEncodeTempSize");
    void *in = nullptr, *frame = nullptr, *out = nullptr, *temp = nullptr, *word = nullptr;
    cudaMalloc(&in, bytes);
    cudaMalloc(&frame, cap);
    cudaMalloc(&out, bytes);
    cudaMalloc(&temp, tempBytes);
    cudaMalloc(&word, 16);
    cudaMemcpy(in, kv.bytes.data(), bytes, cudaMemcpyHostToDevice);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < kCalls; ++i)
      for (std::vector<double>* t : {&enc, &dec}) {
        cudaEventRecord(a);
        if (t == &enc)
          sztool::check(szEncodeAsync(in, kv.count, szBfloat16, nullptr, 0, frame, cap, static_cast<uint64_t*>(word),
                                      temp, tempBytes, nullptr), "szEncodeAsync");
        else
          sztool::check(szDecodeAsync(frame, cap, out, bytes, static_cast<int*>(word), nullptr), "szDecodeAsync");
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        t->push_back(ms * 1e-3);
      }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    for (void* p : {in, frame, out, temp, word}) cudaFree(p);
  }
#endif
  if (!device) {
    std::vector<uint8_t> frame(cap), out(bytes);
    for (int i = 0; i < kCalls; ++i) {
      size_t frameBytes = 0;
      auto t0 = std::chrono::steady_clock::now();
      sztool::check(szEncode(kv.bytes.data(), kv.count, szBfloat16, nullptr, 0, frame.data(), cap, &frameBytes),
                    "szEncode");
      auto t1 = std::chrono::steady_clock::now();
      sztool::check(szDecode(frame.data(), frameBytes, out.data(), bytes, nullptr, nullptr), "szDecode");
      auto t2 = std::chrono::steady_clock::now();
      enc.push_back(std::chrono::duration<double>(t1 - t0).count());
      dec.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
  }
  for (std::vector<double>* t : {&enc, &dec}) std::sort(t->begin(), t->end());
  return double(bytes) / std::max(enc[kCalls / 2], dec[kCalls / 2]) / 1e9;
}

struct Options {
  std::string data = "tests/data/tinystories_kv_eval_bf16.safetensors";
  std::string wire;
  int iters = 5;
};

double transfer(szComm_t comm, int rank, BlockList& l, cudaStream_t stream, szResult_t* err) {
  auto t0 = std::chrono::steady_clock::now();
  if (rank == 0)
    *err = szSendv(const_cast<const void* const*>(l.ptrs.data()), l.counts.data(), int(l.ptrs.size()), szBfloat16, 1,
                   comm, stream);
  else
    *err = szRecvv(l.ptrs.data(), l.counts.data(), int(l.ptrs.size()), szBfloat16, 0, comm, stream);
#if SZ_HAVE_CUDA
  if (stream) cudaStreamSynchronize(stream);
#endif
  if (*err == szSuccess) szCommGetAsyncError(comm, err);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What a rank found, gathered on the prefill rank for the summary.
struct RankResult {
  double splitzipSeconds, rawSeconds;
  uint64_t rawBytes, wireBytes;  // the sender's counters
  uint64_t wrongBlocks;          // the receiver's check
  int tokens, device, iters;
};

// ids[0] names the SplitZip communicator, ids[1] the raw one (a unique id serves one communicator).
RankResult runRank(int rank, const szUniqueId* ids, const Options& o, const std::function<void()>& barrier) {
  KvShape s = readShape(o.data);
  sztool::TensorData kv = sztool::readTensorFile(o.data, szBfloat16);
  if (kv.count != size_t(s.tokens) * s.tokenElems() * size_t(s.tensors))
    throw sztool::CliError(o.data + ": tensors differ in shape");
  bool device = useDevice();
#if SZ_HAVE_CUDA
  int ndev = 0;
  if (device && cudaGetDeviceCount(&ndev) == cudaSuccess) cudaSetDevice(rank % ndev);
#endif
  int nblocks = (s.tokens + kBlockTokens - 1) / kBlockTokens;
  Pool pool = makePool(s, 2 * nblocks, device);
  // Different block ids on the two sides, as two engines' allocators would give.
  BlockList list = blockList(pool, s, blockTable(nblocks, rank == 0 ? 11u : 29u));
  if (rank == 0)
    for (size_t i = 0, off = 0; i < list.ptrs.size(); off += list.counts[i] * 2, ++i)
      copyTo(pool, static_cast<uint8_t*>(list.ptrs[i]), kv.bytes.data() + off, list.counts[i] * 2);
  cudaStream_t stream = nullptr;
#if SZ_HAVE_CUDA
  if (device) cudaStreamCreate(&stream);
#endif
  RankResult r{0, 0, 0, 0, 0, s.tokens, device ? 1 : 0, o.iters};
  for (int codec : {SZ_CODEC_ON, SZ_CODEC_OFF}) {
    szConfig_t cfg = SZ_CONFIG_INITIALIZER;
    cfg.codec = codec;
    if (!o.wire.empty()) cfg.wire = o.wire.c_str();
    szComm_t comm = nullptr;
    sztool::check(szCommInitRankConfig(&comm, 2, ids[codec == SZ_CODEC_ON ? 0 : 1], rank, &cfg), "szCommInitRank");
    std::vector<double> t;
    for (int i = 0; i < o.iters + 1; ++i) {  // the first run warms up
      barrier();
      szResult_t err = szSuccess;
      double secs = transfer(comm, rank, list, stream, &err);
      sztool::check(err, rank == 0 ? "szSendv" : "szRecvv");
      if (i > 0) t.push_back(secs);
    }
    std::sort(t.begin(), t.end());
    (codec == SZ_CODEC_ON ? r.splitzipSeconds : r.rawSeconds) = t[t.size() / 2];
    if (codec == SZ_CODEC_ON) {
      szStats_t st;
      szCommGetStats(comm, &st);
      r.rawBytes = st.rawBytes;
      r.wireBytes = st.wireBytes;
    }
    szCommDestroy(comm);
  }
  if (rank == 1) {  // every received block, bit for bit
    std::vector<uint8_t> got;
    for (size_t i = 0, off = 0; i < list.ptrs.size(); off += list.counts[i] * 2, ++i) {
      got.resize(list.counts[i] * 2);
      copyTo(pool, got.data(), static_cast<uint8_t*>(list.ptrs[i]), got.size());
      r.wrongBlocks += memcmp(got.data(), kv.bytes.data() + off, got.size()) != 0;
    }
  }
#if SZ_HAVE_CUDA
  if (stream) cudaStreamDestroy(stream);
#endif
  freePool(pool);
  return r;
}

// Prints one transfer's comparison and summary line (`link` GB/s emulated, 0: the wire as it
// is); returns the exit status.
int report(const RankResult& prefill, const RankResult& decode, const Options& o, double link) {
  double ratio = prefill.wireBytes ? double(prefill.rawBytes) / double(prefill.wireBytes) : 0.0;
  double speedup = prefill.rawSeconds / prefill.splitzipSeconds;
  if (link > 0)
    printf("splitzip-demo: the same transfer over a link emulated at %.3g GB/s (SZ_TCP_LINK_GBPS / "
           "SZ_IPC_LINK_GBPS: the wire paces itself)\n", link);
  else
    printf("splitzip-demo: %s, %s pools, %llu KV bytes per transfer (%d tokens)\n", o.data.c_str(),
           prefill.device ? "device" : "host", (unsigned long long)(prefill.rawBytes / uint64_t(o.iters + 1)),
           prefill.tokens);
  printf("splitzip-demo: SplitZip %.3f ms, raw wire %.3f ms (median of %d), wire bytes ratio %.4f, "
         "blocks wrong %llu\n",
         1e3 * prefill.splitzipSeconds, 1e3 * prefill.rawSeconds, o.iters, ratio,
         (unsigned long long)decode.wrongBlocks);
  printf("splitzip-demo: bit-exact=%s tokens=%d ratio=%.4f speedup=%.3f%s\n", decode.wrongBlocks == 0 ? "yes" : "no",
         prefill.tokens, ratio, speedup, link > 0 ? " (emulated link)" : "");
  return decode.wrongBlocks == 0 ? 0 : 1;
}

// Whether compression can pay on this wire, from the transfer measured here and the paper's
// pipeline model (App. B): raw takes S / B, SplitZip a + S / (B * R), where `a` is what its path
// spends beyond the wire time (the codec where it is not hidden, per-operation work), taken from
// the measured times. SplitZip then pays on wires slower than S * (1 - 1 / R) / a. Returns the
// link to emulate for the second round: a quarter of that (or of this wire, if slower), where the
// model predicts ~1.2x.
double explain(const RankResult& prefill, double codec, bool device) {
  const double bytes = double(prefill.rawBytes) / double(prefill.iters + 1);
  const double wire = bytes / prefill.rawSeconds / 1e9;
  const double ratio = prefill.wireBytes ? double(prefill.rawBytes) / double(prefill.wireBytes) : 1.0;
  double extra = 0;
  const double pays = sztool::paysBelowBps(bytes, prefill.rawSeconds, prefill.splitzipSeconds, ratio, &extra) / 1e9;
  if (ratio <= 1)  // nothing compressed: no model to apply
    printf("splitzip-demo: this wire moved %.3g GB/s raw; nothing was compressed (ratio %.3f), so App. B has "
           "nothing to say\n", wire, ratio);
  else if (extra <= 0)  // the frames took no longer than their wire bytes: no rate below which to stop
    printf("splitzip-demo: this wire moved %.3g GB/s raw; the %s codec alone runs at %.3g GB/s here (min of encode "
           "and decode), and SplitZip's path took no time beyond its wire time, so it pays on this wire and any "
           "slower one (paper App. B)\n", wire, device ? "GPU" : "CPU", codec);
  else
    printf("splitzip-demo: this wire moved %.3g GB/s raw; the %s codec alone runs at %.3g GB/s here (min of encode "
           "and decode), and SplitZip's path spent %.3g ms per transfer beyond its wire time, so it pays on wires "
           "slower than %.3g GB/s (paper App. B)%s\n",
           wire, device ? "GPU" : "CPU", codec, 1e3 * extra, pays, pays < wire ? ": on this one raw wins" : "");
  return std::max(0.25 * std::min(wire, pays), 0.01);  // at least 10 MB/s: a demo of seconds, not minutes
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) throw sztool::CliError("usage: disagg_kv_transfer [--data F] [--wire W] [--iters N]");
    if (a == "--data") o.data = argv[++i];
    else if (a == "--wire") o.wire = argv[++i];
    else if (a == "--iters") o.iters = std::max(1, atoi(argv[++i]));
    else throw sztool::CliError("unknown argument " + a);
  }
  return o;
}

// The codec's rate for the sample, measured in this process with the prefill rank's codec.
double measureCodec(const Options& o) {
  const bool device = useDevice();
#if SZ_HAVE_CUDA
  if (device) cudaSetDevice(0);
#endif
  return codecGBps(sztool::readTensorFile(o.data, szBfloat16), device);
}

// The emulated link for the communicators made from now on (read at their init); 0: none.
void emulateLink(double gbps) {
  const std::string v = std::to_string(gbps);
  setenv("SZ_TCP_LINK_GBPS", v.c_str(), 1);
  setenv("SZ_IPC_LINK_GBPS", v.c_str(), 1);
}

}  // namespace

// Two rounds: the wire as it is, then (environment set between the rounds, while no rank runs)
// the same transfers over a link emulated below B_hide.
int main(int argc, char** argv) {
  try {
    Options o = parse(argc, argv);
    int status = 0;
    double link = 0;
#if SZ_HAVE_MPI
    if (getenv("OMPI_COMM_WORLD_SIZE")) {  // launched by mpirun: one rank per process
      MPI_Init(&argc, &argv);
      int rank, size;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      if (size != 2) throw sztool::CliError("run with mpirun -np 2");
      for (int round = 0; round < 2; ++round) {
        szUniqueId ids[2];
        if (rank == 0) sztool::check(szGetUniqueId(&ids[0]), "szGetUniqueId");
        if (rank == 0) sztool::check(szGetUniqueId(&ids[1]), "szGetUniqueId");
        MPI_Bcast(ids, sizeof(ids), MPI_BYTE, 0, MPI_COMM_WORLD);
        RankResult mine = runRank(rank, ids, o, [] { MPI_Barrier(MPI_COMM_WORLD); });
        RankResult all[2];
        MPI_Gather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) status |= report(all[0], all[1], o, link);
        if (rank == 0 && round == 0) link = explain(all[0], measureCodec(o), all[0].device);
        MPI_Bcast(&link, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        emulateLink(link);
      }
      MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
      MPI_Finalize();
      return status;
    }
#endif
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0, generation = 0;
    auto barrier = [&] {
      std::unique_lock<std::mutex> lock(mu);
      int gen = generation;
      if (++arrived == 2) {
        arrived = 0;
        ++generation;
        cv.notify_all();
      } else {
        cv.wait(lock, [&] { return generation != gen; });
      }
    };
    for (int round = 0; round < 2; ++round) {
      szUniqueId ids[2];
      sztool::check(szGetUniqueId(&ids[0]), "szGetUniqueId");
      sztool::check(szGetUniqueId(&ids[1]), "szGetUniqueId");
      RankResult results[2];
      std::string errors[2];
      std::vector<std::thread> ranks;
      for (int r = 0; r < 2; ++r)
        ranks.emplace_back([&, r] {
          try {
            results[r] = runRank(r, ids, o, barrier);
          } catch (const std::exception& e) {
            errors[r] = e.what();
          }
        });
      for (auto& t : ranks) t.join();
      for (const std::string& e : errors)
        if (!e.empty()) throw sztool::CliError(e);
      status |= report(results[0], results[1], o, link);
      if (round == 0) emulateLink(link = explain(results[0], measureCodec(o), results[0].device));
    }
    return status;
  } catch (const std::exception& e) {
    fprintf(stderr, "splitzip-demo: error: %s\n", e.what());
    return 1;
  }
}
