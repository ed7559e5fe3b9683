// The perf tests' shared driver (see perf_common.h): flags, test data, rank set-up, buffers,
// the timed loop, the bitwise check and the nccl-tests-style table.
#include "perf_common.h"

#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "src/base/param.h"
#include "tools/cli_common.h"
#include "tools/tensor_file.h"

#if SZ_HAVE_MPI
#include <mpi.h>
#endif
#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace szperf {
namespace {

using Clock = std::chrono::steady_clock;

// A bad flag, data file or environment: reported once, exit status 1.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

const char* resultName(szResult_t res) {
  static const char* const kNames[] = {
      "szSuccess",      "szUnhandledCudaError", "szSystemError", "szInternalError", "szInvalidArgument",
      "szInvalidUsage", "szRemoteError",        "szInProgress",  "szCorruptFrame",  "szTimeout"};
  return res >= 0 && res < szNumResults ? kNames[res] : "unknown szResult_t";
}

// A failed SplitZip or CUDA call ends the process at once: a rank that returned would leave its
// peers waiting. The other ranks see szRemoteError (or szTimeout), or mpirun ends them.
[[noreturn]] void fatal(int rank, const std::string& what) {
  fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  fflush(stdout);
  fflush(stderr);
  _exit(1);
}

void check(int rank, szResult_t res, const char* call) {
  if (res != szSuccess)
    fatal(rank, format("%s failed: %s (%s): %s", call, resultName(res), szGetErrorString(res),
                       szGetLastError(nullptr)));
}

#if SZ_HAVE_CUDA
void cudaCheck(int rank, cudaError_t err, const char* call) {
  if (err != cudaSuccess) fatal(rank, format("%s failed: %s", call, cudaGetErrorString(err)));
}
#define CUDACHECK(rank, call) cudaCheck((rank), (call), #call)
#endif

// ---- Data types: nccl-tests' names first, then the SplitZip CLI's.

struct TypeName {
  szDataType_t type;
  const char* name;  // as nccl-tests prints it
};
const TypeName kTypes[] = {{szInt8, "int8"},         {szUint8, "uint8"},       {szInt32, "int32"},
                           {szUint32, "uint32"},     {szInt64, "int64"},       {szUint64, "uint64"},
                           {szFloat16, "half"},      {szFloat32, "float"},     {szFloat64, "double"},
                           {szBfloat16, "bfloat16"}, {szFloat8e4m3, "f8e4m3"}, {szFloat8e5m2, "f8e5m2"}};

const TypeName& typeInfo(szDataType_t type) {
  for (const TypeName& t : kTypes)
    if (t.type == type) return t;
  throw SetupError(format("invalid data type %d", int(type)));
}

szDataType_t parseType(const std::string& name) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"char", "int8"},      {"int", "int32"},     {"uint", "uint32"},    {"fp16", "half"},
      {"float16", "half"},   {"fp32", "float"},    {"float32", "float"},  {"fp64", "double"},
      {"float64", "double"}, {"bf16", "bfloat16"}, {"fp8e4m3", "f8e4m3"}, {"fp8e5m2", "f8e5m2"}};
  std::string n = name;
  for (const auto& [alias, canonical] : kAliases)
    if (n == alias) n = canonical;
  for (const TypeName& t : kTypes)
    if (n == t.name) return t.type;
  throw SetupError("-d " + name +
                   ": not a data type (int8, uint8, int32, uint32, int64, uint64, "
                   "half, float, double, bfloat16, f8e4m3, f8e5m2)");
}

// ---- Flags.

struct Options {
  size_t minBytes = 32 << 20, maxBytes = 32 << 20, stepBytes = 1 << 20;
  int stepFactor = 1;  // > 1: sizes grow by this factor, else by stepBytes
  int iters = 20, warmup = 5, check = 1, threads = 1, gpus = 1;
  szDataType_t type = szBfloat16;
  std::string wire, codec, data, json;
  size_t sliceBytes = 0;
  int depth = 0, crc = -1, timeoutMs = 0;
};

