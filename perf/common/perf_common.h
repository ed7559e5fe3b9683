// Shared code of the communicator perf tests (nccl-tests' common.h): flags, rank set-up over MPI,
// SZ_COMM_ID or threads, buffers, test data, timing, checking and the result table. A test file
// only says what one iteration does (perf/sendrecv_perf.cc, perf/oneway_perf.cc).
//
// Flags (nccl-tests', perf_options.cc): -b/-e min/max bytes (K/M/G suffixes), -f step factor or
// -i step bytes, -n iterations, -w warmup iterations, -c checked iterations, -d data type (or
// all; default float, bfloat16 with --data), -t threads per process, -g GPUs per thread (each
// rank is a thread; ranks per process = t * g), -N sweeps, -z blocking, -a which rank's time,
// -T timeout in seconds, -C cputime column name; -m, -p, -o, -r, -y, -G, -R accepted where they
// change nothing here (a "# Ignored" line says so), refused with the reason otherwise. -J FILE
// writes SplitZip's JSON rows. SplitZip's own: --wire, --codec, --data FILE, --slice-bytes,
// --depth, --crc, --timeout-ms.
//
// Output (perf_report.h): nccl-tests' format, so that its parsers read it, with SplitZip's
// columns after nccl-tests' out-of-place and in-place halves.
//
// Ranks (perf_process.h): under mpirun (built with MPI) each process holds t * g ranks and the
// unique id travels by MPI_Bcast; else SZ_COMM_ID + SZ_RANK + SZ_NRANKS make each separately
// started process one rank; else the t * g ranks of this one process are the whole communicator.
// Every rank holds the same data (the --data file or generated KV-like values, tiled to the
// message size), so every receive buffer must end up bitwise equal to the sender's buffer.
#pragma once

#include <cstddef>

#include "splitzip.h"

namespace szperf {

struct RankInfo {
  int rank, nranks;
  bool device;          // the buffers are device memory of this rank's GPU
  cudaStream_t stream;  // device buffers: the rank's stream (null with host buffers)
};

struct PerfTest {
  const char* name;
  // Issues one iteration on `comm`: `count` elements of `type` from `sendbuff` into `recvbuff`.
  // Host buffers: returns when complete; device buffers: once enqueued on rank.stream.
  szResult_t (*iteration)(const RankInfo& rank, szComm_t comm, const void* sendbuff, void* recvbuff,
                          size_t count, szDataType_t type);
  // busbw = algbw * busBwFactor(nranks), as in nccl-tests (1 for point-to-point tests).
  double (*busBwFactor)(int nranks);
  // What rank `rank` of `nranks` does in an iteration: kSends | kReceives. nullptr: every rank
  // both sends and receives. Only receiving ranks are checked; wire_bytes is per sending rank.
  int (*role)(int rank, int nranks) = nullptr;
};

enum Role { kSends = 1, kReceives = 2 };

// Runs `test` over the sizes the flags ask for and prints the table (rank 0). Returns the
// process exit code: 0, or 1 after a failed check or a bad flag. A failing SplitZip call
// prints its szResult_t name and szGetLastError(NULL) and exits the process with status 1.
int perfMain(int argc, char** argv, const PerfTest& test);

}  // namespace szperf
