// SZ_CODEC=auto's priors for a new communicator (src/proto/auto_model.h): per peer, what its wire
// and the device say before any send, and the CPU codec's measured rate for host buffers.
#pragma once

#include <vector>

#include "src/comm_config.h"
#include "src/proto/auto_model.h"
#include "src/wire_choice.h"

namespace sz {

// The host path's prior: the emulated tcp link's rate if any and every peer's host buffers travel
// the slot proxy's host channel over tcp (`overTcp`; else unknown: measured, as on ib's host
// links), and under SZ_CODEC=auto the CPU codec's rate measured once per process (tentative).
AutoPrior hostAutoPrior(const CommConfig& cfg, int rank, bool overTcp);

// The device path's prior for each rank `p` != `rank` over its pair's wire `peerWires[p]`: the
// slot kernels' codec from the GPU's DRAM bandwidth, the wire's rate where known (an emulated
// link; ipc on one GPU: its memory), else 0 (measured by the first sends). `out` gets nranks
// entries. Errors: the device's query (szUnhandledCudaError).
szResult_t deviceAutoPriors(const CommConfig& cfg, int rank, const std::vector<const szWire*>& peerWires,
                            const Placements& placed, std::vector<AutoPrior>* out);

}  // namespace sz