// "64M", "4K", "1G" (powers of 1024) or plain bytes, as nccl-tests reads sizes.
size_t parseSize(const std::string& flag, const std::string& s) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(s.c_str(), &end, 0);
  int shift = 0;
  static const char kUnits[] = "KkMmGg";
  if (end != s.c_str() && *end != '\0' && end[1] == '\0') {
    const char* unit = strchr(kUnits, *end);
    shift = unit ? 10 * (1 + int(unit - kUnits) / 2) : -1;
    ++end;
  }
  if (errno != 0 || end == s.c_str() || *end != '\0' || shift < 0 || s[0] == '-' ||
      (shift && v > (SIZE_MAX >> shift)))
    throw SetupError(flag + " " + s + ": not a size (bytes, or with a K, M or G suffix)");
  return size_t(v) << shift;
}

int codecMode(const std::string& name) {
  if (name == "on") return SZ_CODEC_ON;
  if (name == "off") return SZ_CODEC_OFF;
  if (name == "auto") return SZ_CODEC_AUTO;
  throw SetupError("--codec " + name + ": use on, off or auto");
}

// Parses the flags; false when the process should exit with *exitCode (help, bad flag).
bool parseOptions(int argc, char** argv, const PerfTest& test, Options* o, int* exitCode) {
  CLI::App app{std::string("SplitZip ") + test.name + " perf test (nccl-tests flags)"};
  std::string minB = "32M", maxB = "32M", stepB = "1M", type = "bfloat16", sliceB = "0";
  app.add_option("-b,--minbytes", minB, "smallest message in bytes (K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", maxB, "largest message in bytes")->capture_default_str();
  app.add_option("-i,--stepbytes", stepB, "size increment when -f is 1")->capture_default_str();
  app.add_option("-f,--stepfactor", o->stepFactor, "size multiplication factor")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-n,--iters", o->iters, "timed iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-w,--warmup_iters", o->warmup, "untimed iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("-c,--check", o->check, "bitwise check of one more iteration (0/1)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("-d,--datatype", type, "data type (bfloat16, float, f8e5m2, half, int8, ...)")
      ->capture_default_str();
  app.add_option("-t,--nthreads", o->threads, "ranks as threads of each process")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-g,--ngpus", o->gpus, "GPUs per thread (each GPU is a rank, in a thread of its own)")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-J,--output_json", o->json, "write the result rows to this JSON file");
  app.add_option("--wire", o->wire, "tcp, nccl or ipc (default: SZ_WIRE, else nccl with a GPU, else tcp)")
      ->check(CLI::IsMember({"tcp", "nccl", "ipc"}));
  app.add_option("--codec", o->codec, "on, off or auto (default: SZ_CODEC, else auto)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--data", o->data,
                 "raw little-endian elements, .npy, or .safetensors (its tensors of the -d type)");
  app.add_option("--slice-bytes", sliceB, "slice size (default: SZ_SLICE_BYTES, else 4M)");
  app.add_option("--depth", o->depth, "slices in flight (default: SZ_PIPELINE_DEPTH, else 4)")
      ->check(CLI::Range(1, 64));
  app.add_option("--crc", o->crc, "CRC32C on every slice, 0/1 (default: SZ_CRC, else 0)")
      ->check(CLI::Range(0, 1));
  app.add_option("--timeout-ms", o->timeoutMs, "peer timeout (default: SZ_TIMEOUT_MS, else 60000)")
      ->check(CLI::Range(1, INT_MAX));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return false;
  }
  o->minBytes = parseSize("-b", minB);
  o->maxBytes = parseSize("-e", maxB);
  o->stepBytes = parseSize("-i", stepB);
  o->sliceBytes = parseSize("--slice-bytes", sliceB);
  o->type = parseType(type);
  if (o->minBytes > o->maxBytes)
    throw SetupError(format("-b %zu is larger than -e %zu", o->minBytes, o->maxBytes));
  if (o->stepFactor == 1 && o->stepBytes == 0) throw SetupError("-i 0 with -f 1 never reaches -e");
  if (!o->data.empty() && o->type != szBfloat16 && o->type != szFloat32 && o->type != szFloat8e5m2)
    throw SetupError(format("--data reads bf16, float and fp8e5m2 tensors, not -d %s: use generated data",
                            type.c_str()));
  if (!o->json.empty() && !std::ofstream(o->json, std::ios::app))  // fail now, not after the run
    throw SetupError(format("-J %s: cannot write there", o->json.c_str()));
  return true;
}

// ---- Test data.

// The --data file's elements of the type (the CLI's readers: raw, .npy, .safetensors).
std::vector<uint8_t> readData(const std::string& path, szDataType_t type) {
  sztool::TensorData d;
  try {
    d = sztool::readTensorFile(path, type);
  } catch (const sztool::CliError& e) {
    throw SetupError(std::string("--data: ") + e.what());
  }
  if (d.bytes.empty()) throw SetupError("--data " + path + ": no elements");
  return std::move(d.bytes);
}

