// The perf tests' output in nccl-tests' format, so that its parsers read it: the preamble
// ("# nThread ..." and "# Using devices" with one "#  Rank ..." line per rank), the table
// (size count type redop root, then time algbw busbw #wrong out-of-place and in-place, in
// nccl-tests' widths), SplitZip's columns after those, and the closing lines
// ("# Out of bounds values : N OK", "# Avg bus bandwidth    : X"). The in-place half is N/A:
// SplitZip refuses a receive into the buffer a send of the group reads (docs/PIPELINE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "perf_options.h"

namespace szperf {

struct Half {  // one of nccl-tests' halves: out-of-place or in-place
  double timeUs = 0, algbw = 0, busbw = 0;
  uint64_t wrong = 0;
};

struct Row {
  size_t bytes = 0, count = 0;
  szDataType_t type = szFloat32;
  Half outOfPlace;
  double wireBytes = 0, ratio = 0, rawTimeUs = 0, speedup = 0;  // SplitZip's, out-of-place
  double framesShare = 0;  // the timed sends' slices that went as frames (SZ_CODEC=auto's choice)
};

// `v` in `width` characters with as many decimals as fit (nccl-tests' columns).
std::string fitted(double v, int width);

// nccl-tests' "#  Rank ..." line of one rank; device -1 and "host memory" for host buffers.
std::string deviceLine(int rank, int pid, const std::string& host, int device, const std::string& pciBusId,
                       const std::string& deviceName);

void printPreamble(const Options& o, const char* testName);
void printTableHeader(const Options& o);
void printRow(const Row& r, const Options& o);
// The share of a row's slices sent as frames for the row to stand for the frames path in the
// verdict below (auto's rows mix modes: a few frames among raw sends say nothing of App. B).
constexpr double kVerdictFramesShare = 0.9;
// From the largest row with at least kVerdictFramesShare frames (`r`; bytes 0: none): below which
// wire bandwidth SplitZip pays (paper App. B, with the path's cost beyond its wire time as
// measured), or why no row could say; nothing with the codec (SZ_CODEC_*) off.
void printWherePays(const Row& r, int codec);
void printFooter(uint64_t wrong, double avgBusBw, const char* testName);

}  // namespace szperf
