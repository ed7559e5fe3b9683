// How a perf-test process finds its ranks and configuration (see perf_process.h).
#include "perf_process.h"

#include <sched.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/param.h"

#if SZ_HAVE_MPI
#include <mpi.h>
#endif

namespace szperf {
namespace {

int envInt(const char* name, int deflt) {
  const char* s = getenv(name);
  if (s == nullptr || *s == '\0') return deflt;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < INT_MIN || v > INT_MAX) throw SetupError(format("%s=%s is not a number", name, s));
  return int(v);
}

// `source`: the flag or variable the name came from, for the message.
int codecMode(const std::string& source, const std::string& name) {
  if (name == "on") return SZ_CODEC_ON;
  if (name == "off") return SZ_CODEC_OFF;
  if (name == "auto") return SZ_CODEC_AUTO;
  throw SetupError(source + name + ": use on, off or auto");
}

}  // namespace

szUniqueId uniqueId(Process& p, int thread, size_t index) {
  std::unique_lock<std::mutex> lock(p.mu);
  if (thread == 0) {
    szUniqueId id;
    memset(&id, 0, sizeof(id));
    if (p.launch != Launch::kMpi || p.proc == 0) {
      szResult_t res = szGetUniqueId(&id);
      if (res != szSuccess) {  // as every failed call of a rank: the process ends (perf_common.h)
        fprintf(stderr, "rank %d: szGetUniqueId failed: %s: %s\n", p.proc * p.ranksPerProc,
                szGetErrorString(res), szGetLastError(nullptr));
        _exit(1);
      }
    }
#if SZ_HAVE_MPI
    if (p.launch == Launch::kMpi) MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    p.ids.push_back(id);
    p.cv.notify_all();
  }
  p.cv.wait(lock, [&] { return p.ids.size() > index; });
  return p.ids[index];
}

void printSettings(const Process& p) {
  const Options& o = *p.opts;
  const szConfig_t& c = p.config;
  const char* launch = p.launch == Launch::kMpi      ? "MPI"
                       : p.launch == Launch::kCommId ? "SZ_COMM_ID"
                                                     : "threads";
  printf("#\n# SplitZip: ranks %d (%d process%s x %d, %s), %s buffers\n", p.nranks, p.nprocs,
         p.nprocs > 1 ? "es" : "", p.ranksPerProc, launch, p.devices > 0 ? "device" : "host");
  cpu_set_t cpus;
  int ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
  printf("# SplitZip: cpus usable by this process: %d%s\n", ncpus,
         ncpus == 1 ? " (warning: its ranks, SplitZip's codec and proxy threads and NCCL's proxy threads share it; "
                      "mpirun binds ranks to a core by default: use --bind-to none)"
                    : "");
  printf("# SplitZip: wire %s, codec %s, slice bytes %zu, pipeline depth %d, crc %d, timeout %d ms\n",
         p.wire.empty() ? "default (chosen at init from where the ranks are; SZ_DEBUG=INFO names it)" : p.wire.c_str(),
         c.codec == SZ_CODEC_ON    ? "on"
         : c.codec == SZ_CODEC_OFF ? "off"
                                   : "auto",
         c.sliceBytes, c.pipelineDepth, c.crc, c.timeoutMs);
  printf("# SplitZip: data: %s, %zu bytes tiled to each message\n",
         !o.data.empty()                                         ? o.data.c_str()
         : o.types[0] == szBfloat16 || o.types[0] == szFloat32 ? "generated KV-like (normal, sigma 0.5)"
                                                                 : "generated random bytes",
         p.dataBytes);
  printf("# SplitZip: redop none, root -1: %s has neither. In place N/A: SplitZip refuses a receive into "
         "the buffer its group sends (decoding patches escapes after writing a slice). After nccl-tests' "
         "columns: wire_bytes and ratio per rank and iteration (szCommGetStats), raw_time (a second "
         "communicator with codec off), speedup and frames (the share of slices sent compressed).\n",
         p.test->name);
  fflush(stdout);
}

void configure(Process& p) {
  const Options& o = *p.opts;
  szConfig_t& c = p.config;
  const char* envWire = getenv("SZ_WIRE");
  p.wire = !o.wire.empty() ? o.wire : envWire && *envWire ? envWire : "";
  if (o.wire.empty() && !p.wire.empty() && p.wire != "tcp" && p.wire != "nccl" && p.wire != "ipc" && p.wire != "ib")
    throw SetupError("SZ_WIRE=" + p.wire + ": use tcp, nccl, ipc or ib");
  c.wire = p.wire.empty() ? nullptr : p.wire.c_str();  // unset: the library's choice
  const char* envCodec = getenv("SZ_CODEC");
  c.codec = !o.codec.empty()              ? codecMode("--codec ", o.codec)
            : envCodec && *envCodec       ? codecMode("SZ_CODEC=", envCodec)
                                          : SZ_CODEC_AUTO;
  // --compare may name the configured mode: two communicators of one mode, an A/A control that
  // shows how far two identical modes' times differ in one row.
  p.compareCodec = o.compare.empty() ? -1 : codecMode("--compare ", o.compare);
  // The library's own parameters (src/param.h): the same defaults and K/M/G suffixes.
  c.sliceBytes = o.sliceBytes ? o.sliceBytes : size_t(szParamSliceBytes());
  c.pipelineDepth = o.depth ? o.depth : int(szParamPipelineDepth());
  c.crc = o.crc >= 0 ? o.crc : szParamCrc() != 0;
  c.timeoutMs = o.timeoutMs ? o.timeoutMs : int(szParamTimeoutMs());
}

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
    // The perf tests' own launcher variables: the library reads only SZ_COMM_ID (README).
    p.launch = Launch::kCommId;
    p.nprocs = envInt("SZ_NRANKS", 0);
    p.proc = envInt("SZ_RANK", -1);
    p.procLocal = envInt("SZ_LOCAL_RANK", p.proc);
    if (p.ranksPerProc != 1) throw SetupError("with SZ_COMM_ID each process is one rank: drop -t and -g");
    const char* secret = getenv("SZ_COMM_SECRET");
    if (secret == nullptr || *secret == '\0')
      throw SetupError("SZ_COMM_ID without SZ_COMM_SECRET: give every rank the same secret (e.g. SZ_COMM_SECRET=$(openssl "
                       "rand -hex 16) shared by the launcher); without it any process that reaches the address can join "
                       "(README, \"Processes started without MPI\")");
    if (p.nprocs < 1 || p.proc < 0 || p.proc >= p.nprocs)
      throw SetupError(format("SZ_RANK=%d is not a rank of SZ_NRANKS=%d", p.proc, p.nprocs));
  }
  p.nranks = p.nprocs * p.ranksPerProc;
  // One rank sends to itself (sendrecv's next and previous rank are itself: a stream-ordered copy,
  // as nccl-tests' sendrecv on one GPU); a test with roles (oneway) needs a sender and a receiver.
  if (p.nranks < (p.test->role ? 2 : 1))
    throw SetupError(format("%s needs at least 2 ranks: use mpirun -np 2, -t 2 or SZ_COMM_ID", p.test->name));
}

}  // namespace szperf
