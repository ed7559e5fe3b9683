// The ipc slot wire: ranks of one node map each other's slot memory with CUDA IPC (or share
// pointers directly when they are threads of one process), so a sender's kernel writes frames
// straight into the receiver's slots over NVLink, PCIe or, on one GPU, its own memory. Each rank
// makes one device allocation per peer at the first operations with it (connectPeers), holding
// its receive ring from that peer, its credit words for sends to that peer, both error words and
// the emulated link's clock.
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/zero_fill.h"
#include "base/auth.h"
#include "base/bootstrap.h"
#include "base/socket.h"
#include "transport/wire.h"

using namespace sz;

namespace {

constexpr int kTagIpcArea = 0x1c;    // a rank's AreaInfo for one peer, over the bootstrap
constexpr int kTagIpcMapped = 0x1d;  // whether it mapped the peer's area (1) or failed (0)

// Where each part of a peer area starts.
struct AreaLayout {
  uint64_t ring, recvError, credits, sendError, linkClock, bytes;
  AreaLayout(uint64_t stride, uint32_t nslots) {
    ring = 0;
    recvError = stride * nslots;
    credits = recvError + 256;
    sendError = credits + (uint64_t(nslots) * 8 + 255) / 256 * 256;
    linkClock = sendError + 256;
    bytes = linkClock + 256;
  }
};

// What a rank tells the others about the area it made for one of them.
struct AreaInfo {
  int32_t pid, device;
  // This process, beside its pid: ranks in two containers of one host name (shared UTS, separate
  // pid namespaces) may have the same pid, and only ranks of one address space share pointers.
  uint64_t process;
  uint64_t host;  // hash of the host name: ipc connects ranks of one node only
  uint64_t ptr;
  cudaIpcMemHandle_t handle;
  uint64_t sliceBytes;
  uint32_t nslots;
  uint32_t valid;
};

struct Peer {
  uint8_t* mine = nullptr;    // this rank's area for the peer
  uint8_t* theirs = nullptr;  // the peer's area for this rank, mapped here
  bool opened = false;        // theirs came from cudaIpcOpenMemHandle
  bool sameDevice = false;    // a thread of this process on this rank's GPU: device-scope fences
};

struct IpcComm {
  szBootstrap* bootstrap = nullptr;
  int rank = 0, nranks = 0;
  szWireConfig config{};
  std::vector<uint8_t> serves;  // per rank: the wire serves the pair (szWireConfig::peers)
  uint64_t stride = 0;
  std::vector<Peer> peers;
};

szResult_t ipcClose(void* wireComm) {
  IpcComm* c = static_cast<IpcComm*>(wireComm);
  if (c == nullptr) return szSuccess;
  for (Peer& p : c->peers) {
    if (p.opened) cudaIpcCloseMemHandle(p.theirs);
    if (p.mine) cudaFree(p.mine);
  }
  cudaGetLastError();
  delete c;
  return szSuccess;
}

// A random number drawn once per process (libcrypto's generator).
uint64_t processNonce() {
  static const uint64_t nonce = [] {
    uint64_t v = 0;
    if (szAuthRandom(&v, sizeof(v)) != szSuccess || v == 0) v = 0x9e3779b97f4a7c15ull ^ uint64_t(getpid());
    return v;
  }();
  return nonce;
}

szResult_t makeArea(IpcComm* c, Peer* p, AreaInfo* info) {
  AreaLayout a(c->stride, c->config.nslots);
  CUDACHECK(cudaMalloc(&p->mine, a.bytes));
  SZCHECK(sz::zeroDeviceMemory(p->mine, a.bytes));  // no slot ready, no error, the link idle
  std::vector<uint64_t> credits(c->config.nslots);
  for (uint32_t j = 0; j < c->config.nslots; ++j) credits[j] = initialCredit(j);
  SZCHECK(sz::copyToDeviceMemory(p->mine + a.credits, credits.data(), credits.size() * 8));
  CUDACHECK(cudaIpcGetMemHandle(&info->handle, p->mine));
  CUDACHECK(cudaGetDevice(&info->device));
  info->pid = int32_t(getpid());
  info->process = processNonce();
  info->host = szHostHash();
  info->ptr = reinterpret_cast<uint64_t>(p->mine);
  info->sliceBytes = c->config.sliceBytes;
  info->nslots = c->config.nslots;
  info->valid = 1;
  return szSuccess;
}

szResult_t mapArea(IpcComm* c, int peer, const AreaInfo& info, Peer* p) {
  const AreaInfo self{int32_t(getpid()), 0, processNonce(), szHostHash(), 0, {}, 0, 0, 0};
  if (!info.valid)
    return szSetError(szSystemError, "ipc wire: rank %d could not set up its slot memory for rank %d", peer, c->rank);
  if (info.host != self.host)
    return szSetError(szInvalidUsage, "ipc wire: rank %d is on another node; the ipc wire connects the ranks of one node "
                      "(use the nccl or tcp wire)", peer);
  if (info.sliceBytes != c->config.sliceBytes || info.nslots != c->config.nslots)
    return szSetError(szInvalidUsage, "ipc wire: rank %d uses %llu-byte slices and %u slots, rank %d %llu and %u "
                      "(SZ_SLOT_SLICE_BYTES, SZ_SLOT_COUNT)", peer, (unsigned long long)info.sliceBytes, info.nslots,
                      c->rank, (unsigned long long)c->config.sliceBytes, c->config.nslots);
  if (info.pid == self.pid && info.process == self.process) {  // threads of one process: the pointer itself
    int device;
    CUDACHECK(cudaGetDevice(&device));
    if (info.device != device) {
      cudaError_t e = cudaDeviceEnablePeerAccess(info.device, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CUDACHECK(e);
      cudaGetLastError();
    }
    p->theirs = reinterpret_cast<uint8_t*>(info.ptr);
    p->sameDevice = info.device == device;
    return szSuccess;
  }
  void* ptr = nullptr;
  CUDACHECK(cudaIpcOpenMemHandle(&ptr, info.handle, cudaIpcMemLazyEnablePeerAccess));
  p->theirs = static_cast<uint8_t*>(ptr);
  p->opened = true;
  return szSuccess;
}

// Opens nothing: the areas are made per peer at the first operations with it (ipcConnectPeers).
szResult_t ipcConnect(szBootstrap* b, const szWireConfig& config, void** wireComm) {
  const int nranks = szBootstrapNranks(b);
  if (config.sliceBytes == 0 || config.sliceBytes % kSliceAlign != 0 || config.nslots == 0)
    return szSetError(szInvalidArgument, "ipc wire: slice bytes %llu (a multiple of %llu) and %u slots",
                      (unsigned long long)config.sliceBytes, (unsigned long long)kSliceAlign, config.nslots);
  IpcComm* c = new IpcComm();
  c->bootstrap = b;
  c->rank = szBootstrapRank(b);
  c->nranks = nranks;
  c->config = config;
  c->config.peers = nullptr;
  c->serves.resize(size_t(nranks));
  for (int p = 0; p < nranks; ++p) c->serves[size_t(p)] = p != c->rank && szWireServes(config, p);
  c->stride = slotStride(config.sliceBytes);
  c->peers.resize(size_t(nranks));
  *wireComm = c;
  return szSuccess;
}

// Each pair exchanges the areas it made for each other over the bootstrap. An area is zeroed and
// its credits written before its address goes out, and a rank writes into its peer's area only
// once it has mapped it, so no barrier is needed. A failure keeps what was made (ipcClose frees
// it): the peer may have mapped it already.
szResult_t ipcConnectPeers(void* wireComm, const int* peers, int npeers, int host) {
  IpcComm* c = static_cast<IpcComm*>(wireComm);
  if (host) return szSetError(szInternalError, "ipc wire: no host slots (host buffers take tcp)");
  for (int i = 0; i < npeers; ++i) {
    const int p = peers[i];
    if (p < 0 || p >= c->nranks || !c->serves[size_t(p)] || c->peers[size_t(p)].mine != nullptr)
      return szSetError(szInternalError, "ipc wire: rank %d does not serve rank %d, or has connected it", c->rank, p);
  }
  std::vector<AreaInfo> mine(static_cast<size_t>(npeers)), theirs(static_cast<size_t>(npeers));
  szResult_t res = szSuccess;
  for (int i = 0; i < npeers && res == szSuccess; ++i) res = makeArea(c, &c->peers[size_t(peers[i])], &mine[size_t(i)]);
  std::string why;
  if (res != szSuccess) {  // the peers learn it from the areas sent below (valid 0)
    why = szThreadLastError();
    for (AreaInfo& a : mine) a.valid = 0;
  }
  const szResult_t sent =
      szBootstrapExchange(c->bootstrap, peers, npeers, kTagIpcArea, mine.data(), theirs.data(), sizeof(AreaInfo));
  if (res != szSuccess) return szSetError(res, "%s", why.c_str());
  SZCHECK(sent);
  // Each side tells the other whether it mapped: a pair is used only once both did, so a side
  // that failed never leaves the other's kernels waiting on a channel it will not serve.
  std::vector<int32_t> mapped(static_cast<size_t>(npeers), 1), peerMapped(static_cast<size_t>(npeers), 0);
  for (int i = 0; i < npeers && res == szSuccess; ++i) {
    res = mapArea(c, peers[i], theirs[size_t(i)], &c->peers[size_t(peers[i])]);
    if (res != szSuccess) {
      why = szThreadLastError();
      for (int32_t& m : mapped) m = 0;
    }
  }
  SZCHECK(szBootstrapExchange(c->bootstrap, peers, npeers, kTagIpcMapped, mapped.data(), peerMapped.data(),
                              sizeof(int32_t)));
  if (res != szSuccess) return szSetError(res, "%s", why.c_str());
  for (int i = 0; i < npeers; ++i)
    if (peerMapped[size_t(i)] != 1)
      return szSetError(szRemoteError, "ipc wire: rank %d could not map its side of the pair with rank %d", peers[i],
                        c->rank);
  return szSuccess;
}

szResult_t ipcChannel(void* wireComm, int peer, int send, SlotChannel* ch) {
  IpcComm* c = static_cast<IpcComm*>(wireComm);
  if (peer < 0 || peer >= c->nranks || peer == c->rank || c->peers[size_t(peer)].theirs == nullptr)
    return szSetError(szInvalidArgument, "ipc wire: no channel with rank %d (not connected)", peer);
  const Peer& p = c->peers[size_t(peer)];
  AreaLayout a(c->stride, c->config.nslots);
  // Sends: the peer's ring and receive error word, this rank's credits, send error and clock.
  // Receives: this rank's ring and receive error word, the peer's credits and send error.
  uint8_t* ringSide = send ? p.theirs : p.mine;
  uint8_t* creditSide = send ? p.mine : p.theirs;
  *ch = SlotChannel{};
  ch->ring = ringSide + a.ring;
  ch->credits = reinterpret_cast<uint64_t*>(creditSide + a.credits);
  ch->localError = reinterpret_cast<int*>(send ? p.mine + a.sendError : p.mine + a.recvError);
  ch->peerError = reinterpret_cast<int*>(send ? p.theirs + a.recvError : p.theirs + a.sendError);
  ch->linkClock = reinterpret_cast<unsigned long long*>(p.mine + a.linkClock);
  ch->nsPerByte = c->config.linkGBps > 0 ? 1.0 / c->config.linkGBps : 0;  // 1 GB/s = 1 byte per ns
  ch->stride = c->stride;
  ch->sliceBytes = c->config.sliceBytes;
  ch->nslots = c->config.nslots;
  // Both ranks' kernels run on this GPU: nothing outside it reads or writes the channel's words.
  ch->deviceScope = p.sameDevice ? 1 : 0;
  // A thread of this process on this GPU reads this rank's raw slices where they are (kSlotDirect):
  // one address space, one device. Both sides decide alike (the peer's pid and device).
  ch->directRead = p.sameDevice ? 1 : 0;
  return szSuccess;
}

}  // namespace

// 256 KiB slices, blocks on half the multiprocessors (src/comm.cc). Nothing is posted on ipc: abort is close.
// name, needsGpu, deviceMemory, nodeLocal, sendsWaitForReceives, defaultSliceBytes, defaultMaxBlocks, defaultSlotsPerBlock, connect, connectPeers, channel, hostChannel, progress, isend, irecv, test, failPeer, close, abort
const szWire szWireIpc = {"ipc", 1, 0, 1, 0, 256 << 10, 0, 1, ipcConnect, ipcConnectPeers, ipcChannel, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, ipcClose, ipcClose};
