// Communicator life cycle: unique id, init (bootstrap, configuration agreement, wires,
// progress thread), finalize / destroy / abort, and the query calls.
#include "src/comm.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <thread>
#include <cstring>
#include <strings.h>

#include "kernels/device_props.h"
#include "base/bootstrap.h"
#include "base/checks.h"
#include "base/param.h"
#include "src/auto_priors.h"
#include "src/proto/host_slots.h"
#include "src/proto/slot_path.h"
#include "src/proto/slot_proxy.h"
#include "src/wire_choice.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace sz {
namespace {

// Per-rank state (bootstrap addresses, wire connections) is allocated before the rendezvous
// can tell that the count is wrong; a point-to-point library has no use for more ranks.
constexpr int kMaxRanks = 1 << 16;

// The calling thread's CUDA device (-1 without one, or in a build without CUDA), and making it
// current on another thread: a non-blocking init runs on its own thread but on the caller's
// device. Clears the error a machine without a driver leaves.
int currentDevice() {
#if SZ_HAVE_CUDA
  int devices = 0, device = -1;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDevice(&device) != cudaSuccess) device = -1;
  cudaGetLastError();
  return device;
#else
  return -1;
#endif
}

void useDevice(int device) {
#if SZ_HAVE_CUDA
  if (device >= 0) cudaSetDevice(device);
#else
  (void)device;
#endif
}

}  // namespace

szResult_t commFail(szComm* comm, szResult_t res) {
  std::lock_guard<std::mutex> lock(comm->errorMu);
  int expected = szSuccess;
  if (comm->asyncError.compare_exchange_strong(expected, int(res))) szSetCommError(comm, szThreadLastError());
  return res;
}

// A device send's frames, for the codebook drift policy (codebook_drift.h), per segment group:
// the histogram a calibrating group took, then its compressed slices' escapes and its raw ones
// (all escapes). The histogram first: the frames were encoded before it came back, so once it
// switched the group's codebook they are not counted against the new one (as frames in flight
// across a switch on the host path).
static void followCodebook(szComm* comm, const SlotCompletion& c) {
  for (const SlotGroupResult& g : c.groups) {
    if (!g.counts.empty()) comm->codebooks->calibrated(c.peer, c.type, g.counts.data(), g.group);
    if (c.status == szSuccess) {  // a failed send's frames say nothing sure
      szFrameInfo_t f{};
      f.type = c.type;
      f.codebook = g.codebook;
      if (g.compressedElements > 0) {
        f.count = g.compressedElements;
        f.escapeCount = g.escapes;
        comm->codebooks->sent(c.peer, f, g.codebook, g.group);
      }
      if (g.elements > g.compressedElements) {
        f.count = g.elements - g.compressedElements;
        f.escapeCount = 0;
        f.raw = 1;
        comm->codebooks->sent(c.peer, f, g.codebook, g.group);
      }
    }
  }
}

void commAccount(szComm* comm, const SlotCompletion& c, bool device) {
  if (c.send && c.frames && !c.driftFed) followCodebook(comm, c);
  const bool autoMode = comm->cfg.codec == SZ_CODEC_AUTO;
  std::lock_guard<std::mutex> lock(comm->statsMu);
  if (!c.send) {
    comm->stats.recvRawBytes += c.bytes;
    comm->stats.recvWireBytes += c.wireBytes + c.slices * kSlotHeaderBytes;
    comm->stats.recvSlices += c.slices;
    comm->stats.decodeSeconds += c.codecSeconds;
    return;
  }
  comm->stats.rawBytes += c.bytes;
  comm->stats.wireBytes += c.wireBytes + c.slices * kSlotHeaderBytes;
  comm->stats.escapes += c.escapes;
  comm->stats.slices += c.slices;
  comm->stats.compressedSlices += c.compressedSlices;
  comm->compressedElements += c.compressedElements();
  comm->stats.encodeSeconds += c.codecSeconds;
  comm->stats.wireSeconds += c.seconds;
  if (autoMode && c.status == szSuccess && !c.replay && c.bytes >= uint64_t(szParamAutoMinBytes())) {
    const double judged = c.judgedSeconds();
    TRACE(SZ_P2P, "rank %d: auto: %s send to %d of %llu bytes as %s took %.1f us, judged %.1f us (%llu wire bytes)",
          comm->rank, device ? "device" : "host", c.peer, (unsigned long long)c.bytes, c.frames ? "frames" : "raw",
          c.seconds * 1e6, judged * 1e6, (unsigned long long)c.wireBytes);
    (device ? comm->autoDevice : comm->autoHost)
        .record(c.peer, c.type, c.bytes, c.frames, judged, c.wireBytes, c.exchangePairFrames, c.exchangeLeads);
  }
}

