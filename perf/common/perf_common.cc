// The perf tests' shared driver (see perf_common.h): rank set-up, buffers, the timed loop, the
// bitwise check, and the rows it hands to perf_report for printing.
#include "perf_common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "perf_data.h"
#include "perf_options.h"
#include "perf_process.h"
#include "perf_report.h"

#if SZ_HAVE_MPI
#include <mpi.h>
#endif
#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace szperf {
namespace {

using Clock = std::chrono::steady_clock;

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

// The most bytes one rank contributes to an exchange: a "#  Rank" line, or the values of a row.
constexpr size_t kCtrlBytes = 512;

// What one rank measured for one size, exchanged as doubles.
enum Value { kOopTime, kRawTime, kCmpTime, kOopWrong, kRawBytes, kWireBytes, kEncodeSeconds, kRecalibrations, kSlices, kFrameSlices,
             kHostTime, kNumValues };

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
  void reportDevices();
  void tearDown();
  void measure(size_t count, szDataType_t type, const std::vector<uint8_t>& pattern);
  int cycle_ = 0;  // the sweep's round (-N); it rotates the order the communicators are timed in
  double timeIters(szComm_t comm, void* recvbuff, size_t count, szDataType_t type, szStats_t* delta,
                   double* hostSeconds = nullptr);
  double timeGraph(szComm_t comm, void* recvbuff, size_t count, szDataType_t type, szStats_t* delta);
  static void statsDelta(const szStats_t& before, const szStats_t& after, szStats_t* delta);
  void warmUp(szDataType_t type);
  uint64_t checkIteration(szComm_t comm, size_t count, szDataType_t type, const std::vector<uint8_t>& pattern);
  void exchange(const void* mine, size_t bytes, void* all);
  void barrier() {
    std::vector<char> all(size_t(info_.nranks));
    exchange("", 1, all.data());
  }
  int role() const { return p_.test->role ? p_.test->role(info_.rank, info_.nranks) : kSends | kReceives; }
  // One iteration: -m operations in one group (as nccl-tests' agg_iters), each receiving into a
  // buffer of its own (`count` elements apart); `agg` 1: the check's single operation.
  void iterate(szComm_t comm, void* recvbuff, size_t count, szDataType_t type, int agg) {
    if (agg > 1) check(info_.rank, szGroupStart(), "szGroupStart");
    for (int a = 0; a < agg; ++a)
      check(info_.rank,
            p_.test->iteration(info_, comm, send_, static_cast<uint8_t*>(recvbuff) + size_t(a) * count * szTypeSize(type),
                               count, type),
            p_.test->name);
    if (agg > 1) check(info_.rank, szGroupEnd(), "szGroupEnd");
  }
  void* alloc(size_t bytes);
  void release(void* p);
  void copy(void* dst, const void* src, size_t bytes);
  void fill(void* dst, size_t bytes, const std::vector<uint8_t>& pattern);
  void sync();

