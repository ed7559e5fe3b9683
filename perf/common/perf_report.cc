// nccl-tests' output format (see perf_report.h). Only rank 0 prints.
#include "perf_report.h"

#include <cstdio>

#include "tools/cli_common.h"

namespace szperf {

std::string fitted(double v, int width) {
  char buf[64];
  for (int decimals = 2; decimals >= 0; --decimals) {
    int n = snprintf(buf, sizeof(buf), "%*.*f", width, decimals, v);
    if (n <= width) return buf;
  }
  snprintf(buf, sizeof(buf), "%*.0e", width, v);
  return buf;
}

std::string deviceLine(int rank, int pid, const std::string& host, int device, const std::string& pciBusId,
                       const std::string& deviceName) {
  return format("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s", rank, 0, pid, host.c_str(), device,
                pciBusId.c_str(), deviceName.c_str());
}

void printPreamble(const Options& o, const char* testName) {
  printf("# Collective test starting: %s_perf (SplitZip %d.%d.%d)\n", testName, SZ_MAJOR, SZ_MINOR, SZ_PATCH);
  printf("# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
         "validation: %d graph: %d\n",
         o.threads, o.gpus, o.minBytes, o.maxBytes, o.stepFactor > 1 ? size_t(o.stepFactor) : o.stepBytes,
         o.stepFactor > 1 ? "factor" : "bytes", o.warmup, o.iters, o.aggIters, o.check, o.graphs);
  if (o.blocking == 1) printf("# Blocking Enabled: wait for completion and barrier after each collective \n");
  if (o.blocking == 2) printf("# Blocking Enabled: wait for completion after each collective (no barrier) \n");
  for (const std::string& note : o.notes) printf("# Ignored: %s\n", note.c_str());
  printf("#\n");
}

void printTableHeader(const Options& o) {
  const char* time = o.cpuTime ? "cputime" : "time";
  printf("#\n");
  printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
         "  SplitZip (out-of-place)\n", "", "", "", "", "");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %12s  %6s  %9s  %7s  %6s\n",
         "size", "count", "type", "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong",
         "wire_bytes", "ratio", "raw_time", "speedup", "frames");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %12s  %6s  %9s  %7s  %6s\n", "(B)",
         "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "(B)", "",
         "(us)", "", "(share)");
  fflush(stdout);
}

void printRow(const Row& r, const Options& o) {
  printf("%12zu  %12zu  %8s  %6s  %6d", r.bytes, r.count, typeName(r.type), "none", -1);
  const Half& h = r.outOfPlace;
  printf("  %7s  %6s  %6s", fitted(h.timeUs, 7).c_str(), fitted(h.algbw, 6).c_str(), fitted(h.busbw, 6).c_str());
  if (o.check) printf("  %6g", double(h.wrong));
  else printf("    N/A");
  printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");  // in place: refused by the library
  printf("  %12.0f  %6.3f  %9s  %7.3f  %6.2f\n", r.wireBytes, r.ratio, fitted(r.rawTimeUs, 9).c_str(), r.speedup,
         r.framesShare);
  fflush(stdout);
}

void printWherePays(const Row& r, int codec) {
  if (codec == SZ_CODEC_OFF) return;
  if (r.bytes == 0) {  // no row that sent (nearly) all its slices as frames
    printf("# %-20s : no row sent %.0f %% or more of its slices as frames (%s)\n", "SplitZip pays below",
           100 * kVerdictFramesShare,
           codec == SZ_CODEC_AUTO ? "SZ_CODEC=auto measured raw faster on this wire, or the data or its type does not compress; "
                                    "--codec on times the frames path"
                                  : "the data or its type does not compress: it travels raw");
    return;
  }
  if (r.ratio <= 1 || r.rawTimeUs <= 0 || r.outOfPlace.timeUs <= 0) return;  // nothing compressed
  const double wire = double(r.bytes) / r.rawTimeUs / 1e3;  // GB/s
  double extra = 0;
  const double pays = sztool::paysBelowBps(double(r.bytes), r.rawTimeUs * 1e-6, r.outOfPlace.timeUs * 1e-6, r.ratio,
                                           &extra) / 1e9;
  if (extra <= 0) {  // the frames took no longer than their wire bytes: no rate below which to stop
    printf("# %-20s : at any rate up to this wire's (App. B from the %zu-byte row: this wire moved %.3g GB/s raw, and "
           "SplitZip's path took no time beyond its wire time): it pays on this wire\n",
           "SplitZip pays below", r.bytes, wire);
    return;
  }
  printf("# %-20s : %.3g GB/s (App. B from the %zu-byte row: this wire moved %.3g GB/s raw, SplitZip's path "
         "spent %.1f us beyond its wire time)%s\n", "SplitZip pays below", pays, r.bytes, wire, extra * 1e6,
         pays < wire ? ": raw wins on this wire" : ": it pays on this wire");
}

void printFooter(uint64_t wrong, double avgBusBw, const char* testName) {
  printf("# %-20s : %llu %s\n", "Out of bounds values", (unsigned long long)wrong, wrong ? "FAILED" : "OK");
  printf("# %-20s : %g \n", "Avg bus bandwidth", avgBusBw);
  printf("#\n");
  printf("# Collective test concluded: %s_perf\n", testName);
  fflush(stdout);
}

}  // namespace szperf