// Generated data, the same in every process (fixed seed): BF16 like a KV cache (normal, sigma
// 0.5, rounded to nearest even), random bytes for the other types. Tiling repeats it, which a
// per-slice codec without a dictionary cannot exploit.
std::vector<uint8_t> generateData(szDataType_t type, size_t maxBytes) {
  constexpr size_t kPatternBytes = 16 << 20;
  size_t es = szTypeSize(type);
  size_t bytes = std::max(es, std::min(maxBytes, kPatternBytes) / es * es);
  std::vector<uint8_t> out(bytes);
  std::mt19937_64 rng(0x535A5045);
  if (type == szBfloat16) {
    std::normal_distribution<float> normal(0.0f, 0.5f);
    for (size_t i = 0; i < bytes / 2; ++i) {
      float v = normal(rng);
      uint32_t u;
      memcpy(&u, &v, sizeof(u));
      uint16_t bf = uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
      memcpy(&out[2 * i], &bf, 2);
    }
  } else {
    for (size_t i = 0; i < bytes; i += 8) {
      uint64_t r = rng();
      memcpy(&out[i], &r, std::min<size_t>(8, bytes - i));
    }
  }
  return out;
}

// ---- Processes and ranks.

enum class Launch { kMpi, kCommId, kThreads };

// What the rank threads of this process share.
struct Process {
  const Options* opts;
  const PerfTest* test;
  Launch launch = Launch::kThreads;
  int nprocs = 1, proc = 0, procLocal = 0;  // processes, this one, this one on its host
  int ranksPerProc = 1, nranks = 1;
  int devices = 0;  // GPUs used for buffers; 0: host buffers
  szConfig_t config = SZ_CONFIG_INITIALIZER;
  std::string wire;               // resolved, for the settings line
  std::vector<uint8_t> expected;  // every buffer's content: the data tiled to the largest size
  // Unique ids, one per communicator, made by thread 0 and read by the other threads.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<szUniqueId> ids;
  size_t dataBytes = 0;                                           // the data before tiling
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();  // global rank 0's results
  std::atomic<int> exitCode{0};
};

int envInt(const char* name, int deflt) {
  const char* s = getenv(name);
  if (s == nullptr || *s == '\0') return deflt;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < INT_MIN || v > INT_MAX) throw SetupError(format("%s=%s is not a number", name, s));
  return int(v);
}

// The unique id of this process's `index`-th communicator: global rank 0 makes it, MPI or
// SZ_COMM_ID carries it to the other processes, thread 0 hands it to the other threads.
szUniqueId uniqueId(Process& p, int thread, size_t index) {
  std::unique_lock<std::mutex> lock(p.mu);
  if (thread == 0) {
    szUniqueId id;
    memset(&id, 0, sizeof(id));
    if (p.launch != Launch::kMpi || p.proc == 0)
      check(p.proc * p.ranksPerProc, szGetUniqueId(&id), "szGetUniqueId");
#if SZ_HAVE_MPI
    if (p.launch == Launch::kMpi) MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    p.ids.push_back(id);
    p.cv.notify_all();
  }
  p.cv.wait(lock, [&] { return p.ids.size() > index; });
  return p.ids[index];
}

class Rank {
 public:
  Rank(Process& p, int thread) : p_(p), thread_(thread) {
    info_.rank = p.proc * p.ranksPerProc + thread;
    info_.nranks = p.nranks;
    info_.device = p.devices > 0;
    info_.stream = nullptr;
  }
  void run();

 private:
  void setUp();
  void tearDown();
  void measure(size_t count);
  double timeIters(szComm_t comm, size_t count, szStats_t* delta);
  uint64_t checkIteration(szComm_t comm, size_t count);
  void allSum(std::vector<double>& v);
  void iterate(szComm_t comm, size_t count) {
    check(info_.rank, p_.test->iteration(info_, comm, send_, recv_, count, p_.opts->type), p_.test->name);
  }
  void* alloc(size_t bytes);
  void release(void* p);
  void copy(void* dst, const void* src, size_t bytes);
  void sync();

  Process& p_;
  int thread_;
  RankInfo info_;
  szComm_t comm_ = nullptr, rawComm_ = nullptr;  // the configured codec, and codec off
  void *send_ = nullptr, *recv_ = nullptr, *ctrl_ = nullptr;
};

