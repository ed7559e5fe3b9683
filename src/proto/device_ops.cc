// CUDA implementation of device_ops.h: the codec stream, a pool of mapped result slots,
// completion flags in device memory that the user's stream waits on (cuStreamWaitValue32) and
// the codec stream writes (cuStreamWriteValue32), both found at run time so the library does
// not link the driver, and the slice tasks. The flag lives in device memory and is written by
// a stream, after the operation's codec work: the GPU never polls host memory across PCIe.
#include "src/proto/device_ops.h"

#include "base/checks.h"
#include "base/debug.h"

#if SZ_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>
#include <utility>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/kernel_loading.h"
#include "kernels/sm_copy.h"
#include "src/proto/event_pool.h"

namespace sz {

namespace {
constexpr int kResultSlots = 4096;
constexpr int kFlags = 4096;
// Events made at init (event_pool.h): one per completion flag (a device operation's ready event)
// and one per result slot (a slice task), the most that can be in flight, so neither the
// caller's thread nor the progress thread ever creates one later.
constexpr int kEvents = kFlags + kResultSlots;
enum TaskKind { kEncode = 1, kDecode = 2, kCopy = 3 };
using StreamValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
}  // namespace

struct DeviceContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* temp = nullptr;
  size_t tempBytes = 0;
  uint64_t* results = nullptr;  // mapped: encode frame sizes / decode statuses
  uint32_t* flags = nullptr;    // device memory: completion flags
  uint32_t gens[kFlags] = {};
  bool flagBusy[kFlags] = {};
  std::vector<int> freeResults;
  int nextFlag = 0;
  std::mutex mu;
  StreamValueFn waitValue = nullptr;
  StreamValueFn writeValue = nullptr;
  EventPool events;
  SmCopyPiece* pieces = nullptr;  // pinned: deviceCopyPieces' table
  cudaEvent_t piecesRead = nullptr;  // recorded after each launch that reads the table
};

szResult_t deviceCreateStream(cudaStream_t* stream) {
  int least = 0, greatest = 0;
  CUDACHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CUDACHECK(cudaStreamCreateWithPriority(stream, cudaStreamNonBlocking, greatest));
  return szSuccess;
}

szResult_t deviceContextCreate(size_t maxSliceBytes, DeviceContext** out) {
  auto* c = new DeviceContext();
  *out = c;
  CUDACHECK(cudaGetDevice(&c->device));
  SZCHECK(deviceCreateStream(&c->stream));
  SZCHECK(loadEncodeKernels());
  SZCHECK(loadDecodeKernels());
  SZCHECK(loadHistogramKernels());
  SZCHECK(loadCopyKernels());
  SZCHECK(loadSlotKernels());
  SZCHECK(c->events.fill(kEvents));
  CUDACHECK(cudaHostAlloc(&c->pieces, kDeviceCopyPieces * sizeof(SmCopyPiece), cudaHostAllocMapped));
  CUDACHECK(cudaEventCreateWithFlags(&c->piecesRead, cudaEventDisableTiming));
  size_t temp = 0, t;
  for (szDataType_t type : {szBfloat16, szFloat32, szFloat8e5m2}) {
    SZCHECK(szEncodeTempSize(maxSliceBytes / szTypeSize(type) + 1, type, &t));
    temp = t > temp ? t : temp;
  }
  CUDACHECK(cudaMalloc(&c->temp, temp));
  c->tempBytes = temp;
  CUDACHECK(cudaHostAlloc(&c->results, kResultSlots * sizeof(uint64_t), cudaHostAllocMapped));
  CUDACHECK(cudaMalloc(&c->flags, kFlags * sizeof(uint32_t)));
  CUDACHECK(cudaMemset(c->flags, 0, kFlags * sizeof(uint32_t)));
  for (int i = kResultSlots - 1; i >= 0; --i) c->freeResults.push_back(i);
  for (auto [name, fn] : {std::pair{"cuStreamWaitValue32", &c->waitValue}, std::pair{"cuStreamWriteValue32", &c->writeValue}}) {
    cudaDriverEntryPointQueryResult q;
    void* p = nullptr;
    CUDACHECK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr)
      return szSetError(szUnhandledCudaError, "%s is not available", name);
    *fn = reinterpret_cast<StreamValueFn>(p);
  }
  return szSuccess;
}

