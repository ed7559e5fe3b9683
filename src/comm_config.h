// The communicator's configuration: szConfig_t's fields and the SZ_* parameters, every default
// resolved, before the ranks agree on it at init.
#pragma once

#include <cstddef>
#include <string>

#include "splitzip.h"
#include "transport/wire.h"

namespace sz {

// The communicator's configuration with every default resolved (szConfig_t + SZ_* params).
struct CommConfig {
  std::string wire;
  int codec;  // SZ_CODEC_*
  szCodebook_t codebook;  // the fixed codebook, or where auto starts (for its type)
  bool followCodebook;    // SZ_CODEBOOK_AUTO: recalibrate on drift (codebook_drift.h)
  size_t sliceBytes;  // host channel: bytes per slice (rounded up to a multiple of kSliceAlign)
  int depth;          // host channel: threads per group; slots per peer and direction: 2 x depth
  int timeoutMs;
  bool crc;
  bool authData;  // SZ_AUTH_DATA: an AES-256-GMAC tag on every host slice
  bool encrypt;   // SZ_ENCRYPT: every host slice AES-256-GCM encrypted and tagged
  bool blocking;  // false: szCommInitRank returns szInProgress and a thread finishes the init
  // SZ_RUNTIME_CONNECT (NCCL_RUNTIME_CONNECT's name): true, each pair's slots at its first
  // operations; false, every pair's at init (a device call then never waits for its peer).
  bool runtimeConnect;
  // Emulated links (GB/s, 0: none): SZ_TCP_LINK_GBPS paces the tcp data connections,
  // SZ_IPC_LINK_GBPS the ipc wire's slot kernels.
  double tcpLinkGBps, ipcLinkGBps;
};

// Resolves `config` (may be null) against the SZ_* environment. Errors: szInvalidArgument (a
// szConfig_t not made with SZ_CONFIG_INITIALIZER, an unknown mode, a value out of range).
szResult_t resolveConfig(const szConfig_t* config, CommConfig* out);

// The emulated link of wire `w` (szWireConfig.linkGBps), GB/s: SZ_TCP_LINK_GBPS paces tcp's
// connections, SZ_IPC_LINK_GBPS ipc's slot kernels; 0 elsewhere.
double emulatedLinkGBps(const CommConfig& cfg, const szWire* w);

}  // namespace sz
