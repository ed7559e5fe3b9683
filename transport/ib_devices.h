// The RDMA ports the ib wire stripes over: every active port that SZ_IB_HCA selects (ib_hca.h),
// InfiniBand or RoCE, each opened with its own protection domain, with the GID it addresses peers
// by (ib_gid.h, SZ_IB_GID_INDEX) and the limits its queues are sized by.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "transport/ib_loader.h"

constexpr int kSzIbMaxPorts = 8;  // stripes per peer

struct szIbPort {
  std::string name;  // "mlx5_0:1"
  int port = 0;
  ibv_context* context = nullptr;
  ibv_pd* pd = nullptr;
  bool roce = false;  // Ethernet link layer (RoCE), else InfiniBand
  uint16_t lid = 0;
  enum ibv_mtu mtu = IBV_MTU_1024;  // the port's active MTU
  int gidIndex = 0;
  ibv_gid gid{};
  uint32_t maxQpWr = 0, maxCqe = 0;
};

// Opens every selected active port, at most kSzIbMaxPorts, reading SZ_IB_HCA and
// SZ_IB_GID_INDEX. Errors: szSystemError (libibverbs missing, a device that cannot be opened),
// szInvalidArgument (SZ_IB_HCA malformed), szInvalidUsage (no RDMA device, or none selected and
// active: the one error SZ_WIRE=ib gives on a machine without RDMA; it names what was found).
szResult_t szIbOpenPorts(const szIbVerbs* verbs, std::vector<szIbPort>* ports);
void szIbClosePorts(const szIbVerbs* verbs, std::vector<szIbPort>* ports);
