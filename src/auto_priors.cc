// SZ_CODEC=auto's priors for a new communicator (auto_priors.h).
#include "src/auto_priors.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "base/checks.h"
#include "codec/dtype.h"
#include "codec/throughput.h"
#include "kernels/device_props.h"

namespace sz {

namespace {

// The auto mode's priors (auto_model.h): what the wire and the device say before any send. The
// shares of the GPU's peak DRAM bandwidth are H200 measurements (docs/PIPELINE.md, "The auto
// mode"): a device copy moves ~0.5 of it in tensor bytes, the slot kernels' codec path ~0.3.
constexpr double kCopyShareOfDram = 0.5, kSlotCodecShareOfDram = 0.3;
// A frames send's fixed cost beyond a raw one (its first slice encoded, its last decoded): 8-12 us
// measured on one H100 at 256 KiB - 2 MiB over an emulated 25 GB/s link; learned per peer after.
constexpr double kSlotCodecLatency = 10e-6;
// FP16's and E4M3's codec path (their typed slot kernels) against BF16's: sendrecv_perf on one
// H100 at 256 MiB over ipc (2026-12-07g) moved FP16 and E4M3 at 156 and BF16 at 236 GB/s.
constexpr double kNarrowSlotCodecShare = 0.65;

}  // namespace

AutoPrior hostAutoPrior(const CommConfig& cfg, int rank, bool overTcp) {
  AutoPrior host;
  host.wireBps = overTcp ? cfg.tcpLinkGBps * 1e9 : 0;  // the host channel's emulated tcp link
  // The CPU codec: one thread's measured rate of each type it codes (szTypeIsCompressible: the
  // host path's types) times the threads a group's slices are coded on.
  if (cfg.codec == SZ_CODEC_AUTO) {
    const double threads = std::max(1u, std::min(unsigned(cfg.depth), std::thread::hardware_concurrency()));
    for (int t = 0; t < szNumTypes; ++t) host.typeCodecBps[t] = cpuCodecThreadBps(szDataType_t(t)) * threads;
    host.codecBps = host.typeCodecBps[szBfloat16];
    host.codecTentative = true;  // one quick measurement, perhaps taken beside another rank's init
  }
  INFO(SZ_INIT, "rank %d: auto priors of the host path: codec %.2f GB/s for bf16 (fp32 %.2f, fp16 %.2f, fp8e5m2 %.2f, "
       "fp8e4m3 %.2f), wire %.1f GB/s (0: unknown, measured by the first sends)", rank, host.codecBps / 1e9,
       host.typeCodecBps[szFloat32] / 1e9, host.typeCodecBps[szFloat16] / 1e9, host.typeCodecBps[szFloat8e5m2] / 1e9,
       host.typeCodecBps[szFloat8e4m3] / 1e9, host.wireBps / 1e9);
  return host;
}

szResult_t deviceAutoPriors(const CommConfig& cfg, int rank, const std::vector<const szWire*>& peerWires,
                            const Placements& placed, std::vector<AutoPrior>* out) {
  double dram = 0;
  SZCHECK(currentDeviceDramBps(&dram));
  const int nranks = int(peerWires.size());
  out->assign(size_t(nranks), AutoPrior{});
  const RankPlacement& me = placed.ranks[size_t(rank)];
  for (int p = 0; p < nranks; ++p) {
    if (p == rank) continue;
    const szWire* w = peerWires[size_t(p)];
    const RankPlacement& them = placed.ranks[size_t(p)];
    AutoPrior& d = (*out)[size_t(p)];
    d.codecBps = kSlotCodecShareOfDram * dram;
    d.typeCodecBps[szFloat16] = d.typeCodecBps[szFloat8e4m3] = kNarrowSlotCodecShare * d.codecBps;
    d.codecLatency = kSlotCodecLatency;
    const double link = emulatedLinkGBps(cfg, w);
    const bool sameGpu = me.host == them.host && strncmp(me.gpu, them.gpu, sizeof(me.gpu)) == 0;
    // An emulated link; on one GPU, its own memory; else unknown (measured by the first sends).
    if (link > 0) d.wireBps = link * 1e9;
    else if (strcmp(w->name, "ipc") == 0 && sameGpu) d.wireBps = kCopyShareOfDram * dram;
    TRACE(SZ_INIT, "rank %d: auto prior for rank %d (wire %s): wire %.1f GB/s, codec %.1f GB/s", rank, p, w->name,
          d.wireBps / 1e9, d.codecBps / 1e9);
  }
  INFO(SZ_INIT, "rank %d: auto priors of the device path: codec %.1f GB/s, wires per peer (SZ_DEBUG_SUBSYS=INIT at "
       "TRACE)", rank, kSlotCodecShareOfDram * dram / 1e9);
  return szSuccess;
}

}  // namespace sz
