// What the rank threads of one perf-test process share, and how the process finds its ranks:
// under mpirun each process holds t * g ranks; else SZ_COMM_ID + SZ_RANK + SZ_NRANKS make each
// separately started process one rank; else the t * g threads of this process are all ranks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "perf_common.h"
#include "perf_options.h"
#include "perf_report.h"

namespace szperf {

enum class Launch { kMpi, kCommId, kThreads };

struct Process {
  const Options* opts;
  const PerfTest* test;
  Launch launch = Launch::kThreads;
  int nprocs = 1, proc = 0, procLocal = 0;  // processes, this one, this one on its host
  int ranksPerProc = 1, nranks = 1;
  int devices = 0;  // GPUs used for buffers; 0: host buffers
  szConfig_t config = SZ_CONFIG_INITIALIZER;
  int compareCodec = -1;  // --compare: SZ_CODEC_* of a third communicator timed in every row
  std::string wire;                            // --wire or SZ_WIRE; empty: the library's choice
  std::vector<std::vector<uint8_t>> patterns;  // per -d type: every buffer's content, tiled
  size_t dataBytes = 0;                        // the first pattern's size, for the settings line
  // Unique ids, one per communicator, made by thread 0 and read by the other threads.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<szUniqueId> ids;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();  // global rank 0's results
  uint64_t wrong = 0;                                             // global rank 0's total
  double busbwSum = 0;
  int busbwCount = 0;
  Row largestFramed;  // global rank 0's largest row of (nearly) all frames (printWherePays); bytes 0: none
  std::atomic<int> exitCode{0};
};

// Finds how this process was started and which of the communicator's ranks it holds (calls
// MPI_Init under mpirun). Throws SetupError.
void findRanks(Process& p, int* argc, char*** argv);

// Resolves the configuration with the library's documented defaults, so that the settings
// lines show what every rank uses.
void configure(Process& p);

// SplitZip's settings lines, after nccl-tests' preamble and device list.
void printSettings(const Process& p);

// The unique id of this process's `index`-th communicator: global rank 0 makes it, MPI or
// SZ_COMM_ID carries it to the other processes, thread 0 hands it to the other threads.
// A failure ends the process.
szUniqueId uniqueId(Process& p, int thread, size_t index);

}  // namespace szperf
