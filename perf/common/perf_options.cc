// The perf tests' flags (see perf_options.h): nccl-tests' letters and defaults, the ones that
// mean nothing for point-to-point SplitZip accepted with a note in the header, the ones that
// cannot be honoured refused with the reason.
#include "perf_options.h"

#include <strings.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace szperf {

std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

namespace {

struct TypeName {
  szDataType_t type;
  const char* name;  // as nccl-tests prints it
};
const TypeName kTypes[] = {{szInt8, "int8"},         {szUint8, "uint8"},       {szInt32, "int32"},
                           {szUint32, "uint32"},     {szInt64, "int64"},       {szUint64, "uint64"},
                           {szFloat16, "half"},      {szFloat32, "float"},     {szFloat64, "double"},
                           {szBfloat16, "bfloat16"}, {szFloat8e4m3, "f8e4m3"}, {szFloat8e5m2, "f8e5m2"}};

// nccl-tests' names (and "all"), its aliases, and the SplitZip CLI's names; any case.
std::vector<szDataType_t> parseTypes(const std::string& name) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"char", "int8"},      {"int", "int32"},     {"uint", "uint32"},    {"fp16", "half"},
      {"float16", "half"},   {"fp32", "float"},    {"float32", "float"},  {"fp64", "double"},
      {"float64", "double"}, {"bf16", "bfloat16"}, {"fp8e4m3", "f8e4m3"}, {"fp8e5m2", "f8e5m2"}};
  std::vector<szDataType_t> out;
  if (strcasecmp(name.c_str(), "all") == 0) {
    for (const TypeName& t : kTypes) out.push_back(t.type);
    return out;
  }
  const char* n = name.c_str();
  for (const auto& [alias, canonical] : kAliases)
    if (strcasecmp(n, alias) == 0) n = canonical;
  for (const TypeName& t : kTypes)
    if (strcasecmp(n, t.name) == 0) return {t.type};
  throw SetupError("-d " + name +
                   ": not a data type (int8, uint8, int32, uint32, int64, uint64, half, float, double, "
                   "bfloat16, f8e4m3, f8e5m2, or all)");
}

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

// nccl-tests' flags that exist here only so that its command lines run.
struct Compat {
  int parallelInit = 0, root = 0, streamNull = 0, timeoutS = 0, cpuTime = 0;
  int average = 1, registration = 0;
  std::string op = "sum";
};

void addCompatFlags(CLI::App& app, Compat& c, Options* o, const char* testName) {
  app.add_option("-m,--agg_iters", o->aggIters,
                 "operations per iteration, in one group (each receives into a buffer of its own); times are per operation")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-N,--run_cycles", o->cycles, "run the whole sweep this many times")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-p,--parallel_init", c.parallelInit, "0/1 (accepted: ranks always initialize concurrently)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("-o,--op", c.op, format("reduction (accepted and ignored: %s reduces nothing)", testName))
      ->capture_default_str()
      ->check(CLI::IsMember({"sum", "prod", "min", "max", "avg", "mulsum", "all"}, CLI::ignore_case));
  app.add_option("-r,--root", c.root, format("root rank (accepted and ignored: %s has no root)", testName))
      ->capture_default_str();
  app.add_option("-z,--blocking", o->blocking, "0, 1 (wait and barrier after every iteration) or 2 (wait only)")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  app.add_option("-y,--stream_null", c.streamNull, "0 only: every rank uses a stream of its own")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("-T,--timeout", c.timeoutS, "seconds without progress before a rank fails (0: --timeout-ms)")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX / 1000));
  app.add_option("-G,--cudagraph", o->graphs,
                 "capture each row's timed iterations into a CUDA graph and replay it this many times (0: no graph)")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("-C,--report_cputime", c.cpuTime, "0/1: name the time column cputime (it is host time either way)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
  app.add_option("-a,--average", c.average, "time of a row: 0 rank 0's, 1 mean, 2 min, 3 max over ranks")
      ->capture_default_str()
      ->check(CLI::Range(0, 3));
  app.add_option("-R,--local_register", c.registration, "0/1/2 (accepted: SplitZip registers no buffers)")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
}

void applyCompat(const Compat& c, Options* o, const char* testName) {
  if (c.streamNull)
    throw SetupError("-y 1: each rank needs a stream of its own (ranks sharing a GPU would serialize on the "
                     "null stream); use -y 0");
  if (c.parallelInit) o->notes.push_back("-p 1: ranks always initialize concurrently");
  if (o->graphs > 0 && o->blocking)
    o->notes.push_back(format("-z %d with -G: a graph's iterations replay back to back", o->blocking));
  if (strcasecmp(c.op.c_str(), "sum") != 0) o->notes.push_back(format("-o %s: %s reduces nothing", c.op.c_str(), testName));
  if (c.root != 0) o->notes.push_back(format("-r %d: %s has no root", c.root, testName));
  if (c.registration) o->notes.push_back(format("-R %d: SplitZip registers no buffers", c.registration));
  if (c.timeoutS > 0 && o->timeoutMs == 0) o->timeoutMs = c.timeoutS * 1000;
  o->cpuTime = c.cpuTime != 0;
  o->average = Average(c.average);
}

}  // namespace

const char* typeName(szDataType_t type) {
  for (const TypeName& t : kTypes)
    if (t.type == type) return t.name;
  return "unknown";
}

