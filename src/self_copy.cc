// Send/receive to self (see self_copy.h).
#include "src/self_copy.h"

#include <algorithm>
#include <cstring>

#include "base/checks.h"

#if SZ_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/sm_copy.h"
#endif

namespace sz {
namespace {

// One contiguous run of bytes that goes from a send segment to a receive segment.
struct Piece {
  uint8_t* dst;
  const uint8_t* src;
  size_t bytes;
};

// The send's segments laid over the receive's (the split into buffers may differ, as between
// ranks: only the total count must match).
std::vector<Piece> pieces(const Op& send, const Op& recv) {
  std::vector<Piece> out;
  size_t si = 0, ri = 0, so = 0, ro = 0;
  while (si < send.segs.size() && ri < recv.segs.size()) {
    const SlotSegment& s = send.segs[si];
    const SlotSegment& r = recv.segs[ri];
    size_t n = std::min(s.bytes - so, r.bytes - ro);
    out.push_back({r.ptr + ro, s.ptr + so, n});
    so += n;
    ro += n;
    if (so == s.bytes) ++si, so = 0;
    if (ro == r.bytes) ++ri, ro = 0;
  }
  return out;
}

#if SZ_HAVE_CUDA
szResult_t cudaFail(cudaError_t err, const char* what) {
  return szSetError(szUnhandledCudaError, "send to self: %s: %s", what, cudaGetErrorString(err));
}

// Makes `waiter` wait for the work enqueued on `signaller` so far.
szResult_t join(cudaStream_t waiter, cudaStream_t signaller) {
  cudaEvent_t e;
  cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (err != cudaSuccess) return cudaFail(err, "cudaEventCreate");
  err = cudaEventRecord(e, signaller);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(waiter, e, 0);
  cudaEventDestroy(e);  // released once the wait no longer needs it
  return err == cudaSuccess ? szSuccess : cudaFail(err, "cudaEventRecord/cudaStreamWaitEvent");
}
#endif

szResult_t copyPair(szComm* comm, const Op& send, const Op& recv) {
  std::vector<Piece> ps = pieces(send, recv);
  if (!recv.device) {
    for (const Piece& p : ps) memmove(p.dst, p.src, p.bytes);  // in place is allowed: dst may be src
    return szSuccess;
  }
#if SZ_HAVE_CUDA
  int saved = -1, device = comm->cudaDevice;
  if (cudaGetDevice(&saved) == cudaSuccess && saved != device) cudaSetDevice(device);
  szResult_t res = send.stream != recv.stream ? join(recv.stream, send.stream) : szSuccess;
  for (const Piece& p : ps)
    if (res == szSuccess && p.dst != p.src) res = smCopyAsync(p.dst, p.src, p.bytes, recv.stream);
  if (res == szSuccess && send.stream != recv.stream) res = join(send.stream, recv.stream);
  if (saved >= 0 && saved != device) cudaSetDevice(saved);
  return res;
#else
  (void)comm;
  return szSetError(szUnhandledCudaError, "send to self: device buffers in a build without CUDA");
#endif
}

}  // namespace

szResult_t runSelfOps(szComm* comm, std::vector<std::shared_ptr<Op>>& ops) {
  std::vector<std::shared_ptr<Op>> sends, recvs, others;
  for (const auto& op : ops) (op->peer != comm->rank ? others : op->send ? sends : recvs).push_back(op);
  if (sends.empty() && recvs.empty()) return szSuccess;
  if (sends.size() != recvs.size())
    return szSetError(szInvalidUsage, "rank %d: %zu send(s) to self and %zu receive(s) from self in the group: each "
                      "send to self needs a receive from self in the same group (szGroupStart/szGroupEnd)",
                      comm->rank, sends.size(), recvs.size());
  for (size_t i = 0; i < sends.size(); ++i) {
    const Op &s = *sends[i], &r = *recvs[i];
    if (s.count != r.count || s.type != r.type)
      return szSetError(szInvalidUsage, "rank %d: receive from self of %zu elements of %s does not match its send "
                        "to self of %zu elements of %s", comm->rank, r.count, szTypeName(r.type), s.count,
                        szTypeName(s.type));
    if (s.device != r.device && s.count > 0)
      return szSetError(szInvalidArgument, "rank %d: a send to self and its receive mix host and device buffers",
                        comm->rank);
  }
  for (size_t i = 0; i < sends.size(); ++i) SZCHECK(copyPair(comm, *sends[i], *recvs[i]));
  ops.swap(others);
  return szSuccess;
}

}  // namespace sz