szResult_t commReapSlots(szComm* comm, bool query, bool wait) {
  if (!comm->slotPath) return szSuccess;
  std::unique_lock<std::mutex> slots(comm->slotMu, std::defer_lock);
  if (wait) slots.lock();
  else if (!slots.try_lock()) return szSuccess;
  szResult_t res = comm->slotPath->reap([comm](const SlotCompletion& c) { commAccount(comm, c, true); }, query);
  return res == szSuccess ? res : commFail(comm, res);
}

}  // namespace sz

using namespace sz;

szComm::~szComm() = default;

namespace {

// What every rank must agree on; exchanged at init.
struct ConfigDigest {
  char wire[16];
  int32_t codec, depth, crc, authData, encrypt, nranks, runtimeConnect;
  uint64_t sliceBytes;
  uint8_t codebook[SZ_CODEBOOK_SIZE];
  int32_t codebookType, followCodebook;
};

void destroyComm(szComm* comm) {
  if (comm->initThread.joinable()) comm->initThread.join();
  groupDropComm(comm);
  comm->slotPath.reset();  // after its launches in flight have ended
  comm->hostSlots.reset();  // before the slot areas its host slots may live in (ib)
  comm->proxy.reset();      // its passes drive slot-area wires' proxies (ib): stopped before they close
  for (size_t i = 0; i < comm->slotAreas.size(); ++i)
    if (comm->slotAreas[i]) comm->wires[i]->close(comm->slotAreas[i]);
  if (comm->bootstrap) szBootstrapClose(comm->bootstrap);
  szSetCommError(comm, nullptr);
  delete comm;
}

// The device slot path's shape (SZ_SLOT_*, else the wire's defaults: `defaultSlice` bytes per
// slice, at most `defaultBlocks` blocks per launch, and `slotsPerBlock` slots per block). A
// launch takes at most half the GPU's multiprocessors: its blocks wait for the peer (a receive is
// often posted before the data exists), and a multiprocessor holding one cannot run a kernel
// whose blocks need the whole of one (cuBLAS's Hopper GEMMs), so the compute that will produce
// the data, or the decode steps running beside a transfer, keep the other half. Proxied wires
// want fewer, larger slices (each costs the proxy a message) and leave multiprocessors to the
// wire's own kernels.
szResult_t slotPathConfig(const szComm* comm, uint64_t defaultSlice, uint32_t defaultBlocks, uint32_t slotsPerBlock,
                          SlotPathConfig* pc) {
  int sms = 0;
  SZCHECK(currentDeviceSms(&sms));
  const uint32_t half = std::max(1u, uint32_t(sms) / 2);
  pc->sliceBytes = szParamSlotSliceBytes() > 0 ? uint64_t(szParamSlotSliceBytes()) : defaultSlice;
  pc->blocks = szParamSlotBlocks() > 0 ? uint32_t(szParamSlotBlocks())
               : defaultBlocks > 0 && defaultBlocks < half ? defaultBlocks
                                                           : half;
  pc->nslots = szParamSlotCount() > 0 ? uint32_t(szParamSlotCount()) : slotsPerBlock * pc->blocks;
  pc->timeoutMs = comm->cfg.timeoutMs;
  if (pc->sliceBytes % kSliceAlign != 0 || pc->blocks > 65536 || pc->nslots > (1u << 20))
    return szSetError(szInvalidArgument, "SZ_SLOT_SLICE_BYTES=%llu (a multiple of %llu), SZ_SLOT_BLOCKS=%u, SZ_SLOT_COUNT=%u",
                      (unsigned long long)pc->sliceBytes, (unsigned long long)kSliceAlign, pc->blocks, pc->nslots);
  return szSuccess;
}

// The slot proxy (the host channel; a device channel per message wire), the slot areas of each
// slot-area wire, and the paths over them. Every rank connects every wire of the plan, in the
// plan's order (connecting is collective); each serves the pairs the plan gives it. Device
// channels serve pairs of two GPU ranks.
szResult_t connectSlots(szComm* comm, const Placements& placed, const WirePlan& plan, void* ncclComm) {
  constexpr int kHostChannel = 0;
  const int n = comm->nranks, me = comm->rank;
  const szWire* tcp = szFindWire("tcp");  // host buffers, and the proxy's control messages
  const uint64_t hostSlice = (comm->cfg.sliceBytes + kSliceAlign - 1) / kSliceAlign * kSliceAlign;
  const uint32_t hostSlots = 2 * uint32_t(comm->cfg.depth);
  // The host channel serves the pairs whose wire has no host slots of its own (ib has).
  std::vector<uint8_t> proxiedHost(size_t(n), 1);
  for (int p = 0; p < n; ++p)
    if (p != me && comm->wires[size_t(comm->peerWire[size_t(p)])]->hostChannel != nullptr) proxiedHost[size_t(p)] = 0;
  std::vector<SlotProxyChannel> channels{
      SlotProxyChannel{tcp, SlotMemory::kHost, hostSlice, hostSlots, comm->cfg.tcpLinkGBps, nullptr, proxiedHost}};
  channels[0].connectAtInit = !comm->cfg.runtimeConnect;
  channels[0].unused = true;  // alike on every rank: from the plan of every pair
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (comm->wires[size_t(plan.of(a, b, n))]->hostChannel == nullptr) channels[0].unused = false;
  const size_t nw = comm->wires.size();
  std::vector<std::vector<uint8_t>> serves(nw, std::vector<uint8_t>(size_t(n), 0));
  for (int p = 0; p < n; ++p)  // alike on both sides of a pair: from the placements both see
    if (p != me && placed.ranks[size_t(p)].hasGpu && placed.ranks[size_t(me)].hasGpu && comm->cudaDevice >= 0)
      serves[size_t(comm->peerWire[size_t(p)])][size_t(p)] = 1;
  // Host slots of a slot-area wire that has them (ib), for every pair on it.
  std::vector<std::vector<uint8_t>> hostServes(nw, std::vector<uint8_t>(size_t(n), 0));
  for (int p = 0; p < n; ++p)
    if (!proxiedHost[size_t(p)]) hostServes[size_t(comm->peerWire[size_t(p)])][size_t(p)] = 1;
  std::vector<SlotPathConfig> pcs(nw);
  std::vector<int> deviceChannel(nw, -1);  // message wires: the proxy's channel
  SlotPathConfig pc{0, 0, 0, comm->cfg.timeoutMs};
  for (size_t i = 0; i < nw; ++i) {
    const szWire* w = comm->wires[i];
    if (comm->cudaDevice >= 0) {
      SZCHECK(slotPathConfig(comm, w->defaultSliceBytes, w->defaultMaxBlocks, w->defaultSlotsPerBlock, &pcs[i]));
      pc.sliceBytes = std::max(pc.sliceBytes, pcs[i].sliceBytes);
      pc.blocks = std::max(pc.blocks, pcs[i].blocks);
      pc.nslots = std::max(pc.nslots, pcs[i].nslots);
    } else {
      pcs[i] = SlotPathConfig{w->defaultSliceBytes, 1, 1, comm->cfg.timeoutMs};  // serves no pair
    }
    // A message wire's device channel on every rank where some pair of GPU ranks takes it.
    bool gpuPairs = false;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        gpuPairs = gpuPairs || (a != b && plan.of(a, b, n) == int(i) && placed.ranks[size_t(a)].hasGpu &&
                                placed.ranks[size_t(b)].hasGpu);
    if (szWireMovesMessages(w) && gpuPairs) {
      deviceChannel[i] = int(channels.size());
      channels.push_back(SlotProxyChannel{w, w->deviceMemory ? SlotMemory::kDevice : SlotMemory::kPinned,
                                          pcs[i].sliceBytes, pcs[i].nslots, emulatedLinkGBps(comm->cfg, w), ncclComm, serves[i]});
      channels.back().connectAtInit = w->sendsWaitForReceives != 0 || !comm->cfg.runtimeConnect;
      // SZ_AUTH_DATA / SZ_ENCRYPT: the proxy seals the slots the kernels fill in pinned memory.
      if ((comm->cfg.authData || comm->cfg.encrypt) && !w->deviceMemory) {
        channels.back().macKey = szBootstrapSessionKey(comm->bootstrap);
        channels.back().encrypt = comm->cfg.encrypt;
      }
    }
  }
  SZCHECK(SlotProxy::create(comm->bootstrap, tcp, channels, &comm->proxy));
  comm->slotAreas.assign(nw, nullptr);
  for (size_t i = 0; i < nw; ++i) {
    const szWire* w = comm->wires[i];
    if (szWireMovesMessages(w)) continue;
    szWireConfig wc{comm->cfg.timeoutMs, 0, ncclComm, 0, emulatedLinkGBps(comm->cfg, w), pcs[i].sliceBytes, pcs[i].nslots,
                    serves[i].data(), hostServes[i].data(), hostSlice, hostSlots};
    SZCHECK(w->connect(comm->bootstrap, wc, &comm->slotAreas[i]));
    if (w->progress != nullptr) SZCHECK(comm->proxy->drive(w, comm->slotAreas[i]));  // one proxy loop
    if (!comm->cfg.runtimeConnect && w->hostChannel != nullptr) {  // SZ_RUNTIME_CONNECT=0: its host links now
      std::vector<int> hostPeers;
      for (int p = 0; p < n; ++p)
        if (hostServes[i][size_t(p)]) hostPeers.push_back(p);
      if (!hostPeers.empty()) SZCHECK(w->connectPeers(comm->slotAreas[i], hostPeers.data(), int(hostPeers.size()), 1));
    }
  }
  if (comm->cudaDevice >= 0) {
    // Each peer's channels from its pair's wire, at the first operations with it (slot-area
    // wires set the pair up then: connectPeers); none where the pair has no device path.
    std::vector<double> peerMiB(nw);  // slot memory per peer, each wire
    for (size_t i = 0; i < nw; ++i)   // a proxied wire keeps both ends of each ring here
      peerMiB[i] = double(pcs[i].nslots) * double(slotStride(pcs[i].sliceBytes)) / (1 << 20) * (deviceChannel[i] >= 0 ? 2 : 1);
    ChannelSource source = [comm, deviceChannel, pcs, peerMiB](const std::vector<int>& peers,
                                                               std::vector<SlotChannel>* channels) -> szResult_t {
      for (size_t i = 0; i < comm->wires.size(); ++i) {
        std::vector<int> mine;
        for (int p : peers)
          if (size_t(comm->peerWire[size_t(p)]) == i) mine.push_back(p);
        if (mine.empty() || deviceChannel[i] >= 0) continue;
        SZCHECK(comm->wires[i]->connectPeers(comm->slotAreas[i], mine.data(), int(mine.size()), 0));
      }
      channels->assign(2 * peers.size(), SlotChannel{});
      for (size_t k = 0; k < peers.size(); ++k) {
        const size_t i = size_t(comm->peerWire[size_t(peers[k])]);
        for (int send = 1; send >= 0; --send) {
          SlotChannel& ch = (*channels)[2 * k + size_t(1 - send)];
          SZCHECK(deviceChannel[i] >= 0 ? comm->proxy->channel(deviceChannel[i], peers[k], send, &ch)
                                        : comm->wires[i]->channel(comm->slotAreas[i], peers[k], send, &ch));
          ch.maxBlocks = pcs[i].blocks;  // the wire's own, where a launch mixes wires
        }
        INFO(SZ_INIT | SZ_P2P, "rank %d: connected rank %d on wire %s: %.1f MiB of slot memory", comm->rank, peers[k],
             comm->wires[i]->name, peerMiB[i]);
      }
      return szSuccess;
    };
    std::vector<uint64_t> sliceBytes(size_t(n), 0);
    for (int p = 0; p < n; ++p) {
      const size_t i = p == me ? 0 : size_t(comm->peerWire[size_t(p)]);
      if (p != me && serves[i][size_t(p)]) sliceBytes[size_t(p)] = pcs[i].sliceBytes;
    }
    SZCHECK(SlotPath::create(source, me, std::move(sliceBytes), pc, &comm->slotPath));
    if (!comm->cfg.runtimeConnect) {  // SZ_RUNTIME_CONNECT=0: every pair now, in one exchange
      std::vector<int> all;
      for (int p = 0; p < n; ++p)
        if (comm->slotPath->reaches(p)) all.push_back(p);
      SZCHECK(comm->slotPath->connect(all));
    }
    for (size_t i = 0; i < nw; ++i) {
      int peers = 0;
      for (uint8_t x : serves[i]) peers += x;
      // Each peer's receive ring (slot-area wires: in this rank's GPU memory, made at the first
      // operation with the peer; proxied wires keep both ends here, in pinned or device memory).
      INFO(SZ_INIT, "rank %d: device buffers to %d peer(s) on the slot protocol over wire %s: %llu-byte slices, %u "
           "slots per peer and direction, %u blocks, emulated link %g GB/s; slot memory %.1f MiB per peer, %s", me,
           peers, comm->wires[i]->name, (unsigned long long)pcs[i].sliceBytes, pcs[i].nslots, pcs[i].blocks,
           emulatedLinkGBps(comm->cfg, comm->wires[i]), peerMiB[i],
           comm->wires[i]->sendsWaitForReceives || !comm->cfg.runtimeConnect ? "for every peer at init"
                                                                              : "at the first operation with each");
    }
  }
  comm->codebooks.reset(new CodebookDrift(comm->cfg.followCodebook, &comm->cfg.codebook));
  HostSlotConfig hc{kHostChannel, hostSlice, comm->cfg.depth, comm->cfg.timeoutMs, comm->cfg.crc,
                    comm->cfg.authData || comm->cfg.encrypt ? szBootstrapSessionKey(comm->bootstrap) : nullptr,
                    comm->cfg.encrypt};
  // Each peer's host slots: its wire's own (ib's host link, connected at its first use; no CUDA),
  // else the slot proxy's host channel over tcp.
  ChannelSource hostSource = [comm](const std::vector<int>& peers, std::vector<SlotChannel>* channels) -> szResult_t {
    for (size_t i = 0; i < comm->wires.size(); ++i) {
      std::vector<int> mine;
      for (int p : peers)
        if (size_t(comm->peerWire[size_t(p)]) == i && comm->wires[i]->hostChannel != nullptr) mine.push_back(p);
      if (!mine.empty()) SZCHECK(comm->wires[i]->connectPeers(comm->slotAreas[i], mine.data(), int(mine.size()), 1));
    }
    channels->assign(2 * peers.size(), SlotChannel{});
    for (size_t k = 0; k < peers.size(); ++k) {
      const size_t i = size_t(comm->peerWire[size_t(peers[k])]);
      for (int send = 1; send >= 0; --send) {
        SlotChannel& ch = (*channels)[2 * k + size_t(1 - send)];
        SZCHECK(comm->wires[i]->hostChannel != nullptr ? comm->wires[i]->hostChannel(comm->slotAreas[i], peers[k], send, &ch)
                                                       : comm->proxy->channel(kHostChannel, peers[k], send, &ch));
      }
    }
    return szSuccess;
  };
  // A wire with host slots moves their credits and error words itself and drains them at close.
  SlotsFlushed hostFlushed = [comm](int peer, uint64_t steps) {
    return comm->wires[size_t(comm->peerWire[size_t(peer)])]->hostChannel != nullptr ||
           comm->proxy->flushed(kHostChannel, peer, steps);
  };
  SZCHECK(HostSlots::create(comm->proxy.get(), hostSource, hostFlushed, comm->rank, comm->nranks, hc,
                            comm->codebooks.get(), &comm->hostSlots));
  INFO(SZ_INIT, "rank %d: host buffers on the slot protocol (the ib wire's host slots with ib peers, else over tcp): "
       "%llu-byte slices, %u slots per peer and direction (%.1f MiB of host memory each way, at the first operation "
       "with each peer), %d threads per group", comm->rank,
       (unsigned long long)hostSlice, hostSlots, double(hostSlots * slotStride(hostSlice)) / (1 << 20), comm->cfg.depth);
  return szSuccess;
}

// The first collective of every init, in any version from 2 on: the slot protocol's version
// (kernels/slot_format.h), four bytes that no later change of the handshake moves, so that ranks
// of two versions fail here with one message naming both instead of in a collective they disagree on.
szResult_t checkProtocolVersions(szBootstrap* b, int rank, int nranks) {
  std::vector<uint32_t> versions(size_t(nranks), 0);
  versions[size_t(rank)] = kSlotProtocolVersion;
  SZCHECK(szBootstrapAllGather(b, versions.data(), sizeof(uint32_t)));
  for (int r = 0; r < nranks; ++r)
    if (versions[size_t(r)] != kSlotProtocolVersion)
      return szSetError(szInvalidUsage, "rank %d speaks slot protocol version %u and rank %d version %u: build every "
                        "rank from one SplitZip version", rank, kSlotProtocolVersion, r, versions[size_t(r)]);
  return szSuccess;
}

szResult_t initComm(szComm* comm, int nranks, const szUniqueId& id, int rank, void* ncclComm) {
  SZCHECK(szBootstrapInit(id, rank, nranks, comm->cfg.timeoutMs, &comm->bootstrap));
  SZCHECK(checkProtocolVersions(comm->bootstrap, rank, nranks));
  // Every rank takes part in the placement exchange, so that one with SZ_WIRE set and one
  // without meet in the configuration check below, not in a mismatched collective.
  Placements placed;
  SZCHECK(gatherPlacements(comm->bootstrap, &placed));
  const WirePlan plan = planWires(placed, comm->cfg.wire);
  if (comm->cfg.wire.empty())
    INFO(SZ_INIT, "rank %d: wires %s, chosen per pair of ranks from their placement (src/wire_choice.h; SZ_WIRE "
         "overrides)", rank, plan.name().c_str());
  comm->cfg.wire = plan.name();
  std::vector<ConfigDigest> all(static_cast<size_t>(nranks));
  ConfigDigest& mine = all[size_t(rank)];
  memset(&mine, 0, sizeof(mine));
  strncpy(mine.wire, comm->cfg.wire.c_str(), sizeof(mine.wire) - 1);
  mine.codec = comm->cfg.codec;
  mine.depth = comm->cfg.depth;
  mine.crc = comm->cfg.crc;
  mine.authData = comm->cfg.authData;
  mine.encrypt = comm->cfg.encrypt;
  mine.runtimeConnect = comm->cfg.runtimeConnect;
  mine.nranks = nranks;
  mine.sliceBytes = comm->cfg.sliceBytes;
  memcpy(mine.codebook, comm->cfg.codebook.exponents, SZ_CODEBOOK_SIZE);
  mine.codebookType = comm->cfg.codebook.type;
  mine.followCodebook = comm->cfg.followCodebook;
  SZCHECK(szBootstrapAllGather(comm->bootstrap, all.data(), sizeof(ConfigDigest)));
  for (int r = 0; r < nranks; ++r)
    if (memcmp(&all[size_t(r)], &mine, sizeof(mine)) != 0)
      return szSetError(szInvalidUsage, "rank %d and rank %d were initialized with different "
                        "configurations (wire, codec, slice size, depth, CRC, codebook, SZ_AUTH_DATA, SZ_ENCRYPT or "
                        "SZ_RUNTIME_CONNECT)", rank, r);
  // Device buffers travel through the slot protocol: straight into the peer's memory (slot-area
  // wires: ipc, ib), or through the proxy over the wire's messages (tcp, nccl). Host buffers take
  // the ib wire's host slots between ib pairs, else the host channel over tcp (NCCL itself takes
  // no host buffers).
  comm->cudaDevice = currentDevice();
  for (size_t i = 0; i < plan.wires.size(); ++i) {
    const szWire* w = szFindWire(plan.wires[i].c_str());
    if (w == nullptr) return szSetError(szInvalidArgument, "unknown or unavailable wire '%s'", plan.wires[i].c_str());
    bool mine = false;  // a wire of other pairs only: connected with nothing to serve here
    for (int p = 0; p < nranks; ++p) mine = mine || plan.of(rank, p, nranks) == int(i);
    if (w->needsGpu && mine && comm->cudaDevice < 0)
      return szSetError(szInvalidUsage, "wire '%s' needs a GPU", w->name);
    comm->wires.push_back(w);
  }
  comm->peerWire.resize(size_t(nranks));
  for (int p = 0; p < nranks; ++p) comm->peerWire[size_t(p)] = plan.of(rank, p, nranks);
  SZCHECK(connectSlots(comm, placed, plan, ncclComm));
  for (int p = 0; p < nranks; ++p)
    if (p != rank) TRACE(SZ_INIT, "rank %d: wire %s with rank %d", rank, commWire(comm, p)->name, p);
  bool hostOverTcp = true;  // no pair on a wire with host slots of its own (ib)
  for (const szWire* w : comm->wires) hostOverTcp = hostOverTcp && w->hostChannel == nullptr;
  comm->autoHost.setPriors({}, hostAutoPrior(comm->cfg, rank, hostOverTcp));
  if (comm->slotPath) {
    std::vector<const szWire*> peerWires(size_t(nranks), nullptr);
    for (int p = 0; p < nranks; ++p)
      if (p != rank) peerWires[size_t(p)] = commWire(comm, p);
    std::vector<AutoPrior> device;
    SZCHECK(deviceAutoPriors(comm->cfg, rank, peerWires, placed, &device));
    comm->autoDevice.setPriors(device);
  }
  INFO(SZ_INIT, "SplitZip %d.%d.%d rank %d/%d: wire %s, codec %s, codebook %s, slice %zu bytes, depth %d, "
       "timeout %d ms, crc %d", SZ_MAJOR, SZ_MINOR, SZ_PATCH, rank, nranks, comm->cfg.wire.c_str(),
       comm->cfg.codec == SZ_CODEC_ON ? "on" : comm->cfg.codec == SZ_CODEC_OFF ? "off" : "auto",
       comm->cfg.followCodebook ? "auto" : "fixed", comm->cfg.sliceBytes, comm->cfg.depth, comm->cfg.timeoutMs,
       (int)comm->cfg.crc);
  return szSuccess;
}

}  // namespace

