// A fake NCCL for the interposer's CPU tests: libnccl.so.2 with the entry points the interposer
// forwards to, each recording its call in a log (fakeNcclLog) instead of moving data. Inits are
// collective as NCCL's are: ncclCommInitRank returns once all nranks ranks of its id (threads of
// one process) have called it, at the outermost ncclGroupEnd when called inside a group.
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

struct ncclComm {
  int rank, nranks;
};

namespace {

std::mutex gMu;
std::condition_variable gCv;
std::string gLog;
std::map<std::string, int> gJoined;  // NCCL's part of an id -> ranks that arrived
int gIds = 0;

struct PendingInit {
  std::string key;
  int nranks;
};
thread_local int tDepth = 0;
thread_local std::vector<PendingInit> tInits;

void record(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void record(const char* fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(gMu);
  gLog += line;
  gLog += '\n';
}

// NCCL's own bootstrap handle is the id's first 36 bytes; the rest is never read.
std::string idKey(const ncclUniqueId& id) { return std::string(id.internal, 36); }

// Waits until `nranks` ranks of the id arrived (10 s at most: a test that breaks the
// collective fails instead of hanging).
ncclResult_t join(const std::string& key, int nranks) {
  std::unique_lock<std::mutex> lock(gMu);
  ++gJoined[key];
  gCv.notify_all();
  bool all = gCv.wait_for(lock, std::chrono::seconds(10), [&] { return gJoined[key] >= nranks; });
  return all ? ncclSuccess : ncclSystemError;
}

ncclResult_t initRank(const char* fn, ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  record("%s rank=%d nranks=%d", fn, rank, nranks);
  *comm = new ncclComm{rank, nranks};
  if (tDepth > 0) {
    tInits.push_back({idKey(id), nranks});
    return ncclSuccess;
  }
  return join(idKey(id), nranks);
}

}  // namespace

extern "C" {

const char* fakeNcclLog() {
  static std::string copy;
  std::lock_guard<std::mutex> lock(gMu);
  copy = gLog;
  return copy.c_str();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  memset(id, 0, sizeof(*id));
  std::lock_guard<std::mutex> lock(gMu);
  snprintf(id->internal, 36, "fake-nccl-id-%d", ++gIds);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  return initRank("ncclCommInitRank", comm, nranks, id, rank);
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  record("ncclCommInitRankConfig blocking=%d", config ? config->blocking : -1);
  return initRank("ncclCommInitRankConfig", comm, nranks, id, rank);
}
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int*) {
  record("ncclCommInitAll ndev=%d", ndev);
  for (int i = 0; i < ndev; ++i) comms[i] = new ncclComm{i, ndev};
  return ncclSuccess;
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
  record("ncclCommSplit color=%d key=%d", color, key);
  *newcomm = color == NCCL_SPLIT_NOCOLOR ? nullptr : new ncclComm{comm->rank, comm->nranks};
  return ncclSuccess;
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  record("ncclCommFinalize rank=%d", comm->rank);
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  record("ncclCommDestroy rank=%d", comm->rank);
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  record("ncclCommAbort rank=%d", comm->rank);
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags) {
  record("ncclCommRevoke rank=%d flags=%d", comm->rank, flags);
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t* err) {
  *err = ncclSuccess;
  return ncclSuccess;
}
const char* ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "fake error"; }
const char* ncclGetLastError(ncclComm_t) { return "fake NCCL's last error"; }
ncclResult_t ncclCommCount(const ncclComm_t comm, int* n) {
  *n = comm->nranks;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* r) {
  *r = comm->rank;
  return ncclSuccess;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* d) {
  *d = comm->rank;
  return ncclSuccess;
}
ncclResult_t ncclSend(const void*, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t) {
  record("ncclSend rank=%d count=%zu type=%d peer=%d", comm->rank, count, int(type), peer);
  return ncclSuccess;
}
ncclResult_t ncclRecv(void*, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t) {
  record("ncclRecv rank=%d count=%zu type=%d peer=%d", comm->rank, count, int(type), peer);
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void*, void*, size_t count, ncclDataType_t type, ncclRedOp_t, ncclComm_t comm,
                           cudaStream_t) {
  record("ncclAllReduce rank=%d count=%zu type=%d", comm->rank, count, int(type));
  return ncclSuccess;
}
ncclResult_t ncclBroadcast(const void*, void*, size_t count, ncclDataType_t, int root, ncclComm_t comm, cudaStream_t) {
  record("ncclBroadcast rank=%d count=%zu root=%d", comm->rank, count, root);
  return ncclSuccess;
}
// The rest of the calls vLLM's pynccl wrapper declares (tests/interpose/pynccl_ctypes_test.py).
ncclResult_t ncclGetVersion(int* version) {
  record("ncclGetVersion");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
ncclResult_t ncclReduce(const void*, void*, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t) {
  record("ncclReduce rank=%d count=%zu type=%d op=%d root=%d", comm->rank, count, int(type), int(op), root);
  return ncclSuccess;
}
ncclResult_t ncclAllGather(const void*, void*, size_t count, ncclDataType_t type, ncclComm_t comm, cudaStream_t) {
  record("ncclAllGather rank=%d count=%zu type=%d", comm->rank, count, int(type));
  return ncclSuccess;
}
ncclResult_t ncclReduceScatter(const void*, void*, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t) {
  record("ncclReduceScatter rank=%d count=%zu type=%d op=%d", comm->rank, count, int(type), int(op));
  return ncclSuccess;
}
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void*, size_t size, ncclWindow_t* win, int flags) {
  record("ncclCommWindowRegister rank=%d size=%zu flags=%d", comm->rank, size, flags);
  *win = reinterpret_cast<ncclWindow_t>(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  record("ncclCommWindowDeregister rank=%d same=%d", comm->rank, win == reinterpret_cast<ncclWindow_t>(comm));
  return ncclSuccess;
}
ncclResult_t ncclGroupStart() {
  ++tDepth;
  record("ncclGroupStart");
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  record("ncclGroupEnd");
  if (tDepth == 0) return ncclInvalidUsage;
  if (--tDepth > 0) return ncclSuccess;
  ncclResult_t r = ncclSuccess;
  for (const PendingInit& p : tInits)
    if (join(p.key, p.nranks) != ncclSuccess) r = ncclSystemError;
  tInits.clear();
  return r;
}

}  // extern "C"
