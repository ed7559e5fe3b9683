// Reliable-connected queue pairs of the ib wire: one per (peer, stripe), created on a port with a
// completion queue of its own, then taken through INIT -> RTR -> RTS with the peer's connection
// data. That data travels over the bootstrap's authenticated point-to-point connections (each
// pair's directly between its two ranks, base/bootstrap.h), so a queue pair is only ever connected
// to the queue pair its peer named; PSNs are random (base/auth.h).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "transport/ib_devices.h"

// What a rank tells its peer about one queue pair.
struct szIbQpInfo {
  uint32_t qpn, psn;
  uint8_t gid[16];
  uint16_t lid;
  uint8_t roce, mtu;  // link layer; enum ibv_mtu of the port
};

struct szIbQp {
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  uint32_t sendDepth = 0, recvDepth = 0, maxInline = 0;
  szIbQpInfo local{};
};

// Creates the completion queue and the queue pair (in INIT, remote writes allowed) with room
// for `sendDepth` and `recvDepth` work requests, capped by the device's limits.
// Errors: szSystemError (a verb failed), szInvalidUsage (the depths exceed the device's limits).
szResult_t szIbCreateQp(const szIbVerbs* verbs, const szIbPort& port, uint32_t sendDepth, uint32_t recvDepth,
                        szIbQp* qp);
// INIT -> RTR -> RTS towards `remote`. Errors: szInvalidUsage (InfiniBand facing RoCE),
// szSystemError (a transition failed).
szResult_t szIbConnectQp(const szIbVerbs* verbs, const szIbPort& port, const szIbQpInfo& remote, szIbQp* qp);
void szIbDestroyQp(const szIbVerbs* verbs, szIbQp* qp);
