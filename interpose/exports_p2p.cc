// The interposer's exported point-to-point and group calls: ncclSend, ncclRecv, ncclGroupStart,
// ncclGroupEnd and ncclGetUniqueId (which tags the id for the handshake). Each decides by
// route.h, sends through SplitZip (szSend/szRecv on the communicator's SplitZip side) or calls
// the real NCCL with the caller's arguments unchanged.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/checks.h"
#include "interpose/attach.h"
#include "interpose/exports.h"
#include "interpose/group_state.h"
#include "interpose/handshake.h"
#include "interpose/real_nccl.h"
#include "interpose/registry.h"
#include "interpose/route.h"

namespace szi {

std::string& threadSzError() {
  thread_local std::string message;
  return message;
}

bool on() { return interposing(policy()); }

bool blockingConfig(const ncclConfig_t* config) {
  if (config != nullptr && config->blocking != NCCL_CONFIG_UNDEF_INT) return config->blocking != 0;
  const char* env = getenv("NCCL_COMM_BLOCKING");
  return env == nullptr || strcmp(env, "0") != 0;
}

namespace {

// The communicators of the calling thread's open group's intercepted operations.
std::vector<std::shared_ptr<Entry>>& groupEntries() {
  thread_local std::vector<std::shared_ptr<Entry>> entries;
  return entries;
}

bool deviceMemory(const void* p) {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;  // the legacy stream while another thread captures: NCCL alone may take it
  }
  return status != cudaStreamCaptureStatusNone;
}

// A failed intercepted call: its message for ncclGetLastError, and a WARN with the way out.
ncclResult_t szFailed(const char* fn, szResult_t res, int peer) {
  threadSzError() = std::string("SplitZip interposer: ") + fn + ": " + szThreadLastError();
  WARN("SplitZip interposer: %s to/from peer %d failed in SplitZip (%s: %s); SZ_INTERPOSE=0 runs the program on "
       "NCCL alone", fn, peer, szResultName(res), szThreadLastError());
  return ncclResult_t(toNcclResult(res));
}

ncclResult_t p2p(bool send, void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                 cudaStream_t stream) {
  const char* fn = send ? "ncclSend" : "ncclRecv";
  std::shared_ptr<Entry> e = on() ? registryFind(comm) : nullptr;
  Decision d = decide(e != nullptr, int(type), count, peer, e ? e->rank : -1, e != nullptr && capturing(stream),
                      policy());
  if (d.route == Route::Forward) {
    if (e) ++(send ? e->forwardedSends : e->forwardedRecvs);
    if (e) TRACE(SZ_P2P, "SplitZip interposer: %s %zu elements of type %d, peer %d: NCCL (%s)", fn, count, int(type),
                 peer, d.reason);
    ncclResult_t r = send ? SZI_REAL(ncclSend, buf, count, type, peer, comm, stream)
                          : SZI_REAL(ncclRecv, buf, count, type, peer, comm, stream);
    if (r != ncclSuccess) threadSzError().clear();
    return r;
  }
  if (!deviceMemory(buf)) {  // SplitZip would move it on the host, blocking, out of the stream's order
    threadSzError() = std::string("SplitZip interposer: ") + fn + ": the buffer is not device memory; SplitZip "
                      "compresses device buffers only (SZ_INTERPOSE=0 runs the program on NCCL alone)";
    WARN("%s", threadSzError().c_str());
    return ncclInvalidUsage;
  }
  ++(send ? e->sends : e->recvs);
  if (!e->firstLogged.exchange(true))
    INFO(SZ_P2P, "SplitZip interposer: rank %d/%d: first intercepted call: %s of %zu elements of type %d, peer %d",
         e->rank, e->nranks, fn, count, int(type), peer);
  TRACE(SZ_P2P, "SplitZip interposer: %s %zu elements of type %d, peer %d: SplitZip", fn, count, int(type), peer);
  auto call = [&] {
    return send ? szSend(buf, count, szDataType_t(type), peer, e->sz, stream)
                : szRecv(buf, count, szDataType_t(type), peer, e->sz, stream);
  };
  szResult_t r;
  if (threadGroup().depth() > 0) {  // queued on this thread until szGroupEnd, which runs it
    groupEntries().push_back(e);
    r = call();
  } else {
    std::lock_guard<std::mutex> lock(e->mu);
    r = call();
  }
  return r == szSuccess ? ncclSuccess : szFailed(fn, r, peer);
}

// The outermost szGroupEnd runs the group's operations: it holds the mutex of every
// communicator they use (in address order, so two threads never wait on each other).
szResult_t runGroupEnd() {
  std::vector<std::shared_ptr<Entry>> used;
  used.swap(groupEntries());
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (auto& e : used) locks.emplace_back(e->mu);
  return szGroupEnd();
}

}  // namespace

}  // namespace szi

using namespace szi;

extern "C" ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                                 ncclComm_t comm, cudaStream_t stream) {
  return p2p(true, const_cast<void*>(sendbuff), count, datatype, peer, comm, stream);
}

extern "C" ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  return p2p(false, recvbuff, count, datatype, peer, comm, stream);
}

// Both libraries' groups open and close together, so a group can mix intercepted and forwarded
// operations: the intercepted ones run at szGroupEnd, the forwarded ones at NCCL's. SplitZip's
// go first on every rank, so on each stream a pair's two sides are queued in the same order.
extern "C" ncclResult_t ncclGroupStart() {
  if (!on()) return SZI_REAL(ncclGroupStart);
  threadGroup().start();
  szGroupStart();
  return SZI_REAL(ncclGroupStart);
}

extern "C" ncclResult_t ncclGroupEnd() {
  if (!on()) return SZI_REAL(ncclGroupEnd);
  std::vector<PendingAttach> ready;
  szResult_t sr = szSuccess;
  if (threadGroup().end(&ready)) sr = threadGroup().depth() == 0 ? runGroupEnd() : szGroupEnd();
  ncclResult_t nr = SZI_REAL(ncclGroupEnd);
  if (!ready.empty()) attachAll(ready, nr == ncclSuccess);  // the inits and splits NCCL just ran
  if (sr != szSuccess) return szFailed("ncclGroupEnd", sr, -1);
  return nr;
}

// The id is NCCL's with the handshake's tag in its unused tail (handshake.h).
extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  ncclResult_t r = SZI_REAL(ncclGetUniqueId, uniqueId);
  if (r != ncclSuccess || !on()) return r;
  IdTag tag;
  if (!idTagFits(uniqueId->internal))
    INFO(SZ_INIT, "SplitZip interposer: this NCCL uses the whole unique id: its communicators are forwarded");
  else if (startRegistrar(&tag) != szSuccess)
    WARN("SplitZip interposer: no handshake registrar (%s): the id's communicator is forwarded", szThreadLastError());
  else
    idTagWrite(uniqueId->internal, tag);
  return r;
}
