// szSend/szRecv (and the v-variants) and group semantics: argument checks, turning calls into
// slot operations (device: src/proto/slot_path.h, host: src/proto/host_slots.h), and deferring
// them until the outermost szGroupEnd, as NCCL does.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/checks.h"
#include "base/param.h"
#include "base/profile.h"
#include "codec/dtype.h"
#include "src/buffer_overlap.h"
#include "src/comm.h"
#include "src/proto/host_slots.h"
#include "src/proto/segment_groups.h"
#include "src/proto/slot_path.h"
#include "src/proto/slot_slices.h"
#include "src/self_copy.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/capture_mode.h"
#endif

using namespace sz;

namespace {

struct PendingOp {
  szComm* comm;
  std::shared_ptr<Op> op;
};

thread_local int tGroupDepth = 0;
thread_local std::vector<PendingOp> tPending;
thread_local szResult_t tGroupError = szSuccess;  // first error of a call inside the group
thread_local std::string tGroupErrorMessage;

// Keeps the group's first error and its message for szGroupEnd.
void recordGroupError(szResult_t res, const std::string& message) {
  if (tGroupError != szSuccess) return;
  tGroupError = res;
  tGroupErrorMessage = message;
}

bool isDevicePointer(const void* p) {
#if SZ_HAVE_CUDA
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear: a host pointer unknown to CUDA is not an error
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
#else
  (void)p;
  return false;
#endif
}

// Makes `device` current for a scope (NCCL does the same in its calls), then restores the
// caller's.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
#if SZ_HAVE_CUDA
    if (device >= 0 && cudaGetDevice(&saved_) == cudaSuccess && saved_ != device) cudaSetDevice(device);
    else saved_ = -1;
#else
    (void)device;
#endif
  }
  ~DeviceGuard() {
#if SZ_HAVE_CUDA
    if (saved_ >= 0) cudaSetDevice(saved_);
#endif
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

// A buffer of the group's overlap checks (src/buffer_overlap.h), taken by `owner`.
OwnedRange rangeOf(const SlotSegment& g, int owner) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(g.ptr);
  return OwnedRange{begin, begin + g.bytes, owner};
}

