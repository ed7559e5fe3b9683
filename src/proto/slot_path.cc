// The host side of the slot protocol (src/proto/slot_path.h).
#include "src/proto/slot_path.h"

#include <algorithm>
#include <cstring>

#include "kernels/cuda_check.h"
#include "kernels/kernel_loading.h"
#include "base/checks.h"

namespace sz {
namespace {

constexpr int kResultSlots = 1024;      // operations in flight per communicator
constexpr int kEvents = 256;            // launches in flight per communicator
constexpr uint64_t kTableBytes = 16 << 20;  // buffer-list tables of the launches in flight
constexpr int kScratchArenas = 2;       // launches with compressed buffer lists in flight

uint64_t align16(uint64_t v) { return (v + 15) & ~uint64_t(15); }

// The slice holding each byte offset's first segment: sliceSeg[i] = the segment where slice i
// starts.
void sliceSegments(const std::vector<SlotSegment>& segs, uint64_t sliceBytes, uint64_t slices, uint32_t* out) {
  size_t k = 0;
  for (uint64_t i = 0; i < slices; ++i) {
    const uint64_t off = i * sliceBytes;
    while (k + 1 < segs.size() && segs[k].offset + segs[k].bytes <= off) ++k;
    out[i] = uint32_t(k);
  }
}

const char* describe(szResult_t status) {
  switch (status) {
    case szInvalidUsage: return "the peer's matching call has another count or type";
    case szTimeout: return "no progress for the timeout (the peer did not post its matching call, or stopped)";
    case szRemoteError: return "the peer failed";
    case szCorruptFrame: return "a slot held a corrupt frame or header";
    default: return "failed";
  }
}

}  // namespace

szResult_t SlotPath::create(const szSlotWire* wire, void* wireComm, int rank, int nranks, const SlotPathConfig& config,
                            std::unique_ptr<SlotPath>* out) {
  SZCHECK(loadSlotKernels());  // and the copy kernels of sends to self (kernel_loading.h)
  SZCHECK(loadCopyKernels());
  std::unique_ptr<SlotPath> p(new SlotPath());
  p->rank_ = rank;
  p->nranks_ = nranks;
  p->cfg_ = config;
  p->send_.resize(size_t(nranks));
  p->recv_.resize(size_t(nranks));
  p->sendStep_.assign(size_t(nranks), 0);
  p->recvStep_.assign(size_t(nranks), 0);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    SZCHECK(wire->channel(wireComm, peer, 1, &p->send_[size_t(peer)]));
    SZCHECK(wire->channel(wireComm, peer, 0, &p->recv_[size_t(peer)]));
  }
  CUDACHECK(cudaMalloc(&p->accums_, sizeof(SlotOpAccum) * kResultSlots));
  CUDACHECK(cudaMemset(p->accums_, 0, sizeof(SlotOpAccum) * kResultSlots));
  CUDACHECK(cudaHostAlloc(&p->results_, sizeof(SlotOpResult) * kResultSlots, cudaHostAllocMapped));
  memset(p->results_, 0, sizeof(SlotOpResult) * kResultSlots);
  for (int i = kResultSlots - 1; i >= 0; --i) p->freeResults_.push_back(i);
  CUDACHECK(cudaHostAlloc(&p->table_, kTableBytes, cudaHostAllocMapped));
  for (int i = 0; i < kScratchArenas; ++i) {
    uint8_t* s = nullptr;
    CUDACHECK(cudaMalloc(&s, config.sliceBytes * std::max<uint32_t>(config.blocks, kMaxSlotOps)));
    p->scratch_.push_back(s);
    p->freeScratch_.push_back(i);
  }
  for (int i = 0; i < kEvents; ++i) {
    cudaEvent_t e;
    CUDACHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    p->allEvents_.push_back(e);
    p->freeEvents_.push_back(e);
  }
  CUDACHECK(cudaDeviceSynchronize());  // the zeroed and initialized memory is in place
  *out = std::move(p);
  return szSuccess;
}

SlotPath::~SlotPath() {
  for (Launch& l : inflight_) cudaEventSynchronize(l.event);
  for (cudaEvent_t e : allEvents_) cudaEventDestroy(e);
  for (uint8_t* s : scratch_) cudaFree(s);
  if (table_) cudaFreeHost(table_);
  if (results_) cudaFreeHost(results_);
  if (accums_) cudaFree(accums_);
  cudaGetLastError();
}

