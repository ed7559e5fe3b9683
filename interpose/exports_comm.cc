// The interposer's exported communicator calls: the inits and the split (each followed by the
// collective attach of attach.h), finalize, destroy, abort and revoke (SplitZip's side first,
// then NCCL's), and the error queries (NCCL's answer, or SplitZip's when NCCL has none).

#include <mutex>
#include <vector>

#include "base/checks.h"
#include "base/param.h"
#include "interpose/attach.h"
#include "interpose/exports.h"
#include "interpose/group_state.h"
#include "interpose/handshake.h"
#include "interpose/real_nccl.h"
#include "interpose/registry.h"
#include "interpose/route.h"

using namespace szi;

namespace {

// A new communicator's attach: now, or at the outermost ncclGroupEnd when NCCL deferred its init.
void attachOrDefer(PendingAttach p, ncclResult_t r) {
  if (threadGroup().defer(p)) return;
  attachAll({p}, r == ncclSuccess);
}

// ncclCommInitRank and ncclCommInitRankConfig: register (handshake step 1) before NCCL's init,
// so that every interposed rank has registered by the time any init returns.
template <typename Init>
ncclResult_t initRank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const ncclConfig_t* config,
                      Init init) {
  if (!on() || comm == nullptr) return init();
  IdTag tag;
  std::shared_ptr<HandshakeClient> client;
  if (!idTagRead(id.internal, &tag))
    INFO(SZ_INIT, "SplitZip interposer: rank %d/%d: the unique id comes from a process without the interposer: "
         "the communicator is forwarded", rank, nranks);
  else if (!blockingConfig(config))
    INFO(SZ_INIT, "SplitZip interposer: rank %d/%d: non-blocking communicator: forwarded", rank, nranks);
  else if (HandshakeClient::join(tag, rank, nranks, policyDigest(policy()), int(szParamTimeoutMs()), &client) !=
           szSuccess)
    WARN("SplitZip interposer: rank %d/%d: handshake failed (%s): the communicator is forwarded", rank, nranks,
         szThreadLastError());
  ncclResult_t r = init();
  if (client) attachOrDefer({r == ncclSuccess ? *comm : nullptr, false, client}, r);
  return r;
}

// Tears the SplitZip side of `comm` down (if it has one) with `how`, then runs NCCL's call.
template <typename SzCall, typename NcclCall>
ncclResult_t teardown(ncclComm_t comm, const char* when, SzCall how, NcclCall nccl) {
  if (std::shared_ptr<Entry> e = registryTake(comm)) {
    reportStats(*e, when);
    std::lock_guard<std::mutex> lock(e->mu);
    szResult_t r = how(e->sz);
    if (r != szSuccess)
      WARN("SplitZip interposer: rank %d/%d: SplitZip's %s failed (%s: %s)", e->rank, e->nranks, when,
           szResultName(r), szThreadLastError());
  }
  return nccl();
}

}  // namespace

extern "C" ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return initRank(comm, nranks, commId, rank, nullptr,
                  [&] { return SZI_REAL(ncclCommInitRank, comm, nranks, commId, rank); });
}

extern "C" ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                               ncclConfig_t* config) {
  return initRank(comm, nranks, commId, rank, config,
                  [&] { return SZI_REAL(ncclCommInitRankConfig, comm, nranks, commId, rank, config); });
}

// One process holds every rank: no handshake is needed, and the attaches run on one thread each.
extern "C" ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  ncclResult_t r = SZI_REAL(ncclCommInitAll, comms, ndev, devlist);
  if (r != ncclSuccess || !on() || comms == nullptr || ndev < 1) return r;
  std::vector<PendingAttach> list;
  for (int i = 0; i < ndev; ++i) list.push_back({comms[i], false, nullptr});
  attachAll(list, true);
  return r;
}

// A child of an interposed communicator is interposed too: its ranks are ranks of the parent,
// which all run the interposer with the same settings.
extern "C" ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  ncclResult_t r = SZI_REAL(ncclCommSplit, comm, color, key, newcomm, config);
  if (!on() || newcomm == nullptr || !registryFind(comm)) return r;
  if (!blockingConfig(config)) {
    INFO(SZ_INIT, "SplitZip interposer: non-blocking child communicator: forwarded");
    return r;
  }
  if (r == ncclSuccess && *newcomm == nullptr) return r;  // NCCL_SPLIT_NOCOLOR: no child here
  attachOrDefer({r == ncclSuccess ? *newcomm : nullptr, true, nullptr}, r);
  return r;
}

// SplitZip's operations finish first (szCommFinalize waits for them), then NCCL's.
extern "C" ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (std::shared_ptr<Entry> e = registryFind(comm)) {
    std::unique_lock<std::mutex> lock(e->mu);
    szResult_t r = szCommFinalize(e->sz);
    lock.unlock();
    if (r != szSuccess) {
      SZI_REAL(ncclCommFinalize, comm);
      return ncclResult_t(toNcclResult(r));
    }
  }
  return SZI_REAL(ncclCommFinalize, comm);
}

extern "C" ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return teardown(comm, "destroy", szCommDestroy, [&] { return SZI_REAL(ncclCommDestroy, comm); });
}

// SplitZip's operations in flight fail (their kernels end, their streams move on), then NCCL aborts.
extern "C" ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return teardown(comm, "abort", szCommAbort, [&] { return SZI_REAL(ncclCommAbort, comm); });
}

// SplitZip has no revoke: its side is aborted, and NCCL's revoke leaves the communicator to be
// destroyed or shrunk, which NCCL does alone.
extern "C" ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return teardown(comm, "revoke", szCommAbort, [&] { return SZI_REAL(ncclCommRevoke, comm, revokeFlags); });
}

namespace {

// SplitZip's asynchronous error of `e`, szSuccess while another thread holds it.
szResult_t szAsyncError(Entry& e) {
  std::unique_lock<std::mutex> lock(e.mu, std::try_to_lock);
  szResult_t s = szSuccess;
  if (!lock.owns_lock() || szCommGetAsyncError(e.sz, &s) != szSuccess) return szSuccess;
  return s;
}

}  // namespace

// NCCL's error first; with none, SplitZip's (a failed operation on the SplitZip side).
extern "C" ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  ncclResult_t r = SZI_REAL(ncclCommGetAsyncError, comm, asyncError);
  if (r != ncclSuccess || asyncError == nullptr || *asyncError != ncclSuccess) return r;
  if (std::shared_ptr<Entry> e = registryFind(comm)) {
    szResult_t s = szAsyncError(*e);
    if (s != szSuccess) *asyncError = ncclResult_t(toNcclResult(s));
  }
  return r;
}

// The message stays valid until the communicator is destroyed (szGetLastError(comm)).
extern "C" const char* ncclGetLastError(ncclComm_t comm) {
  if (std::shared_ptr<Entry> e = comm ? registryFind(comm) : nullptr) {
    if (szAsyncError(*e) != szSuccess) return szGetLastError(e->sz);
  }
  if (!threadSzError().empty()) return threadSzError().c_str();
  return realNccl().ncclGetLastError ? realNccl().ncclGetLastError(comm) : "";
}