void* Rank::alloc(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
#if SZ_HAVE_CUDA
  if (info_.device) {
    void* p = nullptr;
    CUDACHECK(info_.rank, cudaMalloc(&p, bytes));
    return p;
  }
#endif
  void* p = malloc(bytes);
  if (p == nullptr) fatal(info_.rank, format("out of memory (%zu bytes)", bytes));
  return p;
}

void Rank::release(void* p) {
#if SZ_HAVE_CUDA
  if (info_.device) {
    CUDACHECK(info_.rank, cudaFree(p));
    return;
  }
#endif
  free(p);
}

// Between host memory and a rank buffer, either way; complete on return. The stream is drained
// first: a copy queued behind a held szRecv occupies a copy engine, and ranks sharing a GPU
// (one H200, two ranks) would then wait for each other's copies (docs/PIPELINE.md).
void Rank::copy(void* dst, const void* src, size_t bytes) {
#if SZ_HAVE_CUDA
  if (info_.device) {
    sync();
    CUDACHECK(info_.rank, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, info_.stream));
    sync();
    return;
  }
#endif
  memcpy(dst, src, bytes);
}

// Waits for the rank's enqueued work; host operations completed in their calls.
void Rank::sync() {
#if SZ_HAVE_CUDA
  if (info_.device) CUDACHECK(info_.rank, cudaStreamSynchronize(info_.stream));
#endif
}

// Sums `v` over all ranks, every rank getting the total. It travels on the communicator under
// test as float64 (never compressed), so one path serves MPI, SZ_COMM_ID and threads.
void Rank::allSum(std::vector<double>& v) {
  const int n = info_.nranks, me = info_.rank;
  if (n == 1) return;
  const size_t bytes = v.size() * sizeof(double);
  if (me == 0) {
    check(me, szGroupStart(), "szGroupStart");
    for (int peer = 1; peer < n; ++peer)
      check(me,
            szRecv(static_cast<char*>(ctrl_) + peer * bytes, v.size(), szFloat64, peer, comm_, info_.stream),
            "szRecv");
    check(me, szGroupEnd(), "szGroupEnd");
    std::vector<double> all(v.size() * size_t(n));
    copy(all.data(), ctrl_, bytes * size_t(n));
    for (int peer = 1; peer < n; ++peer)
      for (size_t i = 0; i < v.size(); ++i) v[i] += all[size_t(peer) * v.size() + i];
    copy(ctrl_, v.data(), bytes);
    check(me, szGroupStart(), "szGroupStart");
    for (int peer = 1; peer < n; ++peer)
      check(me, szSend(ctrl_, v.size(), szFloat64, peer, comm_, info_.stream), "szSend");
    check(me, szGroupEnd(), "szGroupEnd");
    sync();
  } else {
    copy(ctrl_, v.data(), bytes);
    check(me, szSend(ctrl_, v.size(), szFloat64, 0, comm_, info_.stream), "szSend");
    check(me, szRecv(ctrl_, v.size(), szFloat64, 0, comm_, info_.stream), "szRecv");
    copy(v.data(), ctrl_, bytes);
  }
}

constexpr size_t kCtrlValues = 8;  // the most values one allSum carries

void Rank::setUp() {
  const Options& o = *p_.opts;
#if SZ_HAVE_CUDA
  if (info_.device) {
    CUDACHECK(info_.rank, cudaSetDevice((p_.procLocal * p_.ranksPerProc + thread_) % p_.devices));
    CUDACHECK(info_.rank, cudaStreamCreateWithFlags(&info_.stream, cudaStreamNonBlocking));
  }
#endif
  szConfig_t cfg = p_.config;
  check(info_.rank, szCommInitRankConfig(&comm_, info_.nranks, uniqueId(p_, thread_, 0), info_.rank, &cfg),
        "szCommInitRankConfig");
  rawComm_ = comm_;
  if (cfg.codec != SZ_CODEC_OFF) {
    cfg.codec = SZ_CODEC_OFF;
    check(info_.rank,
          szCommInitRankConfig(&rawComm_, info_.nranks, uniqueId(p_, thread_, 1), info_.rank, &cfg),
          "szCommInitRankConfig (codec off)");
  }
  send_ = alloc(o.maxBytes);
  recv_ = alloc(o.maxBytes);
  ctrl_ = alloc(kCtrlValues * sizeof(double) * size_t(info_.nranks));
  copy(send_, p_.expected.data(), p_.expected.size());
}