szResult_t deviceMakeCurrent(DeviceContext* c) {
  CUDACHECK(cudaSetDevice(c->device));
  // Another thread capturing a CUDA graph in global mode must not make this thread's event
  // queries and launches fail (NCCL's proxy thread does the same).
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CUDACHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  return szSuccess;
}

void deviceContextDestroy(DeviceContext* c) {
  if (c == nullptr) return;
  cudaSetDevice(c->device);
  if (c->stream) {
    cudaStreamSynchronize(c->stream);
    cudaStreamDestroy(c->stream);
  }
  cudaFree(c->temp);
  cudaFreeHost(c->results);
  cudaFree(c->flags);
  cudaFreeHost(c->pieces);
  if (c->piecesRead) cudaEventDestroy(c->piecesRead);
  delete c;
}

szResult_t deviceAlloc(bool pinnedHost, size_t bytes, void** p) {
  if (pinnedHost) CUDACHECK(cudaHostAlloc(p, bytes, cudaHostAllocMapped));
  else CUDACHECK(cudaMalloc(p, bytes));
  return szSuccess;
}

void deviceFree(bool pinnedHost, void* p) {
  if (pinnedHost) cudaFreeHost(p);
  else cudaFree(p);
}

szResult_t deviceOpRecordReady(DeviceContext* c, cudaStream_t user, DeviceOpSync* s) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDACHECK(cudaStreamIsCapturing(user, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return szSetError(szInvalidUsage, "szSend/szRecv cannot be captured in a CUDA graph");
  cudaEvent_t ev;
  SZCHECK(c->events.take(&ev));
  s->ready = ev;  // given back by deviceOpComplete, also if the record fails
  CUDACHECK(cudaEventRecord(ev, user));
  return szSuccess;
}

szResult_t deviceOpEnqueueWait(DeviceContext* c, cudaStream_t user, DeviceOpSync* s) {
  {
    std::lock_guard<std::mutex> lock(c->mu);
    // A flag in use is skipped: its release, a plain store, must not land after a newer use's.
    int tried = 0;
    while (c->flagBusy[c->nextFlag] && ++tried < kFlags) c->nextFlag = (c->nextFlag + 1) % kFlags;
    if (tried == kFlags) return szSetError(szInternalError, "more than %d device operations in flight", kFlags);
    s->flag = c->nextFlag;
    c->nextFlag = (c->nextFlag + 1) % kFlags;
    c->flagBusy[s->flag] = true;
    s->gen = ++c->gens[s->flag];  // the wait is "greater or equal": generations only grow
  }
  CUresult r = c->waitValue(reinterpret_cast<CUstream>(user), reinterpret_cast<CUdeviceptr>(c->flags + s->flag),
                            s->gen, CU_STREAM_WAIT_VALUE_GEQ);
  if (r != CUDA_SUCCESS) return szSetError(szUnhandledCudaError, "cuStreamWaitValue32 failed: %d", (int)r);
  return szSuccess;
}

szResult_t deviceOpReady(const DeviceOpSync& s, bool* ready) {
  cudaError_t e = cudaEventQuery(reinterpret_cast<cudaEvent_t>(s.ready));
  *ready = e == cudaSuccess;
  if (e != cudaSuccess && e != cudaErrorNotReady)  // not "ready": the user's buffers may still be in use
    return szSetError(szUnhandledCudaError, "the stream of a device operation failed: %s", cudaGetErrorString(e));
  return szSuccess;
}

int deviceOrdinal(const DeviceContext* c) { return c->device; }

void deviceOpComplete(DeviceContext* c, DeviceOpSync* s) {
  // Queued after the operation's codec work on the codec stream, which never waits on a user's
  // stream (device_ops.h).
  if (s->flag >= 0 && c->writeValue(reinterpret_cast<CUstream>(c->stream),
                                    reinterpret_cast<CUdeviceptr>(c->flags + s->flag), s->gen, 0) != CUDA_SUCCESS)
    WARN("cannot release the user's stream of a device operation (flag %d)", s->flag);
  if (s->flag >= 0) {
    std::lock_guard<std::mutex> lock(c->mu);
    c->flagBusy[s->flag] = false;
  }
  c->events.give(reinterpret_cast<cudaEvent_t>(s->ready));
  s->ready = nullptr;
  s->flag = -1;
}

namespace {

szResult_t startTask(DeviceContext* c, int kind, DeviceTask* t) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->freeResults.empty()) return szSetError(szInternalError, "device result slots exhausted");
  t->slot = c->freeResults.back();
  c->freeResults.pop_back();
  t->kind = kind;
  cudaEvent_t ev;
  szResult_t res = c->events.take(&ev);
  if (res != szSuccess) {
    c->freeResults.push_back(t->slot);
    t->slot = -1;
    return res;
  }
  t->done = ev;
  return szSuccess;
}