// Checks the arguments and builds the operation.
// `fn`: the API call, for messages.
szResult_t makeOp(const char* fn, bool send, void* const* bufs, const size_t* counts, int nbufs, szDataType_t type,
                  int peer, szComm* comm, cudaStream_t stream, std::shared_ptr<Op>* out) {
  SZ_PROFILE_SCOPE("host call: make the operation");
  if (comm == nullptr) return szSetError(szInvalidArgument, "%s: comm is NULL", fn);
  if (comm->asyncError.load() == szInProgress)
    return szSetError(szInvalidUsage, "%s: the communicator's non-blocking init has not finished "
                      "(szCommGetAsyncError returns szInProgress)", fn);
  if (peer < 0 || peer >= comm->nranks)  // peer == own rank: a copy (self_copy.h)
    return szSetError(szInvalidArgument, "%s: peer %d is out of range (rank %d of %d ranks)", fn, peer, comm->rank,
                      comm->nranks);
  size_t es = szTypeSize(type);
  if (es == 0) return szSetError(szInvalidArgument, "%s: invalid data type %d (szDataType_t has 0..%d)", fn, (int)type, szNumTypes - 1);
  if (nbufs < 0 || (nbufs > 0 && (bufs == nullptr || counts == nullptr)))
    return szSetError(szInvalidArgument, "%s: invalid buffer list", fn);
  auto op = std::make_shared<Op>();
  op->api = fn;
  op->send = send;
  op->peer = peer;
  op->type = type;
  op->stream = stream;
  for (int i = 0; i < nbufs; ++i) {
    size_t bytes;
    if (__builtin_mul_overflow(counts[i], es, &bytes) || __builtin_add_overflow(op->count, counts[i], &op->count) ||
        op->count > size_t(PTRDIFF_MAX) / es)  // no buffer can be larger than PTRDIFF_MAX bytes
      return szSetError(szInvalidArgument, "%s: element count overflows", fn);
    if (counts[i] == 0) continue;
    if (bufs[i] == nullptr) return szSetError(szInvalidArgument, "%s: buffer %d is NULL with %zu elements", fn, i, counts[i]);
    op->segs.push_back(SlotSegment{static_cast<uint8_t*>(bufs[i]), bytes, (op->count - counts[i]) * es});
    op->segGroups.push_back(segmentGroup(size_t(i), size_t(nbufs)));
  }
  if (!send) {  // a receive's buffers overlapping each other
    std::vector<OwnedRange> ranges;
    for (size_t k = 0; k < op->segs.size(); ++k) ranges.push_back(rangeOf(op->segs[k], int(k)));
    if (overlapAcrossOwners(ranges)) return szSetError(szInvalidArgument, "%s: receive buffers overlap", fn);
  }
  // No element: the kind of the buffers given, or with none, the wire's (a zero-count call on
  // the nccl wire is stream-ordered, as ncclSend's is).
  const void* any = nullptr;
  for (int i = 0; i < nbufs && any == nullptr; ++i) any = bufs[i];
  bool device = !op->segs.empty() ? isDevicePointer(op->segs[0].ptr)
                : any != nullptr      ? isDevicePointer(any)
                                      : commDeviceOnly(comm, peer);
  for (size_t k = 1; k < op->segs.size(); ++k)  // the first decided `device`
    if (isDevicePointer(op->segs[k].ptr) != device)
      return szSetError(szInvalidArgument, "%s: buffer list mixes host and device memory", fn);
  // SZ_ENCRYPT protects the host slots' bytes on every wire; device buffers on a wire that
  // leaves the node would travel in the clear, so they are refused rather than sent so.
  if (device && peer != comm->rank && comm->slotPath && !comm->slotPath->reaches(peer))
    return szSetError(szInvalidUsage, "%s: rank %d takes no device buffers from rank %d (one of the two has no GPU): "
                      "pass host buffers", fn, peer, comm->rank);
  if (device && peer != comm->rank && (comm->cfg.encrypt || comm->cfg.authData) && !commDeviceSealable(comm, peer))
    return szSetError(szInvalidUsage, "%s: %s covers host buffers and device buffers on the tcp and ipc wires: device "
                      "buffers to rank %d on wire %s would travel %s (stage them in host memory, or use SZ_WIRE=tcp)",
                      fn, comm->cfg.encrypt ? "SZ_ENCRYPT=1" : "SZ_AUTH_DATA=1", peer, commWire(comm, peer)->name,
                      comm->cfg.encrypt ? "in the clear" : "without a MAC");
  op->device = device;
  *out = op;
  return szSuccess;
}

szResult_t runHost(std::map<szComm*, std::vector<std::shared_ptr<Op>>>& byComm);

// A pair's first operations connect its channels (ipc and ib exchange their slot areas, waiting
// for the peer's): every device peer of the group at once, before any launch. Several
// communicators connect on threads of their own, as their host operations run (one thread may
// drive several ranks: each rank's connect waits for the others'). A failure fails its
// communicator.
szResult_t connectPeers(const std::vector<std::pair<szComm*, std::vector<int>>>& connects) {
  if (connects.empty()) return szSuccess;  // no vectors of results for nothing to connect
  SZ_PROFILE_SCOPE("host group: connect");
  std::vector<szResult_t> results(connects.size(), szSuccess);
  std::vector<std::string> why(connects.size());
  auto connectOne = [&](size_t i) {
    szComm* comm = connects[i].first;
    DeviceGuard onCommDevice(comm->cudaDevice);
#if SZ_HAVE_CUDA
    CaptureModeRelaxed relaxed;  // a thread of its own starts in the process's default mode
#endif
    results[i] = comm->slotPath->connect(connects[i].second);
    if (results[i] != szSuccess) why[i] = szThreadLastError();
  };
  std::vector<std::thread> others;
  for (size_t i = 1; i < connects.size(); ++i) others.emplace_back(connectOne, i);
  if (!connects.empty()) connectOne(0);
  for (std::thread& t : others) t.join();
  for (size_t i = 0; i < connects.size(); ++i)
    if (results[i] != szSuccess) return commFail(connects[i].first, szSetError(results[i], "%s", why[i].c_str()));
  return szSuccess;
}