extern "C" szResult_t szGetUniqueId(szUniqueId* uniqueId) {
  if (uniqueId == nullptr) return szSetError(szInvalidArgument, "szGetUniqueId: uniqueId is NULL");
  return szBootstrapGetUniqueId(uniqueId);
}

namespace {

// szCommInitRank* and szCommInitFromNccl: `ncclComm` (or null) is wrapped by the nccl wire.
szResult_t createComm(szComm_t* comm, int nranks, const szUniqueId& id, int rank, const szConfig_t* config,
                      void* ncclComm) {
  if (comm == nullptr) return szSetError(szInvalidArgument, "szCommInitRank: comm is NULL");
  *comm = nullptr;
  if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks)
    return szSetError(szInvalidArgument, "szCommInitRank: rank %d of %d ranks (1 to %d ranks)", rank, nranks,
                      kMaxRanks);
  szComm* c = new szComm();
  c->rank = rank;
  c->nranks = nranks;
  szResult_t res = resolveConfig(config, &c->cfg);
  if (res == szSuccess && !c->cfg.blocking) {  // NCCL's non-blocking init: poll szCommGetAsyncError
    c->asyncError = szInProgress;
    int device = currentDevice();
    c->initThread = std::thread([c, nranks, id, rank, ncclComm, device] {
      useDevice(device);
      szResult_t r = initComm(c, nranks, id, rank, ncclComm);
      std::lock_guard<std::mutex> lock(c->errorMu);
      if (r != szSuccess) szSetCommError(c, szThreadLastError());
      c->asyncError = r;
    });
    *comm = c;
    return szInProgress;
  }
  if (res == szSuccess) res = initComm(c, nranks, id, rank, ncclComm);
  if (res != szSuccess) {
    destroyComm(c);
    return res;
  }
  *comm = c;
  return szSuccess;
}

}  // namespace

