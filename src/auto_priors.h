// SZ_CODEC=auto's priors for a new communicator (src/proto/auto_model.h): per peer, what its wire
// and the device say before any send, and the CPU codec's measured rate for host buffers.
#pragma once

#include "src/comm.h"
#include "src/wire_choice.h"

namespace sz {

// The emulated link of wire `w` (szWireConfig.linkGBps): SZ_TCP_LINK_GBPS paces tcp's
// connections, SZ_IPC_LINK_GBPS ipc's slot kernels; 0 elsewhere.
double emulatedLinkGBps(const szComm* comm, const szWire* w);

// Sets comm->autoHost's prior and, with a slot path, comm->autoDevice's per peer (INFO lines).
// Errors: the device's query (szUnhandledCudaError).
szResult_t setAutoPriors(szComm* comm, const Placements& placed);

}  // namespace sz