// Whether a send travels as frames: a type its path compresses (Op::compressible) and the codec
// on, or auto and the model of its path (device or host buffers) says frames win
// (src/proto/auto_model.h). A send captured into a CUDA graph is never recorded: it takes the
// model's choice and tries nothing.
bool sendsFrames(szComm* comm, const Op& op, bool captured = false) {
  const uint64_t bytes = op.count * szTypeSize(op.type);
  const int codec = comm->cfg.codec;
  AutoModel& model = op.device ? comm->autoDevice : comm->autoHost;
  return op.send && op.compressible() &&
         (codec == SZ_CODEC_ON || (codec == SZ_CODEC_AUTO && bytes >= uint64_t(szParamAutoMinBytes()) &&
                                   model.useFrames(op.peer, op.type, bytes, !captured)));
}

// A host operation, planned: frames or raw, and whether the pool may have frames to decode.
void planHost(szComm* comm, Op& op) {
  op.frames = sendsFrames(comm, op);
  op.mayDecode = !op.send && op.compressible() && comm->cfg.codec != SZ_CODEC_OFF;
}

// A device operation, planned: frames or raw, and a codebook for each segment group a send's
// slices start in.
// A send captured into a CUDA graph encodes with the codebooks of the moment at every replay.
void planDevice(szComm* comm, Op& op, bool captured) {
  SZ_PROFILE_SCOPE("host group: plan (auto, codebooks)");
  op.frames = sendsFrames(comm, op, captured);
  op.codebooks.clear();
  if (!op.frames) return;
  // The codebooks that follow the data, per group; a histogram only on a group's drift.
  const uint64_t bytes = op.count * szTypeSize(op.type);
  const uint32_t groups = sliceGroupMask(op.segs, op.segGroups, comm->slotPath->opSliceBytes(op.peer, bytes));
  for (int g = 0; g < kSegmentGroups; ++g)
    if (groups >> g & 1) {
      if (captured) {
        op.codebooks.push_back(SlotGroupCodebook{g, comm->codebooks->current(op.peer, op.type, g), false});
        continue;
      }
      const CodebookDrift::Plan plan = comm->codebooks->plan(op.peer, op.type, g);
      op.codebooks.push_back(SlotGroupCodebook{g, plan.codebook, plan.calibrate});
    }
  if (op.codebooks.empty()) {  // no element: an empty frame, any valid codebook
    op.codebooks.emplace_back();
    szCodebookDefault(op.type, &op.codebooks.back().codebook);
  }
}

// Whether a communicator's device operations with other ranks in a group are being captured
// into a CUDA graph: all of their streams in one capture, or none. Anything else is refused
// (szInvalidUsage) before anything is planned or launched, so the communicator stays usable: a
// group mixing captured and other streams, a capture already invalidated, and the nccl wire,
// whose proxy calls NCCL on a stream of its own for each operation.
szResult_t captureOf(szComm* comm, const std::vector<std::shared_ptr<Op>>& ops, bool* captured) {
  SZ_PROFILE_SCOPE("host group: capture check");
  *captured = false;
#if SZ_HAVE_CUDA
  int capturing = 0, other = 0;
  unsigned long long first = 0;
  bool mixed = false;
  cudaStream_t asked = nullptr;  // the stream asked last (a group's operations mostly share one)
  bool anyAsked = false;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  for (const auto& op : ops) {
    if (!op->device || op->peer == comm->rank) continue;
    const char* what = op->send ? "send to" : "receive from";
    if ((!anyAsked || op->stream != asked) && cudaStreamGetCaptureInfo(op->stream, &status, &id) != cudaSuccess) {
      cudaGetLastError();
      return szSetError(szInvalidUsage, "rank %d: the stream of a %s rank %d is not a usable CUDA stream", comm->rank,
                        what, op->peer);
    }
    asked = op->stream;
    anyAsked = true;
    if (status == cudaStreamCaptureStatusInvalidated)
      return szSetError(szInvalidUsage, "rank %d: a %s rank %d on a stream whose CUDA graph capture was invalidated; "
                        "the communicator stays usable", comm->rank, what, op->peer);
    if (status != cudaStreamCaptureStatusActive) {
      ++other;
      continue;
    }
    if (strcmp(commWire(comm, op->peer)->name, "nccl") == 0)
      return szSetError(szInvalidUsage, "rank %d: a %s rank %d on a stream being captured into a CUDA graph: wire nccl "
                        "cannot be captured (its proxy calls NCCL for each operation); wires ipc, tcp and ib can. The "
                        "communicator stays usable", comm->rank, what, op->peer);
    mixed |= capturing > 0 && id != first;
    if (capturing++ == 0) first = id;
  }
  if (capturing > 0 && (other > 0 || mixed))
    return szSetError(szInvalidUsage, "rank %d: a group mixes operations on streams being captured into a CUDA graph "
                      "with operations on streams outside that capture; the communicator stays usable", comm->rank);
  *captured = capturing > 0;
#else
  (void)comm;
  (void)ops;
#endif
  return szSuccess;
}