extern "C" szResult_t szCommInitRankConfig(szComm_t* comm, int nranks, szUniqueId commId, int rank,
                                           szConfig_t* config) {
  return createComm(comm, nranks, commId, rank, config, nullptr);
}

extern "C" szResult_t szCommInitFromNccl(szComm_t* comm, void* ncclComm, szConfig_t* config) {
#if SZ_HAVE_CUDA
  if (comm == nullptr || ncclComm == nullptr)
    return szSetError(szInvalidArgument, "szCommInitFromNccl: NULL comm or ncclComm");
  szUniqueId id;
  int rank = 0, nranks = 0;
  SZCHECK(ncclShareUniqueId(ncclComm, &id, &rank, &nranks));
  // Each pair's wire as szCommInitRank chooses it (wire_choice.h): the nccl wire wraps `ncclComm`
  // for the pairs it serves; pairs of one node with peer access take ipc (NCCL's p2p through the
  // nccl wire's proxy reached 77 GB/s over NVLink where ipc moves hundreds).
  return createComm(comm, nranks, id, rank, config, ncclComm);
#else
  (void)comm;
  (void)ncclComm;
  (void)config;
  return szSetError(szUnhandledCudaError, "szCommInitFromNccl: SplitZip was built without CUDA and NCCL");
#endif
}

