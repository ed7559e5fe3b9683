// Slot launches captured into CUDA graphs (src/proto/slot_graphs.h).
#include "src/proto/slot_graphs.h"

#include <cstring>

#include "kernels/cuda_check.h"
#include "kernels/pinned_host.h"
#include "kernels/zero_fill.h"

namespace sz {
namespace {

uint64_t align256(uint64_t v) { return (v + 255) & ~uint64_t(255); }

// The user object's destructor: CUDA calls it once the graph and its instances are gone (on a
// thread of its own, where no CUDA call may be made): the next poll keeps the memory for a later
// capture.
void markReleased(void* p) {
  auto* flag = static_cast<std::shared_ptr<std::atomic<bool>>*>(p);
  (*flag)->store(true, std::memory_order_release);
  delete flag;
}

}  // namespace

void SlotGraphs::free(Entry& e) {
  freePinnedHost(e.host);
  if (e.dev) cudaFree(e.dev);
  e.host = e.dev = nullptr;
  cudaGetLastError();
}

SlotGraphs::~SlotGraphs() {
  for (auto& e : entries_) free(*e);
  for (auto& e : spare_) free(*e);
  for (auto& e : abandoned_) free(*e);
  if (pending_) free(*pending_);
}

void SlotGraphs::retire(std::unique_ptr<Entry> e) {
  e->ops.clear();
  e->released.reset();
  spare_.push_back(std::move(e));
}

szResult_t SlotGraphs::allocate(uint32_t nops, uint64_t tableBytes, uint64_t scratchBytes, uint64_t recordsBytes,
                                Memory* out) {
  drop();
  const uint64_t results = align256(sizeof(SlotOpResult) * nops), pool = align256(sizeof(SlotOp) * nops);
  const uint64_t accums = align256(sizeof(SlotOpAccum) * nops);
  const uint64_t scratch = align256(scratchBytes);
  const uint64_t hostBytes = results + pool + tableBytes, devBytes = accums + scratch + recordsBytes;
  std::unique_ptr<Entry> e;
  for (auto it = spare_.begin(); it != spare_.end() && !e; ++it)
    if ((*it)->hostBytes >= hostBytes && (*it)->devBytes >= devBytes) {
      e = std::move(*it);
      spare_.erase(it);
    }
  if (!e) {
    // No cudaHostAlloc or cudaFree while capturing: both wait for every running kernel of the
    // device, and the peer's kernel (a rank of this process on the same GPU) may be waiting for
    // this rank (kernels/pinned_host.h). Memory is kept for the next capture, freed at destroy.
    e = std::make_unique<Entry>();
    SZCHECK(allocPinnedHost(hostBytes, &e->host));
    e->hostBytes = hostBytes;
    if (pinnedDeviceAddress(e->host) != e->host) {
      free(*e);
      return szSetError(szUnhandledCudaError,
                        "slot graphs: pinned host memory that the device reaches at another address");
    }
    cudaError_t err = cudaMalloc(&e->dev, devBytes);
    if (err != cudaSuccess) {
      free(*e);
      CUDACHECK(err);
    }
    e->devBytes = devBytes;
  }
  memset(e->host, 0, hostBytes);
  szResult_t r = zeroDeviceMemory(e->dev, accums);
  if (r != szSuccess) {
    free(*e);
    return r;
  }
  uint8_t* h = static_cast<uint8_t*>(e->host);
  uint8_t* d = static_cast<uint8_t*>(e->dev);
  e->mem.results = reinterpret_cast<SlotOpResult*>(h);
  e->mem.pool = reinterpret_cast<SlotOp*>(h + results);
  e->mem.tables = tableBytes ? h + results + pool : nullptr;
  e->mem.accums = reinterpret_cast<SlotOpAccum*>(d);
  e->mem.scratch = scratchBytes ? d + accums : nullptr;
  e->mem.records = recordsBytes ? d + accums + scratch : nullptr;
  *out = e->mem;
  pending_ = std::move(e);
  return szSuccess;
}

szResult_t SlotGraphs::keep(CUstream_st* stream, std::vector<SlotCompletion> ops) {
  if (!pending_) return szSetError(szInternalError, "slot graphs: nothing allocated to keep");
  std::unique_ptr<Entry> e = std::move(pending_);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
#if CUDART_VERSION >= 13000
  cudaError_t err = cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph);
#else
  cudaError_t err = cudaStreamGetCaptureInfo_v2(stream, &status, nullptr, &graph);
#endif
  if (err == cudaSuccess && (status != cudaStreamCaptureStatusActive || graph == nullptr))
    err = cudaErrorStreamCaptureInvalidated;
  e->released = std::make_shared<std::atomic<bool>>(false);
  auto* flag = new std::shared_ptr<std::atomic<bool>>(e->released);
  cudaUserObject_t object = nullptr;
  if (err == cudaSuccess)
    err = cudaUserObjectCreate(&object, flag, markReleased, 1, cudaUserObjectNoDestructorSync);
  if (err != cudaSuccess) {
    delete flag;
    abandoned_.push_back(std::move(e));  // the kernel is captured: never reused
    CUDACHECK(err);
  }
  // The graph takes the one reference: the destructor runs when the graph (and each instance,
  // which holds its own) is destroyed.
  err = cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove);
  if (err != cudaSuccess) {
    cudaUserObjectRelease(object, 1);  // runs the destructor: the flag is set and freed
    abandoned_.push_back(std::move(e));  // the kernel is captured: never reused
    CUDACHECK(err);
  }
  for (SlotCompletion& c : ops) c.replay = true;
  e->ops = std::move(ops);
  entries_.push_back(std::move(e));
  return szSuccess;
}

void SlotGraphs::drop(bool launched) {
  if (!pending_) return;
  if (launched) abandoned_.push_back(std::move(pending_));
  else retire(std::move(pending_));
}

void SlotGraphs::poll(std::vector<SlotCompletion>* finished) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = **it;
    if (e.released->load(std::memory_order_acquire)) {
      retire(std::move(*it));
      it = entries_.erase(it);
      continue;
    }
    bool done = true;
    for (size_t k = 0; k < e.ops.size() && done; ++k)
      done = reinterpret_cast<const volatile int*>(&e.mem.results[k].done)[0] != 0;
    if (done) {
      std::atomic_thread_fence(std::memory_order_acquire);  // the results' fields after `done`
      for (size_t k = 0; k < e.ops.size(); ++k) {
        SlotCompletion c = e.ops[k];
        completeFromResult(c, e.mem.results[k]);
        reinterpret_cast<volatile int*>(&e.mem.results[k].done)[0] = 0;
        finished->push_back(std::move(c));
      }
    }
    ++it;
  }
}

}  // namespace sz