// Gives a task's result slot and event back (finished, or its work could not be queued); returns `res`.
szResult_t releaseTask(DeviceContext* c, DeviceTask* t, szResult_t res) {
  c->events.give(reinterpret_cast<cudaEvent_t>(t->done));
  t->done = nullptr;
  std::lock_guard<std::mutex> lock(c->mu);
  c->freeResults.push_back(t->slot);
  t->slot = -1;
  return res;
}

// Queues the task's completion event after its work (`res`: how queuing that work went).
szResult_t recordTask(DeviceContext* c, DeviceTask* t, szResult_t res) {
  if (res == szSuccess) {
    cudaError_t e = cudaEventRecord(reinterpret_cast<cudaEvent_t>(t->done), c->stream);
    if (e != cudaSuccess) res = szSetError(szUnhandledCudaError, "cudaEventRecord: %s", cudaGetErrorString(e));
  }
  return res == szSuccess ? res : releaseTask(c, t, res);
}

}  // namespace

szResult_t deviceEncode(DeviceContext* c, const void* src, size_t count, szDataType_t type,
                        const szCodebook_t* cb, void* frame, size_t cap, DeviceTask* t) {
  SZCHECK(startTask(c, kEncode, t));
  return recordTask(c, t, szEncodeAsync(src, count, type, cb, 0, frame, cap, reinterpret_cast<uint64_t*>(c->results + t->slot),
                                        c->temp, c->tempBytes, c->stream));
}

szResult_t deviceDecode(DeviceContext* c, const void* frame, size_t bytes, void* dst, size_t cap,
                        uint8_t* headerCopy, DeviceTask* t) {
  SZCHECK(startTask(c, kDecode, t));
  szResult_t res = szSuccess;
  if (headerCopy && bytes >= SZ_FRAME_HEADER_BYTES) res = smCopyAsync(headerCopy, frame, SZ_FRAME_HEADER_BYTES, c->stream);
  if (res == szSuccess) res = szDecodeAsync(frame, bytes, dst, cap, reinterpret_cast<int*>(c->results + t->slot), c->stream);
  return recordTask(c, t, res);
}

szResult_t deviceCopy(DeviceContext* c, void* dst, const void* src, size_t bytes, DeviceTask* t) {
  SZCHECK(startTask(c, kCopy, t));
  return recordTask(c, t, smCopyAsync(dst, src, bytes, c->stream));  // never the copy engines (sm_copy.h)
}

