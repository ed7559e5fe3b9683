// A fake NCCL for the interposer's CPU tests: libnccl.so.2 with the entry points the interposer
// forwards to, each recording its call in a log (fakeNcclLog) instead of moving data. Inits are
// collective as NCCL's are: ncclCommInitRank returns once all nranks ranks of its id (threads of
// one process) have called it, at the outermost ncclGroupEnd when called inside a group.
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <vector>

struct ncclComm {
  int rank, nranks;
  std::string key;         // the id's NCCL part: the ranks of one communicator share it
  int device = -1;         // the calling thread's CUDA device at init (-1: none current)
  uint64_t broadcasts = 0;  // broadcasts this rank took part in
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

// Device memory for the GPU run of the ctypes test (tests/interpose/pynccl_gpu_test.py), through
// libcuda found at run time, so that this library links no CUDA: a synchronous copy between any
// two pointers (unified addressing), and the calling thread's device. Without libcuda (the CPU
// tests) copies are host memcpy and no device is current.
struct Cuda {
  int (*memcpy)(unsigned long long dst, unsigned long long src, size_t bytes) = nullptr;
  int (*ctxGetDevice)(int* device) = nullptr;
};
const Cuda& cuda() {
  static const Cuda c = [] {
    Cuda c;
    if (void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      c.memcpy = reinterpret_cast<decltype(c.memcpy)>(dlsym(h, "cuMemcpy"));
      c.ctxGetDevice = reinterpret_cast<decltype(c.ctxGetDevice)>(dlsym(h, "cuCtxGetDevice"));
    }
    return c;
  }();
  return c;
}
void copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (cuda().memcpy && cuda().memcpy(uintptr_t(dst), uintptr_t(src), bytes) == 0) return;
  memcpy(dst, src, bytes);
}
int currentDevice() {
  int d = -1;
  return cuda().ctxGetDevice && cuda().ctxGetDevice(&d) == 0 ? d : -1;
}
size_t typeBytes(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}
// One broadcast at a time per communicator: the root's bytes, the broadcasts so far, and how many
// ranks have yet to take the latest.
struct Broadcast {
  std::vector<char> bytes;
  uint64_t count = 0;
  int pending = 0;
};
std::map<std::string, Broadcast> gBroadcasts;

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
  *comm = new ncclComm{rank, nranks, idKey(id), currentDevice()};
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
  for (int i = 0; i < ndev; ++i) comms[i] = new ncclComm{i, ndev, "initall", currentDevice()};
  return ncclSuccess;
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
  record("ncclCommSplit color=%d key=%d", color, key);
  *newcomm = color == NCCL_SPLIT_NOCOLOR ? nullptr
                                         : new ncclComm{comm->rank, comm->nranks, comm->key + "/split", comm->device};
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
  *d = comm->device >= 0 ? comm->device : comm->rank;
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
// Moves the bytes between the ranks (threads of this process), synchronously: the interposer's
// unique id broadcast (src/init_nccl.cc) then makes a SplitZip communicator on the GPU run.
ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t) {
  record("ncclBroadcast rank=%d count=%zu root=%d", comm->rank, count, root);
  const size_t bytes = count * typeBytes(type);
  if (comm->nranks == 1) {
    if (comm->rank == root) copyBytes(recv, send, bytes);
    return ncclSuccess;
  }
  std::unique_lock<std::mutex> lock(gMu);
  Broadcast& b = gBroadcasts[comm->key];
  const uint64_t mine = ++comm->broadcasts;
  if (comm->rank == root) {
    if (!gCv.wait_for(lock, std::chrono::seconds(10), [&] { return b.pending == 0 && b.count == mine - 1; }))
      return ncclSystemError;
    b.bytes.resize(bytes);
    copyBytes(b.bytes.data(), send, bytes);
    copyBytes(recv, send, bytes);
    b.count = mine;
    b.pending = comm->nranks - 1;
  } else {
    if (!gCv.wait_for(lock, std::chrono::seconds(10), [&] { return b.count >= mine; })) return ncclSystemError;
    copyBytes(recv, b.bytes.data(), std::min(bytes, b.bytes.size()));
    --b.pending;
  }
  gCv.notify_all();
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