// Runs the pending operations of every communicator together.
szResult_t runPending(std::vector<PendingOp> pending) {
  SZ_PROFILE_SCOPE("host group: all");
  std::map<szComm*, std::vector<std::shared_ptr<Op>>> byComm;
  for (const PendingOp& p : pending) byComm[p.comm].push_back(p.op);
  // Overlapping receive buffers within the group; and a receive into a buffer the group sends
  // to another rank (in place), which a decoder would race: it writes a slice's elements before
  // patching their escapes, so the send could read a value that never was the data. Only a send
  // to self and a receive from self may share a buffer: that pair is a memmove. (A receive from a
  // peer into what a send to self reads, or from self into what goes to a peer, races alike.)
  for (auto& [comm, ops] : byComm) {
    std::vector<OwnedRange> received, receivedFromPeers, receivedFromSelf, sent, sentToPeers;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = *ops[i];
      const bool peer = op.peer != comm->rank;
      for (const SlotSegment& g : op.segs) {
        const OwnedRange r = rangeOf(g, int(i));
        if (op.send) {
          sent.push_back(r);
          if (peer) sentToPeers.push_back(r);
        } else {
          received.push_back(r);
          (peer ? receivedFromPeers : receivedFromSelf).push_back(r);
        }
      }
    }
    if (overlapAcrossOwners(received))
      return szSetError(szInvalidArgument, "szGroupEnd: receive buffers of two operations overlap");
    if (overlapBetween(receivedFromPeers, sent) || overlapBetween(receivedFromSelf, sentToPeers))
      return szSetError(szInvalidArgument, "szGroupEnd: a receive buffer overlaps a buffer the group sends "
                        "(in place send/recv is not supported: docs/PIPELINE.md)");
  }
  std::map<szComm*, bool> captured;
  for (auto& [comm, ops] : byComm) {
    szResult_t err = szResult_t(comm->asyncError.load());
    if (err != szSuccess) {
      std::string why = szGetLastError(comm);  // a copy: it may be this thread's message, rewritten below
      return szSetError(err, "communicator of rank %d has failed (%s: %s): call szCommAbort", comm->rank,
                        szResultName(err), why.c_str());
    }
    for (const auto& op : ops)
      if (op->device && comm->slotPath == nullptr)
        return szSetError(szInvalidUsage, "device buffers on a communicator without a GPU");
    // One launch runs a communicator's device operations of a group (its streams joined):
    // refused here, before anything runs, rather than failing the communicator at the launch.
    const auto launched = std::count_if(ops.begin(), ops.end(), [comm = comm](const auto& op) {
      return op->device && op->peer != comm->rank;
    });
    if (launched > kMaxSlotOps)
      return szSetError(szInvalidUsage, "szGroupEnd: rank %d: %ld device operations with other ranks in one group; "
                        "at most %u per communicator", comm->rank, long(launched), kMaxSlotOps);
    // (A send to self is a stream-ordered copy: it is captured like any other.)
    SZCHECK(captureOf(comm, ops, &captured[comm]));
  }
