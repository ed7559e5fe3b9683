// The ib slot wire (docs/PIPELINE.md, "The ib wire"): the slot protocol over RDMA NICs with raw
// ibverbs.
//
//   connect       collective, ending in an agreement of all ranks (so a rank that fails makes
//                 every rank fail at once with its reason, instead of leaving the others to time
//                 out): libibverbs (dlopen), the selected ports, the knobs. The slots are moved
//                 by transport/ib_proxy.cc's passes, which the communicator's slot proxy drives
//                 (szWire::progress)
//   connectPeers  pairwise, per link at the first operations that use it (the device link from
//                 the device path, on the communicator's GPU: two GPU ranks; the host link from
//                 the host slots, no CUDA: every pair on the wire): the rings and control words
//                 allocated and registered on every port, one RC queue pair and completion queue
//                 per port, receives posted; connection data (QPNs, LIDs, GIDs, PSNs, addresses,
//                 rkeys) to and from the peer over the bootstrap's authenticated point-to-point
//                 connections; queue pairs to RTS, striped over min(this rank's ports, the
//                 peer's) stripes. The receives are posted before the data goes out, so before
//                 the peer's queue pair can reach RTS.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

#include "base/bootstrap.h"
#include "base/checks.h"
#include "base/param.h"
#include "kernels/cuda_check.h"
#include "transport/ib_comm.h"
#include "transport/wire.h"