szResult_t deviceCopyPieces(DeviceContext* c, uint8_t* const* dsts, const uint8_t* const* srcs,
                            const uint64_t* bytes, size_t n, DeviceTask* t) {
  if (n > kDeviceCopyPieces) return szSetError(szInternalError, "deviceCopyPieces: %zu pieces", n);
  // A launch still reading the table (its wait timed out) must not see it rewritten.
  cudaError_t q = cudaEventQuery(c->piecesRead);
  if (q == cudaErrorNotReady)
    return szSetError(szTimeout, "deviceCopyPieces: an earlier gather or scatter on the codec stream has not finished");
  if (q != cudaSuccess) return szSetError(szUnhandledCudaError, "deviceCopyPieces: %s", cudaGetErrorString(q));
  for (size_t i = 0; i < n; ++i) c->pieces[i] = SmCopyPiece{dsts[i], srcs[i], bytes[i]};
  SZCHECK(startTask(c, kCopy, t));
  szResult_t res = smCopyPiecesAsync(c->pieces, n, c->stream);
  if (res == szSuccess && cudaEventRecord(c->piecesRead, c->stream) != cudaSuccess)
    res = szSetError(szUnhandledCudaError, "deviceCopyPieces: cudaEventRecord failed");
  return recordTask(c, t, res);
}

bool deviceTaskPoll(DeviceContext* c, DeviceTask* t, szResult_t* res, uint64_t* bytes) {
  cudaError_t e = cudaEventQuery(reinterpret_cast<cudaEvent_t>(t->done));
  if (e == cudaErrorNotReady) return false;
  *res = szSuccess;
  if (e != cudaSuccess) {
    *res = szSetError(szUnhandledCudaError, "device slice task failed: %s", cudaGetErrorString(e));
  } else if (t->kind == kEncode) {
    *bytes = c->results[t->slot];
  } else if (t->kind == kDecode) {
    int status = *reinterpret_cast<volatile int*>(c->results + t->slot);
    if (status != szSuccess) *res = szSetError(szResult_t(status), "device decode of a slice failed (%s)",
                                               szResultName(szResult_t(status)));
  }
  releaseTask(c, t, szSuccess);
  return true;
}

}  // namespace sz

#else  // !SZ_HAVE_CUDA

namespace sz {

namespace {
szResult_t noCuda() { return szSetError(szUnhandledCudaError, "SplitZip was built without CUDA"); }
}  // namespace

szResult_t deviceCreateStream(cudaStream_t*) { return noCuda(); }
szResult_t deviceContextCreate(size_t, DeviceContext**) { return noCuda(); }
void deviceContextDestroy(DeviceContext*) {}
szResult_t deviceMakeCurrent(DeviceContext*) { return noCuda(); }
szResult_t deviceAlloc(bool, size_t, void**) { return noCuda(); }
void deviceFree(bool, void*) {}
szResult_t deviceOpRecordReady(DeviceContext*, cudaStream_t, DeviceOpSync*) { return noCuda(); }
szResult_t deviceOpEnqueueWait(DeviceContext*, cudaStream_t, DeviceOpSync*) { return noCuda(); }
szResult_t deviceOpReady(const DeviceOpSync&, bool* ready) {
  *ready = false;
  return noCuda();
}
int deviceOrdinal(const DeviceContext*) { return -1; }
void deviceOpComplete(DeviceContext*, DeviceOpSync*) {}
szResult_t deviceEncode(DeviceContext*, const void*, size_t, szDataType_t, const szCodebook_t*, void*, size_t,
                        DeviceTask*) {
  return noCuda();
}
szResult_t deviceDecode(DeviceContext*, const void*, size_t, void*, size_t, uint8_t*, DeviceTask*) {
  return noCuda();
}
szResult_t deviceCopy(DeviceContext*, void*, const void*, size_t, DeviceTask*) { return noCuda(); }
szResult_t deviceCopyPieces(DeviceContext*, uint8_t* const*, const uint8_t* const*, const uint64_t*, size_t,
                            DeviceTask*) {
  return noCuda();
}
bool deviceTaskPoll(DeviceContext*, DeviceTask*, szResult_t* res, uint64_t*) {
  *res = noCuda();
  return true;
}

}  // namespace sz

#endif