#if SZ_HAVE_CUDA
  // A captured group allocates its launches' memory while its streams are captured
  // (kernels/capture_mode.h); the calls of other groups that a capture would refuse (connecting,
  // event queries) relax the mode themselves, only when they happen: each switch is a CUDA call.
  std::optional<CaptureModeRelaxed> relaxed;
  if (std::any_of(captured.begin(), captured.end(), [](const auto& c) { return c.second; })) relaxed.emplace();
#endif
  // Finished launches are reaped first, before anything of the group runs (a failed one fails its
  // communicator), and so that the codebooks planned for these sends have seen every completed
  // send's escapes.
  // A communicator whose slot path this group uses (it has device operations).
  auto usesSlots = [](const szComm* comm, const std::vector<std::shared_ptr<Op>>& ops) {
    return comm->slotPath && std::any_of(ops.begin(), ops.end(), [](const auto& op) { return op->device; });
  };
  for (auto& [comm, ops] : byComm)
    if (usesSlots(comm, ops)) {
      DeviceGuard onCommDevice(comm->cudaDevice);
      SZ_PROFILE_SCOPE("host group: reap");
      SZCHECK(commReapSlots(comm, false));
    }
  // Sends to self are copies, done here and taken out of the group; none of a communicator's
  // copies runs unless all of its sends to self pair up.
  for (auto& [comm, ops] : byComm) SZCHECK(runSelfOps(comm, ops));
  // Device operations of communicators with a slot path: one launch per communicator, on the
  // stream of its first operation with the others' streams joined (as NCCL's group launch),
  // enqueued now; the call returns.
  std::map<szComm*, std::vector<std::shared_ptr<Op>>> host;  // host operations
  std::map<szComm*, std::vector<Op>> launches;
  std::vector<std::pair<szComm*, std::vector<int>>> connects;  // device peers, per communicator
  for (auto& [comm, ops] : byComm) {
    if (usesSlots(comm, ops)) {
      std::vector<int> fresh;  // peers not connected yet (checked before: reachable)
      for (const auto& op : ops)
        if (op->device && op->peer != comm->rank && !comm->slotPath->connected(op->peer)) fresh.push_back(op->peer);
      if (!fresh.empty()) connects.emplace_back(comm, std::move(fresh));
    }
  }
  SZCHECK(connectPeers(connects));
  for (auto& [comm, ops] : byComm) {
    for (const auto& op : ops) {
      if (!op->device) {
        host[comm].push_back(op);
        continue;
      }
      planDevice(comm, *op, captured[comm]);
      launches[comm].push_back(*op);
    }
  }
  for (auto& [comm, reqs] : launches) {
    DeviceGuard onCommDevice(comm->cudaDevice);
    szResult_t r;
    {
      std::lock_guard<std::mutex> slots(comm->slotMu);  // beside a reap from another thread (comm.h)
      r = comm->slotPath->enqueue(reqs, captured[comm]);
    }
    if (r != szSuccess) return commFail(comm, r);
  }
  return runHost(host);
}

// Host operations of one communicator, to completion; each finished one is accounted, a failed one
// fails the communicator. *why: the failure's message.
szResult_t runHostOps(szComm* comm, const std::vector<std::shared_ptr<Op>>& ops, std::string* why) {
  std::vector<Op> reqs;
  for (const auto& op : ops) {
    planHost(comm, *op);
    reqs.push_back(*op);
  }
  std::vector<SlotCompletion> done;
  szResult_t r = comm->hostSlots->run(std::move(reqs), &done);
  if (r != szSuccess) *why = szGetLastError(nullptr);
  if (comm->cfg.codec == SZ_CODEC_AUTO) judgeExchanges(comm->rank, done);  // for the auto model alone
  for (const SlotCompletion& c : done) commAccount(comm, c, false);
  return r == szSuccess ? r : commFail(comm, r);
}