namespace sz {
namespace {

constexpr uint32_t kInfoMagic = 0x535A4942;  // "SZIB"
constexpr uint32_t kInfoVersion = 3;
// Per link kind (device, host): a rank's PeerInfo for one peer, and whether its side's queue
// pairs with the peer reached RTS (1) or not (0).
constexpr int kTagIbInfo[kIbLinkKinds] = {0x1b, 0x1f};
constexpr int kTagIbReady[kIbLinkKinds] = {0x1e, 0x20};
constexpr uint32_t kSignalEvery = 16;
const char* const kLinkNames[kIbLinkKinds] = {"device", "host"};

// What a rank tells one peer about one link.
struct PeerInfo {
  uint32_t magic, version;
  int32_t rank, peer;
  uint64_t sliceBytes;
  uint32_t nslots, ports;
  uint32_t valid, kind;  // valid 0: the sender could not set up its side (its own error says why)
  uint64_t ring, control;
  szIbQpInfo qp[kSzIbMaxPorts];
  uint32_t ringRkey[kSzIbMaxPorts], controlRkey[kSzIbMaxPorts];
};

// Every rank's outcome of a step; the first failure is every rank's.
szResult_t agree(szBootstrap* b, szResult_t mine, const char* step) {
  struct Verdict {
    int32_t result;
    char message[220];
  };
  const int nranks = szBootstrapNranks(b), rank = szBootstrapRank(b);
  std::vector<Verdict> all(static_cast<size_t>(nranks));
  memset(all.data(), 0, all.size() * sizeof(Verdict));
  all[size_t(rank)].result = mine;
  if (mine != szSuccess) snprintf(all[size_t(rank)].message, sizeof(Verdict::message), "%s", szThreadLastError());
  std::string kept = mine != szSuccess ? szThreadLastError() : "";
  const szResult_t res = szBootstrapAllGather(b, all.data(), sizeof(Verdict));
  if (mine != szSuccess) return szSetError(mine, "%s", kept.c_str());
  SZCHECK(res);
  for (int r = 0; r < nranks; ++r)
    if (all[size_t(r)].result != szSuccess)
      return szSetError(szResult_t(all[size_t(r)].result), "ib wire: rank %d failed to %s: %.*s", r, step,
                        int(sizeof(Verdict::message)), all[size_t(r)].message);
  return szSuccess;
}

szResult_t checkShape(const IbLinkShape& s, const char* what) {
  if (s.sliceBytes == 0 || s.sliceBytes % kSliceAlign != 0 || s.nslots == 0 || s.nslots > kIbMaxSlots)
    return szSetError(szInvalidArgument, "ib wire: %s slots of %llu bytes (a multiple of %llu) and %u slots (1..%u)",
                      what, (unsigned long long)s.sliceBytes, (unsigned long long)kSliceAlign, s.nslots, kIbMaxSlots);
  return szSuccess;
}

szResult_t checkConfig(const IbComm* c) {
  bool served[kIbLinkKinds] = {false, false};
  for (const auto& links : c->links)
    for (int k = 0; k < kIbLinkKinds; ++k) served[k] = served[k] || links[k].served;
  if (served[kIbDeviceLink]) SZCHECK(checkShape(c->shape[kIbDeviceLink], "device"));
  if (served[kIbHostLink]) SZCHECK(checkShape(c->shape[kIbHostLink], "host"));
  if (szParamIbTimeout() < 1 || szParamIbTimeout() > 31 || szParamIbRetryCnt() > 7)
    return szSetError(szInvalidArgument, "SZ_IB_TIMEOUT=%lld (1..31) and SZ_IB_RETRY_CNT=%lld (0..7)",
                      (long long)szParamIbTimeout(), (long long)szParamIbRetryCnt());
  return szSuccess;
}

// One link's side with `peer`: memory, queue pairs, receives; fills what the peer is told.
szResult_t setUpLink(IbComm* c, int peer, int kind, PeerInfo* info) {
  IbLink& p = c->links[size_t(peer)][kind];
  const IbLinkShape& shape = c->shape[kind];
  const IbControlLayout layout(shape.nslots);
  const uint64_t ringBytes = shape.stride * shape.nslots;
  const szIbMemory rings = kind == kIbHostLink ? szIbMemory::kHost : c->gpuDirect ? szIbMemory::kGpu : szIbMemory::kPinned;
  const szIbMemory words = kind == kIbHostLink ? szIbMemory::kHost : szIbMemory::kPinned;
  SZCHECK(szIbAlloc(c->verbs, c->ports, ringBytes, 0, rings, 0, &p.sendRing));
  SZCHECK(szIbAlloc(c->verbs, c->ports, ringBytes, 0, rings, IBV_ACCESS_REMOTE_WRITE, &p.recvRing));
  SZCHECK(szIbAlloc(c->verbs, c->ports, layout.bytes, layout.remoteBytes, words, IBV_ACCESS_REMOTE_WRITE, &p.control));
  uint64_t* credits[2] = {ibWord<uint64_t>(p.control, layout.sendCredits), ibWord<uint64_t>(p.control, layout.recvCredits)};
  for (uint32_t j = 0; j < shape.nslots; ++j) credits[0][j] = credits[1][j] = initialCredit(j);
  p.landing = IbLanding(shape.nslots);
  // Writes in flight per queue pair: every slot once, its credit, two error words, heartbeats.
  const uint32_t sendDepth = 2 * shape.nslots + 8, recvDepth = shape.nslots;
  info->ring = uint64_t(p.recvRing.addr);
  info->control = uint64_t(p.control.addr);
  p.qps.resize(c->ports.size());
  for (size_t i = 0; i < c->ports.size(); ++i) {
    SZCHECK(szIbCreateQp(c->verbs, c->ports[i], sendDepth, recvDepth, &p.qps[i]));
    p.sendq.emplace_back(sendDepth, kSignalEvery);
    for (uint32_t r = 0; r < recvDepth; ++r) {
      ibv_recv_wr wr{}, *bad = nullptr;
      if (ibv_post_recv(p.qps[i].qp, &wr, &bad) != 0)
        return szSetError(szSystemError, "ib wire: %s: ibv_post_recv failed", c->ports[i].name.c_str());
    }
    info->qp[i] = p.qps[i].local;
    info->ringRkey[i] = p.recvRing.mrs[i]->rkey;
    info->controlRkey[i] = p.control.mrs[i]->rkey;
  }
  return szSuccess;
}

// Sets up this rank's side of link `kind` with `peer` and fills what the peer is told.
szResult_t setUpPeerLink(IbComm* c, int peer, int kind, PeerInfo* info) {
  memset(info, 0, sizeof(*info));  // padding included: it goes over the network
  info->magic = kInfoMagic;
  info->version = kInfoVersion;
  info->rank = c->rank;
  info->peer = peer;
  info->kind = uint32_t(kind);
  info->sliceBytes = c->shape[kind].sliceBytes;
  info->nslots = c->shape[kind].nslots;
  info->ports = uint32_t(c->ports.size());
  info->valid = 1;
  return setUpLink(c, peer, kind, info);
}

// Checks what the peer sent about link `kind` and connects its stripes.
szResult_t connectLink(IbComm* c, int peer, int kind, const PeerInfo& in) {
  IbLink& p = c->links[size_t(peer)][kind];
  if (in.magic == kInfoMagic && in.version == kInfoVersion && in.valid == 0)
    return szSetError(szRemoteError, "ib wire: rank %d could not set up its side of the pair with rank %d", peer, c->rank);
  if (in.magic != kInfoMagic || in.version != kInfoVersion || in.rank != peer || in.peer != c->rank ||
      in.kind != uint32_t(kind) || in.ports == 0 || in.ports > uint32_t(kSzIbMaxPorts))
    return szSetError(szRemoteError, "ib wire: rank %d sent connection data that is not the ib wire's (version %u)",
                      peer, in.version);
  if (in.sliceBytes != c->shape[kind].sliceBytes || in.nslots != c->shape[kind].nslots)
    return szSetError(szInvalidUsage, "ib wire: rank %d uses %llu-byte slices and %u slots, rank %d %llu and %u "
                      "(%s)", peer, (unsigned long long)in.sliceBytes, in.nslots, c->rank,
                      (unsigned long long)c->shape[kind].sliceBytes, c->shape[kind].nslots,
                      kind == kIbHostLink ? "SZ_SLICE_BYTES, SZ_PIPELINE_DEPTH" : "SZ_SLOT_SLICE_BYTES, SZ_SLOT_COUNT");
  p.stripes = std::min(uint32_t(c->ports.size()), in.ports);
  p.remote.resize(p.stripes);
  for (uint32_t s = 0; s < p.stripes; ++s) {
    p.remote[s] = IbRemote{in.ring, in.control, in.ringRkey[s], in.controlRkey[s]};
    SZCHECK(szIbConnectQp(c->verbs, c->ports[s], in.qp[s], &p.qps[s]));
  }
  return szSuccess;
}

szResult_t ibClose(void* wireComm) {
  IbComm* c = static_cast<IbComm*>(wireComm);
  if (c == nullptr) return szSuccess;
  if (c->verbs) ibDrain(c);
  for (auto& links : c->links)
    for (IbLink& p : links) {
      for (szIbQp& q : p.qps) szIbDestroyQp(c->verbs, &q);
      szIbFree(c->verbs, &p.sendRing);
      szIbFree(c->verbs, &p.recvRing);
      szIbFree(c->verbs, &p.control);
    }
  if (c->verbs) szIbClosePorts(c->verbs, &c->ports);
  delete c;
  return szSuccess;
}

szResult_t setUpLocal(IbComm* c) {
  SZCHECK(checkConfig(c));
  SZCHECK(szIbVerbsGet(&c->verbs));
  SZCHECK(szIbOpenPorts(c->verbs, &c->ports));
  bool deviceLinks = false;
  for (const auto& links : c->links) deviceLinks = deviceLinks || links[kIbDeviceLink].served;
  if (deviceLinks) {  // a rank without a GPU serves host links only
    CUDACHECK(cudaGetDevice(&c->device));
    c->gpuDirect = szParamIbGdr() != 0 && szIbGpuDirectUsable(&c->needFlush);
  }
  return szSuccess;
}

IbLinkShape linkShape(uint64_t sliceBytes, uint32_t nslots) {
  return IbLinkShape{sliceBytes, slotStride(sliceBytes), nslots};
}

szResult_t ibConnect(szBootstrap* b, const szWireConfig& config, void** wireComm) {
  IbComm* c = new IbComm();
  c->bootstrap = b;
  c->rank = szBootstrapRank(b);
  c->nranks = szBootstrapNranks(b);
  c->shape[kIbDeviceLink] = linkShape(config.sliceBytes, config.nslots);
  c->shape[kIbHostLink] = linkShape(config.hostSliceBytes, config.hostSlots);
  c->links.resize(size_t(c->nranks));
  c->ready.reset(new std::atomic<bool>[size_t(c->nranks) * kIbLinkKinds]);
  for (size_t i = 0; i < size_t(c->nranks) * kIbLinkKinds; ++i) c->ready[i].store(false, std::memory_order_relaxed);
  for (int peer = 0; peer < c->nranks; ++peer) {
    c->links[size_t(peer)][kIbDeviceLink].served = peer != c->rank && szWireServes(config, peer);
    c->links[size_t(peer)][kIbHostLink].served = peer != c->rank && config.hostPeers != nullptr && config.hostPeers[peer] != 0;
  }
  szResult_t res = agree(b, setUpLocal(c), "set up its RDMA ports");
  if (res != szSuccess) {
    ibClose(c);
    return res;
  }
  INFO(SZ_INIT | SZ_NET, "ib wire: rank %d: %zu port(s) (first %s), host slots in host memory%s%s", c->rank,
       c->ports.size(), c->ports[0].name.c_str(), c->device < 0 ? "" : ", device slot rings in ",
       c->device < 0 ? "" : c->gpuDirect ? "GPU memory (GPUDirect RDMA)" : "pinned host memory");
  *wireComm = c;
  return szSuccess;
}

// Sets up and connects link `kind` with the `requested` peers that do not have it yet, pairwise
// (each of them does the same for this rank). A failure keeps what was set up (ibClose frees it:
// the peer may be connected to it already) and marks the link failed for good.
szResult_t ibConnectLinks(IbComm* c, int kind, const int* requested, int nrequested) {
  std::lock_guard<std::mutex> lock(c->connectMu[kind]);
  std::vector<int> peers;  // those not connected yet
  for (int i = 0; i < nrequested; ++i) {
    const int p = requested[i];
    if (p < 0 || p >= c->nranks || p == c->rank || !c->links[size_t(p)][kind].served)
      return szSetError(szInternalError, "ib wire: rank %d has no %s link with rank %d", c->rank, kLinkNames[kind], p);
    if (linkReady(c, p, kind)) continue;
    if (c->links[size_t(p)][kind].attempted)
      return szSetError(szRemoteError, "ib wire: the %s link of ranks %d and %d failed to connect before", kLinkNames[kind],
                        c->rank, p);
    peers.push_back(p);
  }
  const int npeers = int(peers.size());
  if (npeers == 0) return szSuccess;
  std::vector<PeerInfo> mine(static_cast<size_t>(npeers)), theirs(static_cast<size_t>(npeers));
  szResult_t res = szSuccess;
  for (int p : peers) c->links[size_t(p)][kind].attempted = true;  // each peer learns of a failure below
  for (int i = 0; i < npeers && res == szSuccess; ++i) res = setUpPeerLink(c, peers[size_t(i)], kind, &mine[size_t(i)]);
  std::string why;
  if (res != szSuccess) {  // the peers learn it from the data sent below (valid 0)
    why = szThreadLastError();
    for (PeerInfo& m : mine) m.valid = 0;
  }
  const szResult_t sent = szBootstrapExchange(c->bootstrap, peers.data(), npeers, kTagIbInfo[kind], mine.data(),
                                              theirs.data(), sizeof(PeerInfo));
  if (res != szSuccess) return szSetError(res, "%s", why.c_str());
  SZCHECK(sent);
  // A write to a queue pair still in INIT is dropped and retried until the retries run out: the
  // proxy takes a link up only once both sides report their queue pairs at RTS.
  std::vector<int32_t> rts(static_cast<size_t>(npeers), 1), peerRts(static_cast<size_t>(npeers), 0);
  for (int i = 0; i < npeers && res == szSuccess; ++i) {
    res = connectLink(c, peers[size_t(i)], kind, theirs[size_t(i)]);
    if (res != szSuccess) {
      why = szThreadLastError();
      for (int32_t& r : rts) r = 0;
    }
  }
  SZCHECK(szBootstrapExchange(c->bootstrap, peers.data(), npeers, kTagIbReady[kind], rts.data(), peerRts.data(),
                              sizeof(int32_t)));
  if (res != szSuccess) return szSetError(res, "%s", why.c_str());
  for (int i = 0; i < npeers; ++i)
    if (peerRts[size_t(i)] != 1)
      return szSetError(szRemoteError, "ib wire: rank %d could not connect its side of the %s link with rank %d",
                        peers[size_t(i)], kLinkNames[kind], c->rank);
  for (int p : peers)  // the proxy takes the link from here
    c->ready[size_t(p) * kIbLinkKinds + size_t(kind)].store(true, std::memory_order_release);
  return szSuccess;
}

szResult_t ibConnectPeers(void* wireComm, const int* peers, int npeers, int host) {
  return ibConnectLinks(static_cast<IbComm*>(wireComm), host ? kIbHostLink : kIbDeviceLink, peers, npeers);
}

// Link `kind`'s channel with a connected `peer`, in the addresses its users take (the kernels'
// for the device link, the host's for the host link).
szResult_t linkChannel(IbComm* c, int peer, int kind, int send, SlotChannel* ch) {
  if (peer < 0 || peer >= c->nranks || peer == c->rank || !linkReady(c, peer, kind))
    return szSetError(szInvalidArgument, "ib wire: no %s channel with rank %d (not connected)",
                      kind == kIbHostLink ? "host" : "device", peer);
  const IbLink& p = c->links[size_t(peer)][kind];
  const IbLinkShape& shape = c->shape[kind];
  const IbControlLayout l(shape.nslots);
  uint8_t* control = p.control.kernel;
  *ch = SlotChannel{};
  ch->ring = send ? p.sendRing.kernel : p.recvRing.kernel;
  ch->signals = reinterpret_cast<SlotSignal*>(control + (send ? l.sendSignals : l.recvSignals));
  ch->credits = reinterpret_cast<uint64_t*>(control + (send ? l.sendCredits : l.recvCredits));
  ch->localError = reinterpret_cast<int*>(control + (send ? l.sendError : l.recvError));
  ch->peerError = reinterpret_cast<int*>(control + (send ? l.sendPeerError : l.recvPeerError));
  ch->stride = shape.stride;
  ch->sliceBytes = shape.sliceBytes;
  ch->nslots = shape.nslots;
  ch->peerWritable = 1;  // RDMA writes under the ring's rkey may come at any time
  return szSuccess;
}

szResult_t ibChannel(void* wireComm, int peer, int send, SlotChannel* ch) {
  return linkChannel(static_cast<IbComm*>(wireComm), peer, kIbDeviceLink, send, ch);
}

szResult_t ibHostChannel(void* wireComm, int peer, int send, SlotChannel* ch) {
  return linkChannel(static_cast<IbComm*>(wireComm), peer, kIbHostLink, send, ch);
}

bool ibProgressWire(void* wireComm, bool hostOnly) { return ibProgress(static_cast<IbComm*>(wireComm), false, hostOnly); }

}  // namespace
}  // namespace sz

// 512 KiB slices (one work request each) and at most 64 blocks: 128 slots of a ring hold 64 MiB
// in flight per direction, and 64 blocks encode faster than any NIC moves the frames. Host
// buffers take the host link's slots (hostChannel): a rank without a GPU runs on ib too. The
// slot proxy drives its passes (progress). close forwards what is left (bounded), after the slot
// proxy stopped: it serves as abort too.
// name, needsGpu, deviceMemory, nodeLocal, sendsWaitForReceives, defaultSliceBytes, defaultMaxBlocks, defaultSlotsPerBlock, connect, connectPeers, channel, hostChannel, progress, isend, irecv, test, failPeer, close, abort
const szWire szWireIb = {"ib", 0, 0, 0, 0, 512 << 10, 64, 2, sz::ibConnect, sz::ibConnectPeers, sz::ibChannel, sz::ibHostChannel, sz::ibProgressWire, nullptr, nullptr, nullptr, nullptr, sz::ibClose, sz::ibClose};