  Process& p_;
  int thread_;
  RankInfo info_;
  szComm_t comm_ = nullptr, rawComm_ = nullptr;  // the configured codec, and codec off
  szComm_t cmpComm_ = nullptr;                    // --compare's mode, or null
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

// `pattern` tiled over `bytes` of a rank buffer.
void Rank::fill(void* dst, size_t bytes, const std::vector<uint8_t>& pattern) {
  for (size_t i = 0; i < bytes; i += pattern.size())
    copy(static_cast<uint8_t*>(dst) + i, pattern.data(), std::min(pattern.size(), bytes - i));
}

// Waits for the rank's enqueued work; host operations completed in their calls.
void Rank::sync() {
#if SZ_HAVE_CUDA
  if (info_.device) CUDACHECK(info_.rank, cudaStreamSynchronize(info_.stream));
#endif
}

// Every rank's `bytes` (at most kCtrlBytes) into `all` (nranks * bytes), on every rank. It
// travels on the communicator under test as uint8 (never compressed), so one path serves MPI,
// SZ_COMM_ID and threads; rank 0 gathers, then sends everything back.
void Rank::exchange(const void* mine, size_t bytes, void* all) {
  const int n = info_.nranks, me = info_.rank;
  const size_t total = bytes * size_t(n);
  uint8_t* ctrl = static_cast<uint8_t*>(ctrl_);
  if (me == 0) {
    check(me, szGroupStart(), "szGroupStart");
    for (int peer = 1; peer < n; ++peer)
      check(me, szRecv(ctrl + size_t(peer) * bytes, bytes, szUint8, peer, comm_, info_.stream), "szRecv");
    check(me, szGroupEnd(), "szGroupEnd");
    copy(ctrl, mine, bytes);
    check(me, szGroupStart(), "szGroupStart");
    for (int peer = 1; peer < n; ++peer) check(me, szSend(ctrl, total, szUint8, peer, comm_, info_.stream), "szSend");
    check(me, szGroupEnd(), "szGroupEnd");
    copy(all, ctrl, total);
  } else {
    copy(ctrl, mine, bytes);
    check(me, szSend(ctrl, bytes, szUint8, 0, comm_, info_.stream), "szSend");
    check(me, szRecv(ctrl, total, szUint8, 0, comm_, info_.stream), "szRecv");
    copy(all, ctrl, total);
  }
}

void Rank::setUp() {
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
  if (p_.compareCodec >= 0) {
    cfg = p_.config;
    cfg.codec = p_.compareCodec;
    check(info_.rank, szCommInitRankConfig(&cmpComm_, info_.nranks, uniqueId(p_, thread_, rawComm_ == comm_ ? 1 : 2),
                               info_.rank, &cfg),
          "szCommInitRankConfig (--compare)");
  }
  send_ = alloc(p_.opts->maxBytes);
  recv_ = alloc(p_.opts->maxBytes * size_t(p_.opts->aggIters));  // -m: a buffer per operation of a group
  ctrl_ = alloc(kCtrlBytes * size_t(info_.nranks));
}

// nccl-tests' "# Using devices" list: every rank's line, printed by rank 0.
void Rank::reportDevices() {
  char host[256] = "?";
  gethostname(host, sizeof(host) - 1);
  int device = -1;
  std::string bus = "0000:00:00", name = "host memory";
#if SZ_HAVE_CUDA
  if (info_.device) {
    cudaDeviceProp prop;
    CUDACHECK(info_.rank, cudaGetDevice(&device));
    CUDACHECK(info_.rank, cudaGetDeviceProperties(&prop, device));
    bus = format("%04x:%02x:%02x", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    name = prop.name;
  }
#endif
  std::string line = deviceLine(info_.rank, int(getpid()), host, device, bus, name);
  std::vector<char> mine(kCtrlBytes, '\0'), all(kCtrlBytes * size_t(info_.nranks));
  memcpy(mine.data(), line.data(), std::min(line.size(), kCtrlBytes - 1));
  exchange(mine.data(), kCtrlBytes, all.data());
  if (info_.rank != 0) return;
  printf("# Using devices\n");
  for (int r = 0; r < info_.nranks; ++r) printf("%s\n", &all[size_t(r) * kCtrlBytes]);
}

void Rank::tearDown() {
  barrier();  // no rank closes its sockets while another still uses them
  if (cmpComm_) check(info_.rank, szCommDestroy(cmpComm_), "szCommDestroy");
  if (rawComm_ != comm_) check(info_.rank, szCommDestroy(rawComm_), "szCommDestroy");
  check(info_.rank, szCommDestroy(comm_), "szCommDestroy");
  release(send_);
  release(recv_);
  release(ctrl_);
#if SZ_HAVE_CUDA
  if (info_.device) CUDACHECK(info_.rank, cudaStreamDestroy(info_.stream));
#endif
}

// Seconds per iteration, as nccl-tests times them: warmup, a barrier, then `iters` iterations
// timed on the host clock until the rank's stream drained. *delta: the send counters the timed
// iterations added.
double Rank::timeIters(szComm_t comm, void* recvbuff, size_t count, szDataType_t type, szStats_t* delta,
                       double* hostSeconds) {
  const Options& o = *p_.opts;
  for (int i = 0; i < o.warmup; ++i) iterate(comm, recvbuff, count, type, o.aggIters);
  sync();
  barrier();
  szStats_t before, after;
  if (o.graphs > 0) {
#if SZ_HAVE_CUDA
    if (info_.device) return timeGraph(comm, recvbuff, count, type, delta);
#endif
    fatal(info_.rank, "-G: operations on host buffers run on the host: there is nothing to capture into a CUDA graph");
  }
  check(info_.rank, szCommGetStats(comm, &before), "szCommGetStats");
  auto t0 = Clock::now();
  double host = 0;  // seconds inside the iteration's calls (szGroupStart .. szGroupEnd)
  for (int i = 0; i < o.iters; ++i) {
    const auto h0 = Clock::now();
    iterate(comm, recvbuff, count, type, o.aggIters);
    host += std::chrono::duration<double>(Clock::now() - h0).count();
    if (o.blocking) sync();
    if (o.blocking == 1) barrier();
  }
  sync();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  check(info_.rank, szCommGetStats(comm, &after), "szCommGetStats");
  statsDelta(before, after, delta);
  const double ops = double(o.iters) * o.aggIters;  // times are per operation, as nccl-tests' with -m
  if (hostSeconds) *hostSeconds = host / ops;
  return seconds / ops;
}

void Rank::statsDelta(const szStats_t& before, const szStats_t& after, szStats_t* delta) {
  delta->rawBytes = after.rawBytes - before.rawBytes;
  delta->wireBytes = after.wireBytes - before.wireBytes;
  delta->encodeSeconds = after.encodeSeconds - before.encodeSeconds;
  delta->slices = after.slices - before.slices;
  delta->compressedSlices = after.compressedSlices - before.compressedSlices;
}

#if SZ_HAVE_CUDA
// -G: the `iters` iterations captured into one CUDA graph on the rank's stream, replayed
// o.graphs times after one untimed replay, as nccl-tests' -G. The communicator counts a graph's
// operations once per reap, so *delta holds one replay's: `iters` iterations, as without -G.
double Rank::timeGraph(szComm_t comm, void* recvbuff, size_t count, szDataType_t type, szStats_t* delta) {
  const Options& o = *p_.opts;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDACHECK(info_.rank, cudaStreamBeginCapture(info_.stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < o.iters; ++i) iterate(comm, recvbuff, count, type, o.aggIters);
  CUDACHECK(info_.rank, cudaStreamEndCapture(info_.stream, &graph));
  CUDACHECK(info_.rank, cudaGraphInstantiate(&exec, graph, 0));
  CUDACHECK(info_.rank, cudaGraphDestroy(graph));
  CUDACHECK(info_.rank, cudaGraphLaunch(exec, info_.stream));
  sync();
  barrier();
  szStats_t before, after;
  check(info_.rank, szCommGetStats(comm, &before), "szCommGetStats");
  auto t0 = Clock::now();
  for (int g = 0; g < o.graphs; ++g) CUDACHECK(info_.rank, cudaGraphLaunch(exec, info_.stream));
  sync();
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  check(info_.rank, szCommGetStats(comm, &after), "szCommGetStats");
  CUDACHECK(info_.rank, cudaGraphExecDestroy(exec));
  statsDelta(before, after, delta);
  return seconds / (double(o.iters) * o.aggIters * o.graphs);
}
#endif

// Before a type's sweep, as nccl-tests' TimeTest: the warmup iterations at the largest size, then
// at the smallest, on both communicators. The sweep's first row then times a warm process (clocks,
// lazily loaded kernels, first-use allocations) like every other row, and the communicator timed
// first in a row is not the one that pays for it.
void Rank::warmUp(szDataType_t type) {
  const Options& o = *p_.opts;
  const size_t es = szTypeSize(type);
  for (szComm_t comm : {comm_, rawComm_, cmpComm_}) {
    if (comm == nullptr || (comm == rawComm_ && rawComm_ == comm_)) continue;
    for (size_t bytes : {o.maxBytes, o.minBytes})
      for (int i = 0; i < o.warmup; ++i) iterate(comm, recv_, bytes / es, type, o.aggIters);
  }
  sync();
  barrier();
}

// One more iteration into a receive buffer poisoned with the complement of the expected data,
// so that an element left unwritten counts too. Returns the elements that differ bitwise (0 on a
// rank that only sends: it takes part in the iteration, and has nothing to check).
uint64_t Rank::checkIteration(szComm_t comm, size_t count, szDataType_t type, const std::vector<uint8_t>& pattern) {
  const size_t es = szTypeSize(type), bytes = count * es;
  if (!(role() & kReceives)) {
    iterate(comm, recv_, count, type, 1);
    sync();
    return 0;
  }
  std::vector<uint8_t> want(bytes), got(bytes);
  tile(want.data(), bytes, pattern);
  for (size_t i = 0; i < bytes; ++i) got[i] = uint8_t(~want[i]);
  copy(recv_, got.data(), bytes);
  iterate(comm, recv_, count, type, 1);
  sync();
  copy(got.data(), recv_, bytes);
  uint64_t wrong = 0;
  for (size_t i = 0; i < bytes; i += es) wrong += memcmp(&got[i], &want[i], es) != 0;
  return wrong;
}

// The time a row reports, from every rank's (nccl-tests' -a).
double combineTimes(const std::vector<double>& all, int n, Value v, Average how) {
  double out = all[size_t(v)];
  for (int r = 1; r < n; ++r) {
    double t = all[size_t(r) * kNumValues + v];
    if (how == Average::kMean) out += t;
    if (how == Average::kMin) out = std::min(out, t);
    if (how == Average::kMax) out = std::max(out, t);
  }
  return how == Average::kMean ? out / n : out;
}

void Rank::measure(size_t count, szDataType_t type, const std::vector<uint8_t>& pattern) {
  const Options& o = *p_.opts;
  szStats_t delta{}, rawDelta{}, start, end;
  check(info_.rank, szCommGetStats(comm_, &start), "szCommGetStats");
  std::vector<double> mine(kNumValues, 0.0);
  // The communicators timed in turn, the order rotated by the cycle (-N): a mode timed first in
  // every row would carry the whole position effect (the wire's state after the last row, a
  // loopback that speeds up or slows down over a row) into the comparison.
  szStats_t cmpDelta{};
  struct Timed {
    szComm_t comm;
    Value value;
    szStats_t* delta;
  };
  std::vector<Timed> order = {{comm_, kOopTime, &delta}};
  if (rawComm_ != comm_) order.push_back({rawComm_, kRawTime, &rawDelta});
  if (cmpComm_) order.push_back({cmpComm_, kCmpTime, &cmpDelta});
  std::rotate(order.begin(), order.begin() + cycle_ % int(order.size()), order.end());
  for (const Timed& t : order)
    mine[t.value] = timeIters(t.comm, recv_, count, type, t.delta, t.value == kOopTime ? &mine[kHostTime] : nullptr);
  if (rawComm_ == comm_) mine[kRawTime] = mine[kOopTime];
  for (int c = 0; c < o.check; ++c) {
    mine[kOopWrong] += double(checkIteration(comm_, count, type, pattern));
    if (rawComm_ != comm_) mine[kOopWrong] += double(checkIteration(rawComm_, count, type, pattern));
    if (cmpComm_) mine[kOopWrong] += double(checkIteration(cmpComm_, count, type, pattern));
  }
  check(info_.rank, szCommGetStats(comm_, &end), "szCommGetStats");
  mine[kRecalibrations] = double(end.recalibrations - start.recalibrations);
  mine[kRawBytes] = double(delta.rawBytes);
  mine[kWireBytes] = double(delta.wireBytes);
  mine[kEncodeSeconds] = delta.encodeSeconds;
  mine[kSlices] = double(delta.slices);
  mine[kFrameSlices] = double(delta.compressedSlices);
  const int n = info_.nranks;
  std::vector<double> all(kNumValues * size_t(n));
  exchange(mine.data(), kNumValues * sizeof(double), all.data());
  std::vector<double> sum(kNumValues, 0.0);
  for (int r = 0; r < n; ++r)
    for (size_t v = 0; v < kNumValues; ++v) sum[v] += all[size_t(r) * kNumValues + v];
  const uint64_t wrong = uint64_t(sum[kOopWrong]);
  if (wrong > 0) p_.exitCode = 1;
  if (info_.rank != 0) return;
  Row row;
  row.bytes = count * szTypeSize(type);
  row.count = count;
  row.type = type;
  const double factor = p_.test->busBwFactor(n);
  Half& h = row.outOfPlace;
  h.timeUs = combineTimes(all, n, kOopTime, o.average) * 1e6;
  h.algbw = h.timeUs > 0 ? double(row.bytes) / h.timeUs / 1e3 : 0;  // GB/s
  h.busbw = h.algbw * factor;
  h.wrong = wrong;
  row.rawTimeUs = combineTimes(all, n, kRawTime, o.average) * 1e6;
  int senders = 0;
  for (int r = 0; r < n; ++r) senders += p_.test->role == nullptr || (p_.test->role(r, n) & kSends) != 0;
  row.wireBytes = senders > 0 ? sum[kWireBytes] / senders / (double(o.iters) * o.aggIters) : 0;
  row.ratio = sum[kWireBytes] > 0 ? sum[kRawBytes] / sum[kWireBytes] : 0;
  row.speedup = row.outOfPlace.timeUs > 0 ? row.rawTimeUs / row.outOfPlace.timeUs : 0;
  row.framesShare = sum[kSlices] > 0 ? sum[kFrameSlices] / sum[kSlices] : 0.0;
  printRow(row, o);
  if (row.framesShare >= kVerdictFramesShare && row.bytes >= p_.largestFramed.bytes) p_.largestFramed = row;
  p_.wrong += wrong;
  p_.busbwSum += row.outOfPlace.busbw;
  p_.busbwCount += 1;
  p_.rows.push_back({{"size", row.bytes},
                     {"count", count},
                     {"type", typeName(type)},
                     {"time_us", row.outOfPlace.timeUs},
                     {"algbw", row.outOfPlace.algbw},
                     {"busbw", row.outOfPlace.busbw},
                     {"wrong", row.outOfPlace.wrong},
                     {"wire_bytes", uint64_t(row.wireBytes + 0.5)},
                     {"ratio", row.ratio},
                     {"raw_time_us", row.rawTimeUs},
                     {"speedup", row.speedup},
                     // Host codec: uncompressed GB/s of the sends' encode stage (its CPU time); 0
                     // for device buffers, whose encode is fused into the slot kernels.
                     {"encode_gbps", sum[kEncodeSeconds] > 0 ? sum[kRawBytes] / sum[kEncodeSeconds] / 1e9 : 0.0},
                     // Codebook switches after drift (SZ_CODEBOOK=auto) in all of the row's sends
                     // (warmup, timed and checked), all ranks: the timed ratio hides the first sends.
                     {"recalibrations", uint64_t(sum[kRecalibrations])},
                     // The timed sends' slices that went as frames (SZ_CODEC=auto's choice).
                     {"frames_share", row.framesShare},
                     // The host's time per iteration inside its calls (szGroupStart to szGroupEnd),
                     // mean over ranks: with device buffers the calls return once enqueued, so this
                     // is the host's cost of an operation group (issue 31); 0 with -G.
                     {"host_us", combineTimes(all, n, kHostTime, Average::kMean) * 1e6}});
  if (cmpComm_) {  // --compare's communicator; the cycle pairs the rows of one size (perf/auto_table.py)
    p_.rows.back()["cycle"] = cycle_;
    p_.rows.back()["compare_codec"] = o.compare;
    p_.rows.back()["compare_time_us"] = combineTimes(all, n, kCmpTime, o.average) * 1e6;
  }
}

void Rank::run() {
  setUp();
  reportDevices();
  if (info_.rank == 0) {
    printSettings(p_);
    printTableHeader(*p_.opts);
  }
  const Options& o = *p_.opts;
  for (cycle_ = 0; cycle_ < o.cycles; ++cycle_)
    for (size_t t = 0; t < o.types.size(); ++t) {
      const szDataType_t type = o.types[t];
      const size_t es = szTypeSize(type);
      fill(send_, o.maxBytes / es * es, p_.patterns[t]);
      if (cycle_ == 0) warmUp(type);
      size_t last = SIZE_MAX;
      for (size_t size = o.minBytes; size <= o.maxBytes;) {
        if (size / es != last) measure(size / es, type, p_.patterns[t]);  // sizes below an element apart: one row
        last = size / es;
        size_t next = o.stepFactor > 1 ? size * size_t(o.stepFactor) : size + o.stepBytes;
        if (next <= size) break;  // 0 * factor, or an overflow
        size = next;
      }
    }
  tearDown();
}

}  // namespace

int perfMain(int argc, char** argv, const PerfTest& test) {
  Options o;
  Process p;
  p.opts = &o;
  p.test = &test;
  try {
    int exitCode = 0;
    if (!parseOptions(argc, argv, test.name, &o, &exitCode)) return exitCode;
    findRanks(p, &argc, &argv);
#if SZ_HAVE_CUDA
    if (cudaGetDeviceCount(&p.devices) != cudaSuccess) p.devices = 0;
    cudaGetLastError();
#endif
    configure(p);
    for (szDataType_t type : o.types)
      p.patterns.push_back(o.data.empty() ? generateData(type, o.maxBytes) : readData(o.data, type));
    p.dataBytes = p.patterns[0].size();
  } catch (const std::exception& e) {  // SetupError, or no memory for the data
    fprintf(stderr, "%s_perf: %s\n", test.name,
            dynamic_cast<const std::bad_alloc*>(&e) ? "not enough memory for the data" : e.what());
#if SZ_HAVE_MPI
    if (p.launch == Launch::kMpi) MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
  }
  if (p.proc == 0) printPreamble(o, test.name);
  std::vector<std::thread> threads;
  for (int t = 1; t < p.ranksPerProc; ++t) threads.emplace_back([&p, t] { Rank(p, t).run(); });
  Rank(p, 0).run();  // thread 0 is the main thread: the one that calls MPI
  for (std::thread& t : threads) t.join();
  if (p.proc == 0) {
    printWherePays(p.largestFramed, p.config.codec);
    printFooter(p.wrong, p.busbwCount ? p.busbwSum / p.busbwCount : 0.0, test.name);
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