void Rank::tearDown() {
  std::vector<double> none(1);
  allSum(none);  // no rank closes its sockets while another still uses them
  if (rawComm_ != comm_) check(info_.rank, szCommDestroy(rawComm_), "szCommDestroy");
  check(info_.rank, szCommDestroy(comm_), "szCommDestroy");
  release(send_);
  release(recv_);
  release(ctrl_);
#if SZ_HAVE_CUDA
  if (info_.device) CUDACHECK(info_.rank, cudaStreamDestroy(info_.stream));
#endif
}

// Seconds per iteration, as nccl-tests' out-of-place time: warmup, a barrier, then `iters`
// iterations timed on the host clock until the rank's stream drained. *delta: the send
// counters the timed iterations added.
double Rank::timeIters(szComm_t comm, size_t count, szStats_t* delta) {
  const Options& o = *p_.opts;
  for (int i = 0; i < o.warmup; ++i) iterate(comm, count);
  sync();
  std::vector<double> barrier(1);
  allSum(barrier);
  szStats_t before, after;
  check(info_.rank, szCommGetStats(comm, &before), "szCommGetStats");
  auto t0 = Clock::now();
  for (int i = 0; i < o.iters; ++i) iterate(comm, count);
  sync();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  check(info_.rank, szCommGetStats(comm, &after), "szCommGetStats");
  delta->rawBytes = after.rawBytes - before.rawBytes;
  delta->wireBytes = after.wireBytes - before.wireBytes;
  return seconds / o.iters;
}

// One more iteration into a receive buffer poisoned with the complement of the expected data,
// so that an element left unwritten counts too. Returns the elements that differ bitwise.
uint64_t Rank::checkIteration(szComm_t comm, size_t count) {
  const size_t es = szTypeSize(p_.opts->type), bytes = count * es;
  const uint8_t* want = p_.expected.data();
  std::vector<uint8_t> got(bytes);
  for (size_t i = 0; i < bytes; ++i) got[i] = uint8_t(~want[i]);
  copy(recv_, got.data(), bytes);
  iterate(comm, count);
  sync();
  copy(got.data(), recv_, bytes);
  uint64_t wrong = 0;
  for (size_t i = 0; i < bytes; i += es) wrong += memcmp(&got[i], &want[i], es) != 0;
  return wrong;
}

void Rank::measure(size_t count) {
  const Options& o = *p_.opts;
  szStats_t delta{}, rawDelta{};
  double t = timeIters(comm_, count, &delta);
  double rawT = rawComm_ == comm_ ? t : timeIters(rawComm_, count, &rawDelta);
  uint64_t wrong = 0;
  if (o.check) {
    wrong = checkIteration(comm_, count);
    if (rawComm_ != comm_) wrong += checkIteration(rawComm_, count);
  }
  std::vector<double> v = {t, rawT, double(wrong), double(delta.rawBytes), double(delta.wireBytes)};
  allSum(v);
  if (info_.rank != 0) {
    if (v[2] > 0) p_.exitCode = 1;
    return;
  }
  const int n = info_.nranks;
  const size_t bytes = count * szTypeSize(o.type);
  double timeUs = v[0] / n * 1e6, rawUs = v[1] / n * 1e6;
  double algbw = timeUs > 0 ? double(bytes) / timeUs / 1e3 : 0;  // GB/s
  double busbw = algbw * p_.test->busBwFactor(n);
  double wireBytes = v[4] / n / o.iters, ratio = v[4] > 0 ? v[3] / v[4] : 0;
  double speedup = timeUs > 0 ? rawUs / timeUs : 0;
  printf("%12zu  %12zu  %8s  %9.1f  %6.2f  %6.2f  %6.0f  %12.0f  %6.3f  %9.1f  %7.3f\n", bytes, count,
         typeInfo(o.type).name, timeUs, algbw, busbw, v[2], wireBytes, ratio, rawUs, speedup);
  fflush(stdout);
  p_.rows.push_back({{"size", bytes},
                     {"count", count},
                     {"type", typeInfo(o.type).name},
                     {"time_us", timeUs},
                     {"algbw", algbw},
                     {"busbw", busbw},
                     {"wrong", uint64_t(v[2])},
                     {"wire_bytes", uint64_t(wireBytes + 0.5)},
                     {"ratio", ratio},
                     {"raw_time_us", rawUs},
                     {"speedup", speedup}});
  if (v[2] > 0) p_.exitCode = 1;
}

