// A program that uses NCCL and knows nothing of SplitZip, on the fake NCCL (fake_nccl.cc): two
// threads are two ranks. tests/interpose_fake_nccl_test.cc runs it with and without the
// interposer preloaded and reads what it prints: each call's result, whether the unique id
// carries the handshake's tag, and the fake's log of the calls that reached NCCL.
//   fake_app ranks       init, a group mixing bf16, fp32 and int32 sends/receives, errors, teardown
//   fake_app plainpeer   as ranks, but rank 1 calls the fake NCCL's init directly (no interposer)
//   fake_app groupinit   both inits inside ncclGroupStart/End, with a blocking config
//   fake_app nonblocking inits with a non-blocking config
//   fake_app split       init, then ncclCommSplit (rank 1 with NCCL_SPLIT_NOCOLOR), then abort
//   fake_app initall     ncclCommInitAll of two devices, then revoke and destroy
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "interpose/nccl_compat.h"

extern "C" const char* fakeNcclLog();

namespace {

std::string gMode;
ncclUniqueId gId;

void check(int rank, const char* what, ncclResult_t r) { printf("rank %d: %s -> %d\n", rank, what, int(r)); }

// The fake NCCL's own init, past any interposer: a rank of a program without it.
ncclResult_t plainInit(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  void* h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
  auto init = h ? reinterpret_cast<decltype(&ncclCommInitRank)>(dlsym(h, "ncclCommInitRank")) : nullptr;
  return init ? init(comm, nranks, id, rank) : ncclSystemError;
}

void rankMain(int rank) {
  ncclComm_t comm = nullptr;
  if (gMode == "plainpeer" && rank == 1) {
    check(rank, "init", plainInit(&comm, 2, gId, rank));
  } else if (gMode == "groupinit" || gMode == "nonblocking") {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = gMode == "groupinit" ? 1 : 0;
    if (gMode == "groupinit") check(rank, "groupStart", ncclGroupStart());
    check(rank, "init", ncclCommInitRankConfig(&comm, 2, gId, rank, &config));
    if (gMode == "groupinit") check(rank, "groupEnd", ncclGroupEnd());
  } else {
    check(rank, "init", ncclCommInitRank(&comm, 2, gId, rank));
  }
  if (comm == nullptr) return;
  const int peer = 1 - rank;
  static char buf[1 << 20];
  check(rank, "groupStart", ncclGroupStart());
  check(rank, "groupStart(nested)", ncclGroupStart());
  check(rank, "send bf16", ncclSend(buf, 1 << 19, ncclBfloat16, peer, comm, nullptr));
  check(rank, "recv bf16", ncclRecv(buf, 1 << 19, ncclBfloat16, peer, comm, nullptr));
  check(rank, "groupEnd(nested)", ncclGroupEnd());
  check(rank, "send int32", ncclSend(buf, 1000, ncclInt32, peer, comm, nullptr));
  check(rank, "recv fp32", ncclRecv(buf, 16, ncclFloat32, peer, comm, nullptr));
  check(rank, "groupEnd", ncclGroupEnd());
  check(rank, "groupEnd(unbalanced)", ncclGroupEnd());
  ncclResult_t async = ncclInternalError;
  check(rank, "getAsyncError", ncclCommGetAsyncError(comm, &async));
  printf("rank %d: asyncError %d, lastError '%s'\n", rank, int(async), ncclGetLastError(comm));
  if (gMode == "split") {
    ncclComm_t child = nullptr;
    check(rank, "split", ncclCommSplit(comm, rank == 0 ? 0 : NCCL_SPLIT_NOCOLOR, rank, &child, nullptr));
    printf("rank %d: child %s\n", rank, child ? "made" : "none");
    if (child) check(rank, "destroy child", ncclCommDestroy(child));
    check(rank, "abort", ncclCommAbort(comm));
    return;
  }
  check(rank, "finalize", ncclCommFinalize(comm));
  check(rank, "destroy", ncclCommDestroy(comm));
}

}  // namespace

int main(int argc, char** argv) {
  gMode = argc > 1 ? argv[1] : "ranks";
  if (gMode == "initall") {
    ncclComm_t comms[2] = {nullptr, nullptr};
    check(0, "initAll", ncclCommInitAll(comms, 2, nullptr));
    check(0, "revoke", ncclCommRevoke(comms[0], 0));
    for (ncclComm_t c : comms) check(0, "destroy", ncclCommDestroy(c));
  } else {
    check(0, "getUniqueId", ncclGetUniqueId(&gId));
    bool tagged = false;
    for (size_t i = 64; i < sizeof(gId.internal); ++i) tagged = tagged || gId.internal[i] != 0;
    printf("id tagged: %d\n", int(tagged));
    std::thread other(rankMain, 1);
    rankMain(0);
    other.join();
  }
  printf("--- NCCL log\n%s", fakeNcclLog());
  return 0;
}