// Host operations: the call waits for them. A group's operations on several communicators run
// together (one may wait on another), the first in this thread, the others on threads of their own.
szResult_t runHost(std::map<szComm*, std::vector<std::shared_ptr<Op>>>& byComm) {
  std::vector<std::pair<szComm*, std::vector<std::shared_ptr<Op>>*>> work;
  for (auto& [comm, ops] : byComm) work.emplace_back(comm, &ops);
  if (work.empty()) return szSuccess;
  std::vector<szResult_t> results(work.size(), szSuccess);
  std::vector<std::string> why(work.size());
  std::vector<std::thread> others;
  for (size_t i = 1; i < work.size(); ++i)
    others.emplace_back([&, i] { results[i] = runHostOps(work[i].first, *work[i].second, &why[i]); });
  results[0] = runHostOps(work[0].first, *work[0].second, &why[0]);
  for (std::thread& t : others) t.join();
  for (size_t i = 0; i < work.size(); ++i)
    if (results[i] != szSuccess) return szSetError(results[i], "%s", why[i].c_str());
  return szSuccess;
}

szResult_t enqueue(const char* fn, bool send, void* const* bufs, const size_t* counts, int nbufs, szDataType_t type,
                   int peer, szComm* comm, cudaStream_t stream) {
  std::shared_ptr<Op> op;
  szResult_t res = makeOp(fn, send, bufs, counts, nbufs, type, peer, comm, stream, &op);
  if (tGroupDepth > 0) {
    if (res != szSuccess) recordGroupError(res, szGetLastError(nullptr));
    if (res == szSuccess) tPending.push_back({comm, op});
    return res;
  }
  if (res != szSuccess) return res;
  return runPending({{comm, op}});
}

}  // namespace

extern "C" szResult_t szSend(const void* sendbuff, size_t count, szDataType_t type, int peer,
                             szComm_t comm, cudaStream_t stream) {
  void* buf = const_cast<void*>(sendbuff);
  return enqueue("szSend", true, &buf, &count, 1, type, peer, comm, stream);
}

extern "C" szResult_t szRecv(void* recvbuff, size_t count, szDataType_t type, int peer, szComm_t comm,
                             cudaStream_t stream) {
  return enqueue("szRecv", false, &recvbuff, &count, 1, type, peer, comm, stream);
}

extern "C" szResult_t szSendv(const void* const* sendbuffs, const size_t* counts, int nbuffs,
                              szDataType_t type, int peer, szComm_t comm, cudaStream_t stream) {
  return enqueue("szSendv", true, const_cast<void* const*>(sendbuffs), counts, nbuffs, type, peer, comm, stream);
}

extern "C" szResult_t szRecvv(void* const* recvbuffs, const size_t* counts, int nbuffs, szDataType_t type,
                              int peer, szComm_t comm, cudaStream_t stream) {
  return enqueue("szRecvv", false, recvbuffs, counts, nbuffs, type, peer, comm, stream);
}

extern "C" szResult_t szGroupStart(void) {
  ++tGroupDepth;
  return szSuccess;
}

extern "C" szResult_t szGroupEnd(void) {
  if (tGroupDepth == 0) return szSetError(szInvalidUsage, "szGroupEnd without szGroupStart");
  if (--tGroupDepth > 0) return szSuccess;
  std::vector<PendingOp> pending;
  pending.swap(tPending);
  szResult_t err = tGroupError;
  tGroupError = szSuccess;
  if (err != szSuccess)
    return szSetError(err, "szGroupEnd: an operation of the group was invalid, none ran (%s)", tGroupErrorMessage.c_str());
  return runPending(std::move(pending));
}

void sz::groupDropComm(szComm* comm) {
  auto mine = [comm](const PendingOp& p) { return p.comm == comm; };
  if (std::none_of(tPending.begin(), tPending.end(), mine)) return;
  tPending.erase(std::remove_if(tPending.begin(), tPending.end(), mine), tPending.end());
  recordGroupError(szInvalidUsage, "a communicator of the group was destroyed before szGroupEnd");
}