void Rank::run() {
  setUp();
  const Options& o = *p_.opts;
  const size_t es = szTypeSize(o.type);
  size_t last = SIZE_MAX;
  for (size_t size = o.minBytes; size <= o.maxBytes;) {
    if (size / es != last) measure(size / es);  // sizes below an element apart give one row
    last = size / es;
    size_t next = o.stepFactor > 1 ? size * size_t(o.stepFactor) : size + o.stepBytes;
    if (next <= size) break;  // 0 * factor, or an overflow
    size = next;
  }
  tearDown();
}

// ---- The process.

void printSettings(const Process& p) {
  const Options& o = *p.opts;
  const szConfig_t& c = p.config;
  const char* launch = p.launch == Launch::kMpi      ? "MPI"
                       : p.launch == Launch::kCommId ? "SZ_COMM_ID"
                                                     : "threads";
  printf("# SplitZip %s_perf\n", p.test->name);
  printf(
      "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d "
      "validation: %d\n",
      o.threads, o.gpus, o.minBytes, o.maxBytes, o.stepFactor > 1 ? size_t(o.stepFactor) : o.stepBytes,
      o.stepFactor > 1 ? "factor" : "bytes", o.warmup, o.iters, o.check);
  printf("# ranks %d (%d process%s x %d, %s), %s buffers\n", p.nranks, p.nprocs, p.nprocs > 1 ? "es" : "",
         p.ranksPerProc, launch, p.devices > 0 ? "device" : "host");
  cpu_set_t cpus;
  int ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  printf("# cpus usable by this process: %d%s\n", ncpus,
         ncpus == 1 ? " (warning: its ranks, SplitZip's progress threads and NCCL's proxy threads share it; "
                      "mpirun binds ranks to a core by default: use --bind-to none)"
                    : "");
  printf("# wire %s, codec %s, slice bytes %zu, pipeline depth %d, crc %d, timeout %d ms\n", p.wire.c_str(),
         c.codec == SZ_CODEC_ON    ? "on"
         : c.codec == SZ_CODEC_OFF ? "off"
                                   : "auto",
         c.sliceBytes, c.pipelineDepth, c.crc, c.timeoutMs);
  printf("# data: %s, %zu bytes tiled to each message\n",
         !o.data.empty()        ? o.data.c_str()
         : o.type == szBfloat16 ? "generated KV-like (normal, sigma 0.5)"
                                : "generated random bytes",
         p.dataBytes);
  printf(
      "# raw_time: the same test on a second communicator with codec off; wire_bytes and ratio: "
      "per rank and iteration, from szCommGetStats\n#\n");
  printf("#%11s  %12s  %8s  %9s  %6s  %6s  %6s  %12s  %6s  %9s  %7s\n", "size", "count", "type", "time",
         "algbw", "busbw", "#wrong", "wire_bytes", "ratio", "raw_time", "speedup");
  printf("#%11s  %12s  %8s  %9s  %6s  %6s  %6s  %12s  %6s  %9s  %7s\n", "(B)", "(elements)", "", "(us)",
         "(GB/s)", "(GB/s)", "", "(B)", "", "(us)", "");
  fflush(stdout);
}

// Resolves the configuration with the documented defaults (include/splitzip.h), so that the
// settings line shows what every rank uses.
void configure(Process& p) {
  const Options& o = *p.opts;
  szConfig_t& c = p.config;
  const char* envWire = getenv("SZ_WIRE");
  p.wire = !o.wire.empty() ? o.wire : envWire && *envWire ? envWire : p.devices > 0 ? "nccl" : "tcp";
  c.wire = p.wire.c_str();
  const char* envCodec = getenv("SZ_CODEC");
  c.codec = codecMode(!o.codec.empty() ? o.codec : envCodec && *envCodec ? envCodec : "auto");
  // The library's own parameters (src/base/param.h): the same defaults and K/M/G suffixes.
  c.sliceBytes = o.sliceBytes ? o.sliceBytes : size_t(szParamSliceBytes());
  c.pipelineDepth = o.depth ? o.depth : int(szParamPipelineDepth());
  c.crc = o.crc >= 0 ? o.crc : szParamCrc() != 0;
  c.timeoutMs = o.timeoutMs ? o.timeoutMs : int(szParamTimeoutMs());
}

