// The CPU codec's throughput on this machine, measured: SZ_CODEC=auto's codec prior for host
// buffers (src/proto/auto_model.h), which otherwise knows no codec rate and compresses first.
#pragma once

#include "splitzip.h"

namespace sz {

// Uncompressed bytes per second one thread encodes and decodes (the slower of the two) elements of
// a compressible `type` with its default codebook: normal values shaped like KV (exponents
// spread as the paper's §2 histograms; E4M3 scaled per tensor so its largest value nears 448),
// 1 MiB, the calling thread alone (under SZ_CPU_PARALLEL_BYTES' default): the fastest of three
// timed rounds after one that touches the pages. Each type has its own rate (per byte, 1-byte
// E4M3 and E5M2 code half the bytes BF16 does in the same element time, and 3-bit codes take
// another kernel), so each is measured once per process at its first call (about 3 ms on a
// 2-core CPU; calls from other threads meanwhile wait for it), then cached. 0 when the
// measurement failed or the type is not compressible.
double cpuCodecThreadBps(szDataType_t type);

}  // namespace sz