szResult_t SlotPath::waitOldest(const std::function<void(const SlotCompletion&)>& done) {
  if (inflight_.empty()) return szSuccess;
  CUDACHECK(cudaEventSynchronize(inflight_.front().event));
  return reap(done);
}

szResult_t SlotPath::takeTable(uint64_t bytes, uint64_t* offset) {
  if (bytes > kTableBytes)
    return szSetError(szInvalidArgument, "a group's buffer lists need %llu bytes of tables, more than %llu",
                      (unsigned long long)bytes, (unsigned long long)kTableBytes);
  if (tableHead_ + bytes > kTableBytes) {
    // The arena restarts once every launch that uses it has finished.
    while (!inflight_.empty()) SZCHECK(waitOldest([](const SlotCompletion&) {}));
    tableHead_ = 0;
  }
  *offset = tableHead_;
  tableHead_ += bytes;
  return szSuccess;
}

szResult_t SlotPath::enqueue(const std::vector<SlotRequest>& reqs, cudaStream_t stream) {
  if (reqs.empty()) return szSuccess;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDACHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return szSetError(szInvalidUsage, "szSend/szRecv on a stream being captured into a CUDA graph is not supported");
  if (reqs.size() > kMaxSlotOps)
    return szSetError(szInvalidUsage, "a group holds %zu device operations on one stream; at most %u", reqs.size(),
                      kMaxSlotOps);
  // Resources first, so that a failure leaves the channels' steps untouched.
  bool needScratch = false;
  uint64_t tableBytes = 0;
  std::vector<uint64_t> slices(reqs.size()), sliceBytes(reqs.size());
  for (size_t k = 0; k < reqs.size(); ++k) {
    const SlotRequest& r = reqs[k];
    const uint64_t bytes = r.count * szTypeSize(r.type);
    sliceBytes[k] = opSliceBytes(bytes, cfg_.sliceBytes);
    slices[k] = opSlices(bytes, sliceBytes[k]);
    if (r.segs.size() > 1) {
      tableBytes += align16(r.segs.size() * sizeof(SlotSegment)) + align16(slices[k] * 4);
      needScratch |= (r.send ? r.frames : true) && szTypeIsCompressible(r.type);
    }
  }
  auto ignore = [](const SlotCompletion&) {};
  while (freeEvents_.empty() || freeResults_.size() < reqs.size() || (needScratch && freeScratch_.empty())) {
    if (inflight_.empty()) return szSetError(szInternalError, "slot path: pools exhausted with nothing in flight");
    SZCHECK(waitOldest(ignore));
  }
  uint64_t table = 0;
  if (tableBytes) SZCHECK(takeTable(tableBytes, &table));

  Launch l{};
  l.tableBegin = table;
  l.tableEnd = table + tableBytes;
  l.scratch = -1;
  SlotLaunch launch{};
  launch.nops = uint32_t(reqs.size());
  launch.timeoutNs = uint64_t(cfg_.timeoutMs) * 1000000ull;
  launch.scratchStride = cfg_.sliceBytes;
  if (needScratch) {
    l.scratch = freeScratch_.back();
    freeScratch_.pop_back();
    launch.scratch = scratch_[size_t(l.scratch)];
  }
  // Blocks: an equal share of the launch's blocks per operation, no more than it has slices.
  const uint32_t share = std::max<uint32_t>(1, cfg_.blocks / uint32_t(reqs.size()));
  uint32_t nextBlock = 0;
  uint64_t tableAt = table;
  for (size_t k = 0; k < reqs.size(); ++k) {
    const SlotRequest& r = reqs[k];
    SlotOp& op = launch.ops[k];
    const uint64_t bytes = r.count * szTypeSize(r.type);
    op.ch = r.send ? send_[size_t(r.peer)] : recv_[size_t(r.peer)];
    uint64_t& step = r.send ? sendStep_[size_t(r.peer)] : recvStep_[size_t(r.peer)];
    op.stepBase = step;
    step += slices[k];
    op.nsegs = uint32_t(std::max<size_t>(1, r.segs.size()));
    if (!r.segs.empty()) op.seg0 = r.segs[0];
    if (r.segs.size() > 1) {
      SlotSegment* segs = reinterpret_cast<SlotSegment*>(table_ + tableAt);
      std::copy(r.segs.begin(), r.segs.end(), segs);
      tableAt += align16(r.segs.size() * sizeof(SlotSegment));
      uint32_t* sliceSeg = reinterpret_cast<uint32_t*>(table_ + tableAt);
      sliceSegments(r.segs, sliceBytes[k], slices[k], sliceSeg);
      tableAt += align16(slices[k] * 4);
      op.segs = segs;
      op.sliceSeg = sliceSeg;
    }
    op.send = r.send;
    op.type = r.type;
    op.compress = r.frames;
    op.count = r.count;
    op.bytes = bytes;
    op.slices = slices[k];
    op.sliceBytes = sliceBytes[k];
    const uint32_t nblocks = uint32_t(std::min<uint64_t>(share, slices[k]));
    op.blockBegin = nextBlock;
    op.blockEnd = nextBlock + nblocks;
    nextBlock += nblocks;
    int slot = freeResults_.back();
    freeResults_.pop_back();
    l.results.push_back(slot);
    results_[slot] = SlotOpResult{};
    op.accum = accums_ + slot;
    op.result = results_ + slot;
    memcpy(op.codebook, cfg_.codebook.exponents, SZ_CODEBOOK_SIZE);
    op.used = cfg_.codebook.used;
    if (r.type != cfg_.codebook.type && szTypeIsCompressible(r.type)) {
      szCodebook_t cb;
      SZCHECK(szCodebookDefault(r.type, &cb));
      memcpy(op.codebook, cb.exponents, SZ_CODEBOOK_SIZE);
      op.used = cb.used;
    }
    l.ops.push_back(SlotCompletion{r.send, r.peer, bytes, r.frames, szSuccess, 0, 0, 0, slices[k], 0});
  }
  szResult_t res = launchSlotOps(launch, nextBlock, stream);
  if (res == szSuccess) {
    l.event = freeEvents_.back();
    if (cudaEventRecord(l.event, stream) != cudaSuccess)
      res = szSetError(szUnhandledCudaError, "slot path: cudaEventRecord failed after a launch");
  }
  if (res != szSuccess) {  // the channels' steps moved: the communicator cannot go on
    for (int s : l.results) freeResults_.push_back(s);
    if (l.scratch >= 0) freeScratch_.push_back(l.scratch);
    return res;
  }
  freeEvents_.pop_back();
  inflight_.push_back(std::move(l));
  return szSuccess;
}