// Finds how this process was started and which of the communicator's ranks it holds.
void findRanks(Process& p, int* argc, char*** argv) {
  const Options& o = *p.opts;
  p.ranksPerProc = o.threads * o.gpus;
  const char* ompi = getenv("OMPI_COMM_WORLD_SIZE");
  const char* commId = getenv("SZ_COMM_ID");
  if (ompi != nullptr) {
#if SZ_HAVE_MPI
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);  // only thread 0 calls MPI
    MPI_Comm_size(MPI_COMM_WORLD, &p.nprocs);
    MPI_Comm_rank(MPI_COMM_WORLD, &p.proc);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p.proc, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &p.procLocal);
    MPI_Comm_free(&local);
    p.launch = Launch::kMpi;
#else
    (void)argc, (void)argv;
    if (atoi(ompi) > 1) throw SetupError("started by mpirun, but built without MPI: use SZ_COMM_ID");
#endif
  } else if (commId != nullptr && *commId != '\0' && getenv("SZ_RANK") && getenv("SZ_NRANKS")) {
    p.launch = Launch::kCommId;
    p.nprocs = envInt("SZ_NRANKS", 0);
    p.proc = envInt("SZ_RANK", -1);
    p.procLocal = envInt("SZ_LOCAL_RANK", p.proc);
    if (p.ranksPerProc != 1) throw SetupError("with SZ_COMM_ID each process is one rank: drop -t and -g");
    if (p.nprocs < 1 || p.proc < 0 || p.proc >= p.nprocs)
      throw SetupError(format("SZ_RANK=%d is not a rank of SZ_NRANKS=%d", p.proc, p.nprocs));
  }
  p.nranks = p.nprocs * p.ranksPerProc;
  if (p.nranks < 2)
    throw SetupError(format("%s needs at least 2 ranks: use mpirun -np 2, -t 2 or SZ_COMM_ID", p.test->name));
}

}  // namespace

int perfMain(int argc, char** argv, const PerfTest& test) {
  Options o;
  Process p;
  p.opts = &o;
  p.test = &test;
  try {
    int exitCode = 0;
    if (!parseOptions(argc, argv, test, &o, &exitCode)) return exitCode;
    findRanks(p, &argc, &argv);
#if SZ_HAVE_CUDA
    if (cudaGetDeviceCount(&p.devices) != cudaSuccess) p.devices = 0;
    cudaGetLastError();
#endif
    configure(p);
    std::vector<uint8_t> data = o.data.empty() ? generateData(o.type, o.maxBytes) : readData(o.data, o.type);
    p.dataBytes = data.size();
    p.expected.resize(o.maxBytes);
    for (size_t i = 0; i < p.expected.size(); i += data.size())
      memcpy(&p.expected[i], data.data(), std::min(data.size(), p.expected.size() - i));
  } catch (const std::exception& e) {  // SetupError, or no memory for the largest message
    fprintf(stderr, "%s_perf: %s\n", test.name,
            dynamic_cast<const std::bad_alloc*>(&e) ? "not enough memory for the largest message (-e)" : e.what());
#if SZ_HAVE_MPI
    if (p.launch == Launch::kMpi) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
  }
  if (p.proc == 0) printSettings(p);
  std::vector<std::thread> threads;
  for (int t = 1; t < p.ranksPerProc; ++t) threads.emplace_back([&p, t] { Rank(p, t).run(); });
  Rank(p, 0).run();  // thread 0 is the main thread: the one that calls MPI
  for (std::thread& t : threads) t.join();
  if (p.proc == 0) {
    double sum = 0;
    for (const auto& r : p.rows) sum += r["busbw"].get<double>();
    printf("# Errors (wrong elements): %s\n", p.exitCode == 0 ? "0 OK" : "FAILED");
    printf("# Avg bus bandwidth    : %g\n#\n", p.rows.empty() ? 0.0 : sum / double(p.rows.size()));
    if (!o.json.empty()) {
      std::ofstream out(o.json);
      out << p.rows.dump(2) << "\n";
      if (!out) {
        fprintf(stderr, "%s_perf: cannot write %s\n", test.name, o.json.c_str());
        p.exitCode = 1;
      }
    }
  }
#if SZ_HAVE_MPI
  if (p.launch == Launch::kMpi) MPI_Finalize();
#endif
  return p.exitCode;
}

}  // namespace szperf
