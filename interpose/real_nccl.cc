// Finding the real NCCL (real_nccl.h), and the entry points through which the SplitZip library
// inside the interposer reaches it.
#include "interpose/real_nccl.h"

#include <dlfcn.h>

#include <cstdlib>

#include <mutex>
#include <set>
#include <string>

#include "base/debug.h"

namespace szi {

namespace {

// The base address of the object holding `p`, or null.
const void* objectOf(const void* p) {
  Dl_info info;
  return dladdr(p, &info) != 0 ? info.dli_fbase : nullptr;
}

// From SZ_REAL_NCCL's library alone when it is set (`next` null); else the first of RTLD_NEXT,
// an already loaded libnccl.so.2, a freshly loaded one.
void* findSymbol(const char* name, void* next, void* loaded, const void* self) {
  for (void* handle : {next, loaded}) {
    if (handle == nullptr) continue;
    void* p = dlsym(handle, name);
    if (p != nullptr && objectOf(p) != self) return p;
  }
  return nullptr;
}

RealNccl resolve() {
  RealNccl t;
  const void* self = objectOf(reinterpret_cast<const void*>(&resolve));
  void* next = RTLD_NEXT;
  void* loaded = nullptr;
  const char* named = getenv("SZ_REAL_NCCL");
  if (named != nullptr && named[0] != '\0') {
    next = nullptr;
    loaded = dlopen(named, RTLD_LAZY | RTLD_LOCAL);
    if (loaded == nullptr)
      WARN("SplitZip interposer: SZ_REAL_NCCL=%s cannot be loaded (%s): every NCCL call fails with "
           "ncclInvalidUsage", named, dlerror());
  } else {
    loaded = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
    if (loaded == nullptr) loaded = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  }
  // The NCCL is the object that supplies ncclSend; every function comes from that one object, so
  // that a call it lacks is never taken from another NCCL in the process (whose communicators
  // these handles are not).
  Dl_info info;
  void* send = findSymbol("ncclSend", next, loaded, self);
  void* nccl = nullptr;
  if (send != nullptr && dladdr(send, &info) != 0 && info.dli_fname) {
    t.where = info.dli_fname;
    nccl = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
#define SZI_RESOLVE(f) t.f = reinterpret_cast<decltype(&::f)>(nccl ? findSymbol(#f, nullptr, nccl, self) : nullptr);
  SZI_REAL_NCCL_FUNCS(SZI_RESOLVE)
#undef SZI_RESOLVE
  if (t.ncclSend == nullptr || t.ncclCommInitRank == nullptr)
    WARN("SplitZip interposer: no NCCL found (neither after this library in the search order nor as "
         "libnccl.so.2): every NCCL call fails with ncclInvalidUsage");
  else
    INFO(SZ_INIT, "SplitZip interposer: forwarding to the NCCL in %s", t.where);
  return t;
}

}  // namespace

const RealNccl& realNccl() {
  static const RealNccl table = resolve();
  return table;
}

ncclResult_t missingReal(const char* function) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(function).second)
    WARN("SplitZip interposer: the loaded NCCL (%s) has no %s", realNccl().where, function);
  return ncclInvalidUsage;
}

}  // namespace szi

// The SplitZip library linked into the interposer calls NCCL by these names: the build renames
// its references (objcopy --redefine-sym ncclX=pncclX, the names NCCL itself gives its entry
// points for profilers), so the library's own NCCL traffic (the unique id broadcast, the wire's
// split communicators and their sends) goes straight to the real NCCL, never through the
// interposer's ncclSend. The names are local to the interposer (exports.map). A function the
// library starts to call without a forward here fails the interposer's link (-z defs).
extern "C" {
ncclResult_t pncclGetUniqueId(ncclUniqueId* id) { return SZI_REAL(ncclGetUniqueId, id); }
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return SZI_REAL(ncclCommInitRank, comm, nranks, id, rank);
}
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return SZI_REAL(ncclCommSplit, comm, color, key, newcomm, config);
}
ncclResult_t pncclCommDestroy(ncclComm_t comm) { return SZI_REAL(ncclCommDestroy, comm); }
ncclResult_t pncclCommAbort(ncclComm_t comm) { return SZI_REAL(ncclCommAbort, comm); }
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* err) {
  return SZI_REAL(ncclCommGetAsyncError, comm, err);
}
const char* pncclGetErrorString(ncclResult_t res) {
  return szi::realNccl().ncclGetErrorString ? szi::realNccl().ncclGetErrorString(res) : "unknown NCCL error";
}
const char* pncclGetLastError(ncclComm_t comm) {
  return szi::realNccl().ncclGetLastError ? szi::realNccl().ncclGetLastError(comm) : nullptr;
}
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) { return SZI_REAL(ncclCommCount, comm, count); }
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) { return SZI_REAL(ncclCommUserRank, comm, rank); }
ncclResult_t pncclSend(const void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  return SZI_REAL(ncclSend, buf, count, type, peer, comm, stream);
}
ncclResult_t pncclRecv(void* buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream) {
  return SZI_REAL(ncclRecv, buf, count, type, peer, comm, stream);
}
ncclResult_t pncclGroupStart() { return SZI_REAL(ncclGroupStart); }
ncclResult_t pncclGroupEnd() { return SZI_REAL(ncclGroupEnd); }
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t type, int root,
                            ncclComm_t comm, cudaStream_t stream) {
  return SZI_REAL(ncclBroadcast, sendbuff, recvbuff, count, type, root, comm, stream);
}
}