bool parseOptions(int argc, char** argv, const char* testName, Options* o, int* exitCode) {
  CLI::App app{std::string("SplitZip ") + testName + "_perf: nccl-tests' " + testName +
               " with SplitZip's communicator (nccl-tests' flags and output)"};
  app.footer(
      "nccl-tests' -F (CSV), -S, -M, -I and -u are not implemented. -J writes SplitZip's JSON rows, not "
      "nccl-tests' JSON report. -d defaults to float as in nccl-tests, and to bfloat16 with --data.");
  std::string minB = "32M", maxB = "32M", stepB = "1M", type, sliceB = "0";
  Compat compat;
  app.add_option("-b,--minbytes", minB, "smallest message in bytes (K/M/G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", maxB, "largest message in bytes")->capture_default_str();
  app.add_option("-i,--stepbytes", stepB, "size increment when -f is 1")->capture_default_str();
  app.add_option("-f,--stepfactor", o->stepFactor, "size multiplication factor")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-n,--iters", o->iters, "timed iterations per size")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-w,--warmup_iters", o->warmup,
                 "untimed iterations per size, and at the largest then the smallest size before the sweep "
                 "(as nccl-tests)")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("-c,--check", o->check, "bitwise-checked iterations per size and half (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("-d,--datatype", type,
                 "data type (float, bfloat16, f8e5m2, half, int8, ..., or all; default float, bfloat16 with --data)");
  app.add_option("-t,--nthreads", o->threads, "ranks as threads of each process")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  app.add_option("-g,--ngpus", o->gpus, "GPUs per thread (each GPU is a rank, in a thread of its own)")
      ->capture_default_str()
      ->check(CLI::Range(1, INT_MAX));
  addCompatFlags(app, compat, o, testName);
  app.add_option("-J,--output_json", o->json, "write the result rows to this JSON file (SplitZip's rows)");
  app.add_option("--wire", o->wire, "tcp, nccl, ipc or ib (default: SZ_WIRE, else the library's choice from where the ranks are)")
      ->check(CLI::IsMember({"tcp", "nccl", "ipc", "ib"}));
  app.add_option("--compare", o->compare,
                 "on, off or auto: also time a communicator with this codec mode in every row, beside "
                 "the configured one and the codec-off one (the JSON rows' compare_time_us), each cycle (-N) "
                 "starting with the next of them: modes compared in one process and time window, for "
                 "wires whose rate moves between runs (loopback); the configured mode itself, or off, "
                 "is an A/A control (off: a second codec-off communicator beside the first)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--codec", o->codec, "on, off or auto (default: SZ_CODEC, else auto)")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--data", o->data,
                 "raw little-endian elements, .npy, or .safetensors (its tensors of the -d type: bfloat16, "
                 "float, half, f8e4m3 or f8e5m2)");
  app.add_option("--slice-bytes", sliceB, "host buffers: slice size (default: SZ_SLICE_BYTES, else 512K)");
  app.add_option("--depth", o->depth, "slices in flight (default: SZ_PIPELINE_DEPTH, else 4)")
      ->check(CLI::Range(1, 64));
  app.add_option("--crc", o->crc, "CRC32C on every slice, 0/1 (default: SZ_CRC, else 0)")
      ->check(CLI::Range(0, 1));
  app.add_option("--timeout-ms", o->timeoutMs, "peer timeout (default: -T, SZ_TIMEOUT_MS, else 60000)")
      ->check(CLI::Range(1, INT_MAX));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exitCode = app.exit(e);
    return false;
  }
  applyCompat(compat, o, testName);
  o->minBytes = parseSize("-b", minB);
  o->maxBytes = parseSize("-e", maxB);
  o->stepBytes = parseSize("-i", stepB);
  o->sliceBytes = parseSize("--slice-bytes", sliceB);
  o->types = parseTypes(!type.empty() ? type : o->data.empty() ? "float" : "bfloat16");
  if (o->minBytes > o->maxBytes)
    throw SetupError(format("-b %zu is larger than -e %zu", o->minBytes, o->maxBytes));
  // -m: a group receives into -m buffers of -e bytes (SplitZip refuses receives into one buffer
  // twice in a group), so their memory is bounded.
  constexpr size_t kMaxAggBytes = size_t(16) << 30;
  if (o->aggIters > 1 && o->maxBytes > kMaxAggBytes / size_t(o->aggIters))
    throw SetupError(format("-m %d with -e %zu: %d receive buffers of %zu bytes exceed 16 GiB; lower -m or -e",
                            o->aggIters, o->maxBytes, o->aggIters, o->maxBytes));
  if (o->stepFactor == 1 && o->stepBytes == 0) throw SetupError("-i 0 with -f 1 never reaches -e");
  if (!o->data.empty() && o->types.size() > 1)
    throw SetupError("--data holds one type: give -d bfloat16, float, half, f8e4m3 or f8e5m2");
  if (!o->data.empty() && !szTypeIsCompressible(o->types[0]))
    throw SetupError(format("--data reads bf16, float, half, f8e4m3 and f8e5m2 tensors, not -d %s: use generated data",
                            type.c_str()));
  if (!o->json.empty() && !std::ofstream(o->json, std::ios::app))  // fail now, not after the run
    throw SetupError(format("-J %s: cannot write there", o->json.c_str()));
  return true;
}

}  // namespace szperf
