// The perf tests' command line: nccl-tests' flags (same letters, long names and defaults) and
// SplitZip's own, plus the data type names nccl-tests prints. See perf_common.h for the list.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "splitzip.h"

namespace szperf {

// A bad flag, data file or environment: reported once, exit status 1.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// nccl-tests' -a: which rank's time a row reports.
enum class Average { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

struct Options {
  size_t minBytes = 32 << 20, maxBytes = 32 << 20, stepBytes = 1 << 20;
  int stepFactor = 1;  // > 1: sizes grow by this factor, else by stepBytes
  int iters = 20, warmup = 5, check = 1, threads = 1, gpus = 1;
  int cycles = 1;         // -N: the whole sweep this many times
  int blocking = 0;       // -z: 1 waits and barriers after every iteration, 2 only waits
  int graphs = 0;         // -G: each row's timed iterations captured into a CUDA graph, replayed this often
  int aggIters = 1;       // -m: operations per iteration, in one group (receives into buffers of their own)
  bool cpuTime = false;   // -C: the time column is named cputime (it is host time either way)
  Average average = Average::kMean;
  std::vector<szDataType_t> types;  // -d (several with -d all)
  std::string wire, codec, compare, data, json;
  size_t sliceBytes = 0;
  int depth = 0, crc = -1, timeoutMs = 0;
  std::vector<std::string> notes;  // flags accepted that change nothing here, for the header
};

// nccl-tests' name of `type` ("bfloat16", "float", ...).
const char* typeName(szDataType_t type);

// Parses the flags; false when the process should exit with *exitCode (help, bad flag). A flag
// that cannot be honoured throws SetupError with the reason.
bool parseOptions(int argc, char** argv, const char* testName, Options* o, int* exitCode);

}  // namespace szperf