szResult_t SlotPath::finish(Launch& l, const std::function<void(const SlotCompletion&)>& done) {
  szResult_t first = szSuccess;
  for (size_t k = 0; k < l.ops.size(); ++k) {
    SlotCompletion& c = l.ops[k];
    const SlotOpResult& r = results_[l.results[k]];
    c.status = r.done ? szResult_t(r.status) : szInternalError;
    c.wireBytes = r.wireBytes;
    c.escapes = r.escapes;
    c.compressedSlices = r.compressedSlices;
    c.seconds = r.endNs > r.startNs ? double(r.endNs - r.startNs) * 1e-9 : 0;
    freeResults_.push_back(l.results[k]);
    if (c.status != szSuccess && first == szSuccess)
      first = szSetError(c.status, "%s rank %d (%llu bytes): %s", c.send ? "device send to" : "device receive from",
                         c.peer, (unsigned long long)c.bytes, describe(c.status));
    done(c);
  }
  freeEvents_.push_back(l.event);
  if (l.scratch >= 0) freeScratch_.push_back(l.scratch);
  return first;
}

szResult_t SlotPath::reap(const std::function<void(const SlotCompletion&)>& done) {
  szResult_t first = szSuccess;
  for (auto it = inflight_.begin(); it != inflight_.end();) {
    cudaError_t q = cudaEventQuery(it->event);
    if (q == cudaErrorNotReady) {
      ++it;
      continue;
    }
    if (q != cudaSuccess) {
      cudaGetLastError();
      return szSetError(szUnhandledCudaError, "slot path: a launch failed: %s", cudaGetErrorString(q));
    }
    szResult_t r = finish(*it, done);
    if (first == szSuccess) first = r;
    it = inflight_.erase(it);
  }
  if (inflight_.empty()) tableHead_ = 0;
  return first;
}

}  // namespace sz
