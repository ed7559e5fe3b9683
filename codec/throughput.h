// The CPU codec's throughput on this machine, measured: SZ_CODEC=auto's codec prior for host
// buffers (src/proto/auto_model.h), which otherwise knows no codec rate and compresses first.
#pragma once

namespace sz {

// Uncompressed bytes per second one thread encodes and decodes (the slower of the two) with the
// default codebook: BF16 values shaped like KV (normal, exponents spread as the paper's §2
// histograms), 1 MiB, the calling thread alone (under SZ_CPU_PARALLEL_BYTES' default): the
// fastest of three timed rounds after one that touches the pages. Measured once per process at
// the first call (about 3 ms on a 2-core CPU; calls from other threads meanwhile wait for it),
// then cached. 0 when the measurement failed.
double cpuCodecThreadBps();

}  // namespace sz