extern "C" szResult_t szCommInitRank(szComm_t* comm, int nranks, szUniqueId commId, int rank) {
  return szCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

extern "C" szResult_t szCommFinalize(szComm_t comm) {
  if (comm == nullptr) return szSetError(szInvalidArgument, "szCommFinalize: comm is NULL");
  if (comm->asyncError.load() == szInProgress) return szInProgress;
  // Device operations may still be in flight; host operations completed in their call.
  auto idle = [comm] {
    std::lock_guard<std::mutex> slots(comm->slotMu);
    return comm->slotPath->idle();
  };
  while (comm->slotPath && !idle() && comm->asyncError.load() == szSuccess) {
    commReapSlots(comm);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return szResult_t(comm->asyncError.load());
}

extern "C" szResult_t szCommDestroy(szComm_t comm) {
  if (comm == nullptr) return szSetError(szInvalidArgument, "szCommDestroy: comm is NULL");
  destroyComm(comm);
  return szSuccess;
}

extern "C" szResult_t szCommAbort(szComm_t comm) {
  if (comm == nullptr) return szSuccess;
  destroyComm(comm);
  return szSuccess;
}

extern "C" szResult_t szCommGetAsyncError(szComm_t comm, szResult_t* asyncError) {
  if (comm == nullptr || asyncError == nullptr)
    return szSetError(szInvalidArgument, "szCommGetAsyncError: NULL argument");
  if (comm->asyncError.load() == szSuccess) commReapSlots(comm, true, false);  // never waits for a group's thread
  *asyncError = szResult_t(comm->asyncError.load());
  return szSuccess;
}

extern "C" szResult_t szCommCount(const szComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return szSetError(szInvalidArgument, "szCommCount: NULL argument");
  *count = comm->nranks;
  return szSuccess;
}

extern "C" szResult_t szCommUserRank(const szComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return szSetError(szInvalidArgument, "szCommUserRank: NULL argument");
  *rank = comm->rank;
  return szSuccess;
}

// szStats_t's counters as SplitZip 0.1.0 had them (its struct had no size, magic and version).
constexpr size_t kStatsHeader = offsetof(szStats_t, rawBytes);
constexpr size_t kStatsBytes010 = offsetof(szStats_t, escapeRate) + sizeof(double) - kStatsHeader;

extern "C" szResult_t szCommGetStats(const szComm_t comm, szStats_t* stats) {
  if (comm == nullptr || stats == nullptr) return szSetError(szInvalidArgument, "szCommGetStats: NULL argument");
  const bool sized = stats->magic == SZ_STATS_MAGIC;  // else a caller built against 0.1.0
  if (sized && stats->size < kStatsHeader + kStatsBytes010)
    return szSetError(szInvalidArgument, "szCommGetStats: stats->size %zu is smaller than 0.1.0's counters (%zu bytes): "
                      "initialize it with SZ_STATS_INITIALIZER", stats->size, kStatsHeader + kStatsBytes010);
  if (comm->asyncError.load() == szSuccess) commReapSlots(comm);
  szStats_t now;
  uint64_t compressedElements = 0;
  {
    std::lock_guard<std::mutex> lock(comm->statsMu);
    now = comm->stats;
    compressedElements = comm->compressedElements;
  }
  now.recalibrations = comm->codebooks ? comm->codebooks->recalibrations() : 0;
  now.escapeRate = compressedElements ? double(now.escapes) / double(compressedElements) : 0.0;
  const uint8_t* from = reinterpret_cast<const uint8_t*>(&now) + kStatsHeader;
  if (!sized) {
    memcpy(static_cast<void*>(stats), from, kStatsBytes010);
    return szSuccess;
  }
  memcpy(reinterpret_cast<uint8_t*>(stats) + kStatsHeader, from, std::min(stats->size, sizeof(szStats_t)) - kStatsHeader);
  return szSuccess;
}
