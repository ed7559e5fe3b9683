// The host side of the slot protocol (src/proto/slot_path.h).
#include "src/proto/slot_path.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/calibrate.h"
#include "kernels/capture_mode.h"
#include "kernels/cuda_check.h"
#include "kernels/kernel_loading.h"
#include "kernels/sm_copy.h"
#include "kernels/zero_fill.h"
#include "base/checks.h"
#include "base/profile.h"
#include "src/proto/segment_groups.h"
#include "src/proto/slot_slices.h"
#include "src/proto/slot_steps.h"

namespace sz {
namespace {

constexpr int kResultSlots = 1024;      // operations in flight per communicator (SlotLaunch::poolIndex: < 65536)
constexpr int kEvents = 256;            // launches in flight per communicator
constexpr uint64_t kTableBytes = 16 << 20;  // buffer-list tables of the launches in flight
constexpr int kScratchArenas = 2;       // launches with compressed buffer lists in flight
constexpr int kCalibratedTypes = 5;     // BF16, FP32, FP16, FP8 E5M2 and E4M3

constexpr int kCountBins = 256;          // a calibration's exponent histogram
static_assert(kSegmentGroups <= int(kSlotCodebooks), "a send carries a codebook per segment group");

uint64_t align16(uint64_t v) { return (v + 15) & ~uint64_t(15); }

// Whether a send of frames has a codebook for exactly the groups its slices take (one of any
// group for a send of no element), as the communicator plans them.
bool codebooksFit(const Op& r, uint64_t sliceBytes) {
  if (r.codebooks.empty() || r.codebooks.size() > kSlotCodebooks || r.segGroups.size() != r.segs.size()) return false;
  uint32_t planned = 0;
  for (const SlotGroupCodebook& g : r.codebooks) {
    if (g.group < 0 || g.group >= kSegmentGroups || (planned >> g.group & 1)) return false;
    planned |= 1u << g.group;
  }
  for (int g : r.segGroups)
    if (g < 0 || g >= kSegmentGroups) return false;
  const uint32_t taken = sliceGroupMask(r.segs, r.segGroups, sliceBytes);
  return taken ? planned == taken : r.codebooks.size() == 1;
}

SlotCodebook slotCodebook(const szCodebook_t& cb) {
  SlotCodebook c{};
  memcpy(c.exponents, cb.exponents, SZ_CODEBOOK_SIZE);
  c.used = uint32_t(cb.used);
  return c;
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

// A failed operation's error (`how`: how it ran, "" or ", replayed from a CUDA graph").
szResult_t failed(const SlotCompletion& c, const char* how) {
  return szSetError(c.status, "%s rank %d (%llu bytes)%s: %s", c.send ? "device send to" : "device receive from", c.peer,
                    (unsigned long long)c.bytes, how, describe(c.status));
}

// The streams of a launch's operations other than `stream`, each once.
std::vector<cudaStream_t> otherStreams(const std::vector<Op>& reqs, cudaStream_t stream) {
  std::vector<cudaStream_t> others;
  for (const Op& r : reqs)
    if (r.stream != stream && std::find(others.begin(), others.end(), r.stream) == others.end())
      others.push_back(r.stream);
  return others;
}

#if SZ_PROFILE
// A finished operation's kernel phases (base/profile.h): its span (first block's start to the
// last one's end) and each phase per block, by direction and by whether its slices were frames.
void profileKernel(const SlotCompletion& c, const SlotOpResult& r, uint32_t blocks) {
  if (!r.done || blocks == 0) return;
  static const char* const kNames[2][2][5] = {
      {{"kernel recv raw: span", "kernel recv raw: wait/block", "kernel recv raw: copy/block",
        "kernel recv raw: credit/block", ""},
       {"kernel recv frames: span", "kernel recv frames: wait/block", "kernel recv frames: decode/block",
        "kernel recv frames: credit/block", ""}},
      {{"kernel send raw: span", "kernel send raw: wait/block", "kernel send raw: copy/block",
        "kernel send raw: publish/block", "kernel send raw: drain/block"},
       {"kernel send frames: span", "kernel send frames: wait/block", "kernel send frames: encode/block",
        "kernel send frames: publish/block", "kernel send frames: drain/block"}}};
  const char* const* n = kNames[c.send][r.compressedSlices > 0];
  SZ_PROFILE_ADD(n[0], r.endNs > r.startNs ? r.endNs - r.startNs : 0);
  SZ_PROFILE_ADD(n[1], r.waitNs / blocks);
  SZ_PROFILE_ADD(n[2], r.workNs / blocks);
  SZ_PROFILE_ADD(n[3], r.pubNs / blocks);
  if (c.send) SZ_PROFILE_ADD(n[4], r.drainNs / blocks);
  SZ_PROFILE_ADD("kernel: last block's end to done", r.doneNs > r.endNs ? r.doneNs - r.endNs : 0);
}
#endif

}  // namespace

szResult_t SlotPath::create(const ChannelSource& channel, int rank, std::vector<uint64_t> sliceBytes,
                            const SlotPathConfig& config, std::unique_ptr<SlotPath>* out) {
  SZCHECK(loadSlotKernels());  // and the copy kernels (sends to self, calibration), the
  SZCHECK(loadCopyKernels());  // histogram (kernel_loading.h)
  SZCHECK(loadHistogramKernels());
  std::unique_ptr<SlotPath> p(new SlotPath());
  p->rank_ = rank;
  p->nranks_ = int(sliceBytes.size());
  p->cfg_ = config;
  p->channels_.init(channel, rank, std::move(sliceBytes));
  CUDACHECK(cudaMalloc(&p->steps_, sizeof(uint64_t) * 2 * size_t(p->nranks_)));
  SZCHECK(zeroDeviceMemory(p->steps_, sizeof(uint64_t) * 2 * size_t(p->nranks_)));
  p->last_.assign(2 * size_t(p->nranks_), ChannelLast{nullptr, nullptr, 0});
  CUDACHECK(cudaEventCreateWithFlags(&p->joinEvent_, cudaEventDisableTiming));
  CUDACHECK(cudaMalloc(&p->accums_, sizeof(SlotOpAccum) * kResultSlots));
  SZCHECK(zeroDeviceMemory(p->accums_, sizeof(SlotOpAccum) * kResultSlots));
  CUDACHECK(cudaHostAlloc(&p->results_, sizeof(SlotOpResult) * kResultSlots, cudaHostAllocMapped));
  memset(p->results_, 0, sizeof(SlotOpResult) * kResultSlots);
  for (int i = kResultSlots - 1; i >= 0; --i) p->freeResults_.push_back(i);
  CUDACHECK(cudaHostAlloc(&p->table_, kTableBytes, cudaHostAllocMapped));
  CUDACHECK(cudaHostAlloc(&p->opPool_, sizeof(SlotOp) * kResultSlots, cudaHostAllocMapped));
  for (int i = 0; i < kScratchArenas; ++i) {
    uint8_t* s = nullptr;
    CUDACHECK(cudaMalloc(&s, p->scratchBytes()));
    p->scratch_.add(s);
  }
  // One calibration out at a time per (peer, type, segment group) (CodebookDrift): five types
  // per peer; a launch takes at most one per group of each of its operations.
  const int calib = std::min(kCalibratedTypes * p->nranks_, int(kMaxSlotOps)) * kSegmentGroups;
  CUDACHECK(cudaMalloc(&p->calibDev_, sizeof(unsigned long long) * kCountBins * calib));
  CUDACHECK(cudaHostAlloc(&p->calibHost_, sizeof(unsigned long long) * kCountBins * calib, cudaHostAllocMapped));
  for (int i = calib - 1; i >= 0; --i) p->freeCalib_.push_back(i);
  for (int i = 0; i < kEvents; ++i) {
    cudaEvent_t e;
    CUDACHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    p->allEvents_.push_back(e);
    p->freeEvents_.push_back(e);
  }
  *out = std::move(p);
  return szSuccess;
}

SlotPath::~SlotPath() {
  for (Launch& l : inflight_) cudaEventSynchronize(l.event);
  for (cudaEvent_t e : allEvents_) cudaEventDestroy(e);
  for (uint8_t* s : scratch_.all) cudaFree(s);
  for (uint8_t* s : records_.all) cudaFree(s);
  if (table_) cudaFreeHost(table_);
  if (opPool_) cudaFreeHost(opPool_);
  if (results_) cudaFreeHost(results_);
  if (accums_) cudaFree(accums_);
  if (steps_) cudaFree(steps_);
  if (joinEvent_) cudaEventDestroy(joinEvent_);
  if (calibHost_) cudaFreeHost(calibHost_);
  if (calibDev_) cudaFree(calibDev_);
  cudaGetLastError();
}

szResult_t SlotPath::waitOldest() {
  if (inflight_.empty()) return szSuccess;
  CaptureModeRelaxed relaxed;  // a wait while a stream of this process is captured
  CUDACHECK(cudaEventSynchronize(inflight_.front().event));
  return collect();
}

// The exponent histogram of the start of a segment group's data in a send (its buffers, up to
// kCalibrateElems), on its stream ahead of its launch, copied to pinned memory for the host to
// read when the launch is reaped. No copy engine: zeroing and the copy are kernels
// (kernels/sm_copy.h).
szResult_t SlotPath::calibrate(const Op& r, int group, int buf, cudaStream_t stream) {
  unsigned long long* d = calibDev_ + size_t(buf) * kCountBins;
  const size_t bytes = sizeof(unsigned long long) * kCountBins;
  SZCHECK(smCopyAsync(d, nullptr, bytes, stream));
  const uint64_t elem = szTypeSize(r.type);
  uint64_t left = std::min(r.count, kCalibrateElems);
  for (size_t k = 0; k < r.segs.size(); ++k) {
    const SlotSegment& s = r.segs[k];
    if (left == 0) break;
    if (r.segGroups[k] != group) continue;
    const uint64_t n = std::min(left, s.bytes / elem);
    SZCHECK(launchHistogram(s.ptr, n, r.type, d, stream));
    left -= n;
  }
  return smCopyAsync(calibHost_ + size_t(buf) * kCountBins, d, bytes, stream);
}

// A launch record with its vectors' room from earlier launches, emptied.
SlotPath::Launch SlotPath::takeLaunch() {
  if (spare_.empty()) return Launch{};
  Launch l = std::move(spare_.back());
  spare_.pop_back();
  l.results.clear();
  l.ops.clear();
  l.calib.clear();
#if SZ_PROFILE
  l.blocks.clear();
#endif
  return l;
}

szResult_t SlotPath::takeTable(uint64_t bytes, uint64_t* offset) {
  if (bytes > kTableBytes)
    return szSetError(szInvalidArgument, "a group's buffer lists need %llu bytes of tables, more than %llu",
                      (unsigned long long)bytes, (unsigned long long)kTableBytes);
  if (tableHead_ + bytes > kTableBytes) {
    // The arena restarts once every launch that uses it has finished.
    while (!inflight_.empty()) SZCHECK(waitOldest());
    tableHead_ = 0;
  }
  *offset = tableHead_;
  tableHead_ += bytes;
  return szSuccess;
}

// After a launch on `stream`: the later work of its operations' other streams waits for it
// (`after`: an event recorded behind the launch, else one is recorded here).
szResult_t SlotPath::joinAfter(const std::vector<Op>& reqs, cudaStream_t stream, CUevent_st* after) {
  const std::vector<cudaStream_t> others = otherStreams(reqs, stream);
  if (!others.empty() && after == nullptr) {
    CUDACHECK(cudaEventRecord(joinEvent_, stream));
    after = joinEvent_;
  }
  for (cudaStream_t s : others) CUDACHECK(cudaStreamWaitEvent(s, after, 0));
  return szSuccess;
}

bool SlotPath::inFlight(uint64_t seq) const {
  for (const Launch& l : inflight_)
    if (l.seq == seq) return true;
  return false;
}

// Before a launch on `stream`: the work so far of the other streams of its operations, and the
// launch in flight before it on each of its channels (`chan`) where that ran on another stream.
szResult_t SlotPath::orderOnDevice(const std::vector<Op>& reqs, const std::vector<int>& chan, cudaStream_t stream) {
  for (cudaStream_t s : otherStreams(reqs, stream)) {
    CUDACHECK(cudaEventRecord(joinEvent_, s));
    CUDACHECK(cudaStreamWaitEvent(stream, joinEvent_, 0));
  }
  for (size_t k = 0; k < chan.size(); ++k) {
    const ChannelLast& c = last_[size_t(chan[k])];
    if (c.seq != 0 && c.stream != stream && inFlight(c.seq)) CUDACHECK(cudaStreamWaitEvent(stream, c.event, 0));
  }
  return szSuccess;
}

szResult_t SlotPath::enqueue(const std::vector<Op>& reqs, bool captured) {
  SZ_PROFILE_SCOPE("host slot enqueue");
  if (reqs.empty()) return szSuccess;
  if (reqs.size() > kMaxSlotOps)  // szGroupEnd refuses these before anything runs
    return szSetError(szInternalError, "slot path: %zu operations in one launch; at most %u", reqs.size(), kMaxSlotOps);
  cudaStream_t stream = reqs[0].stream;
  // Resources first, so that a failure leaves nothing taken.
  bool needScratch = false, needRecords = false;
  uint64_t tableBytes = 0;
  // Per-launch vectors are members, reused: no allocation per launch in steady state.
  std::vector<uint64_t>& slices = plan_.slices;
  std::vector<uint64_t>& sliceBytes = plan_.sliceBytes;
  slices.assign(reqs.size(), 0);
  sliceBytes.assign(reqs.size(), 0);
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Op& r = reqs[k];
    if (!channels_.reaches(r.peer) || !channels_.connected(r.peer))  // the group layer refuses or connects these
      return szSetError(szInternalError, "slot path: no connected device channel with rank %d", r.peer);
    const uint64_t bytes = r.count * szTypeSize(r.type);
    sliceBytes[k] = opSliceBytes(r.peer, bytes);
    slices[k] = opSlices(bytes, sliceBytes[k]);
    const bool frames = r.send && r.frames;
    needRecords |= frames && !deviceCodecType(r.type);  // FP16 and E4M3
    if (frames && !codebooksFit(r, sliceBytes[k]))
      return szSetError(szInternalError, "slot path: a device send's codebooks do not match its segment groups");
    if (r.segs.size() > 1) {
      tableBytes += align16(r.segs.size() * sizeof(SlotSegment)) + align16(slices[k] * sizeof(SlotSlice));
      if (frames && r.codebooks.size() > 1) tableBytes += align16(r.codebooks.size() * sizeof(SlotCodebook));
      needScratch |= (r.send ? r.frames : true) && gpuCodecType(r.type);
    }
  }
  size_t calibrations = 0;
  for (const Op& r : reqs)
    if (r.send && r.frames)
      calibrations += size_t(std::count_if(r.codebooks.begin(), r.codebooks.end(),
                                           [](const SlotGroupCodebook& g) { return g.calibrate; }));
  if (captured && calibrations > 0)
    return szSetError(szInternalError, "slot path: a captured send planned a calibration");
  while (!captured && (freeEvents_.empty() || freeResults_.size() < reqs.size() || (needScratch && scratch_.free.empty()) ||
                       freeCalib_.size() < calibrations)) {
    if (inflight_.empty()) return szSetError(szInternalError, "slot path: pools exhausted with nothing in flight");
    SZ_PROFILE_SCOPE("host slot enqueue: wait for a launch to finish");
    SZCHECK(waitOldest());
  }
  if (!captured && needRecords && records_.free.empty()) {  // every records arena is in flight: one more
    uint8_t* r = nullptr;
    CaptureModeRelaxed relaxed;  // another stream of this process may be capturing
    CUDACHECK(cudaMalloc(&r, recordsBytes()));
    records_.add(r);
  }
  // A captured launch's memory is its own, held by its graph (slot_graphs.h); the others' comes
  // from the pools, free again once the launch is reaped.
  SlotGraphs::Memory graph;
  uint64_t table = 0;
  if (captured) {
    SZCHECK(graphs_.allocate(uint32_t(reqs.size()), tableBytes, needScratch ? scratchBytes() : 0,
                             needRecords ? recordsBytes() : 0, &graph));
  } else if (tableBytes) {
    SZCHECK(takeTable(tableBytes, &table));
  }
  uint8_t* tables = captured ? graph.tables : table_ + table;
  std::vector<int>& chan = plan_.chan;
  chan.resize(reqs.size());
  for (size_t k = 0; k < reqs.size(); ++k) chan[k] = stepChannel(reqs[k].peer, reqs[k].send);
  std::vector<uint64_t>& stepOffset = plan_.stepOffset;
  std::vector<uint64_t>& stepAdvance = plan_.stepAdvance;
  planLaunchSteps(chan, slices, &stepOffset, &stepAdvance);

  Launch l = takeLaunch();
  l.tableBegin = table;
  l.tableEnd = table + tableBytes;
  l.scratch = l.records = -1;
  SlotLaunch launch{};
  launch.nops = uint32_t(reqs.size());
  launch.timeoutNs = uint64_t(cfg_.timeoutMs) * 1000000ull;
  launch.scratchStride = cfg_.sliceBytes;
  if (needScratch && captured) {
    launch.scratch = graph.scratch;
  } else if (needScratch) {
    l.scratch = scratch_.take();
    launch.scratch = scratch_.all[size_t(l.scratch)];
  }
  launch.recordsStride = recordsStride();
  if (needRecords && captured) {
    launch.records = graph.records;
  } else if (needRecords) {
    l.records = records_.take();
    launch.records = records_.all[size_t(l.records)];
  }
  // Blocks: an equal share of the launch's blocks per operation, no more than it has slices.
  const uint32_t share = std::max<uint32_t>(1, cfg_.blocks / uint32_t(reqs.size()));
  uint32_t nextBlock = 0;
  SlotOp* pool = captured ? graph.pool : opPool_;
  SlotOpResult* results = captured ? graph.results : results_;
  SlotOpAccum* accums = captured ? graph.accums : accums_;
  launch.pool = pool;
  uint64_t tableAt = 0;
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Op& r = reqs[k];
    // The operation's result slot; past the parameters' operations, its entry of the pool too.
    int slot = int(k);
    if (!captured) {
      slot = freeResults_.back();
      freeResults_.pop_back();
      l.results.push_back(slot);
    }
    launch.poolIndex[k] = uint16_t(slot);
    SlotOp& op = k < kInlineSlotOps ? launch.ops[k] : pool[slot];
    op = SlotOp{};
    const uint64_t bytes = r.count * szTypeSize(r.type);
    op.ch = channels_.channel(r.send, r.peer);
    op.stepBase = stepOffset[k];
    op.stepWord = steps_ + chan[k];
    op.stepAdvance = stepAdvance[k];
    // A send's codebooks, in the request's order (the kernel's index), each with the elements of
    // the slices that take it; codebookOf: each group's index.
    const bool frames = r.send && r.frames;
    int codebookOf[kSegmentGroups] = {};
    std::vector<SlotGroupResult> groups;
    if (frames) {
      for (size_t g = 0; g < r.codebooks.size(); ++g) {
        codebookOf[r.codebooks[g].group] = int(g);
        groups.push_back(SlotGroupResult{r.codebooks[g].group, r.codebooks[g].codebook, 0, 0, 0, {}});
        if (r.codebooks[g].calibrate) {
          l.calib.push_back(Calibration{k, g, freeCalib_.back()});
          freeCalib_.pop_back();
        }
      }
      op.codebook = slotCodebook(r.codebooks[0].codebook);
      op.ncodebooks = uint32_t(r.codebooks.size());
    }
    op.nsegs = uint32_t(std::max<size_t>(1, r.segs.size()));
    if (!r.segs.empty()) op.seg0 = r.segs[0];
    if (frames && r.segs.size() == 1) groups[0].elements = r.count;
    if (r.segs.size() > 1) {
      SlotSegment* segs = reinterpret_cast<SlotSegment*>(tables + tableAt);
      std::copy(r.segs.begin(), r.segs.end(), segs);
      tableAt += align16(r.segs.size() * sizeof(SlotSegment));
      SlotSlice* sliceOf = reinterpret_cast<SlotSlice*>(tables + tableAt);
      const uint64_t elem = szTypeSize(r.type);
      forEachSliceStart(r.segs, sliceBytes[k], slices[k], [&](uint64_t i, uint32_t seg) {
        const uint32_t c = frames ? uint32_t(codebookOf[r.segGroups[seg]]) : 0;
        sliceOf[i] = SlotSlice{seg, c};
        if (frames) groups[c].elements += std::min(sliceBytes[k], bytes - i * sliceBytes[k]) / elem;
      });
      tableAt += align16(slices[k] * sizeof(SlotSlice));
      op.segs = segs;
      op.sliceOf = sliceOf;
      if (frames && r.codebooks.size() > 1) {
        SlotCodebook* table = reinterpret_cast<SlotCodebook*>(tables + tableAt);
        for (size_t g = 0; g < r.codebooks.size(); ++g) table[g] = slotCodebook(r.codebooks[g].codebook);
        tableAt += align16(r.codebooks.size() * sizeof(SlotCodebook));
        op.codebooks = table;
      }
    }
    op.send = r.send;
    op.type = r.type;
    op.compress = r.frames;
    op.count = r.count;
    op.bytes = bytes;
    op.slices = slices[k];
    op.sliceBytes = sliceBytes[k];
    const uint32_t cap = op.ch.maxBlocks > 0 ? op.ch.maxBlocks : share;  // e.g. NCCL's kernels need theirs
    const uint32_t nblocks = uint32_t(std::min<uint64_t>(std::min(share, cap), slices[k]));
    op.blockBegin = nextBlock;
    op.blockEnd = nextBlock + nblocks;
    launch.blockEnd[k] = op.blockEnd;
    nextBlock += nblocks;
#if SZ_PROFILE
    l.blocks.push_back(nblocks);
#endif
    results[slot] = SlotOpResult{};
    op.accum = accums + slot;
    op.result = results + slot;
    l.ops.push_back(SlotCompletion{r.send, r.peer, r.type, r.count, bytes, r.frames, szSuccess, 0, 0, 0, slices[k], 0, 0,
                                   std::move(groups)});
  }
  // The other streams' work first: a calibration reads a send's buffer, which their earlier
  // work may still be writing.
  szResult_t res = orderOnDevice(reqs, captured ? std::vector<int>{} : chan, stream);
  for (size_t i = 0; i < l.calib.size() && res == szSuccess; ++i) {
    const Calibration& c = l.calib[i];
    res = calibrate(reqs[c.op], reqs[c.op].codebooks[c.entry].group, c.buf, stream);
  }
  bool launched = false;  // then the kernels (or a graph's replays) may use the launch's memory
  if (res == szSuccess) {
    SZ_PROFILE_SCOPE("host slot launch");
    res = launchSlotOps(launch, nextBlock, stream);
    launched = res == szSuccess;
  }
  if (captured) {  // its graph reports it (reap); the joined streams' later work follows it
    if (res == szSuccess) res = joinAfter(reqs, stream);
    if (res == szSuccess) return graphs_.keep(stream, std::move(l.ops));
    graphs_.drop(launched);  // the communicator fails
    return res;
  }
  if (res == szSuccess) {
    SZ_PROFILE_SCOPE("host slot event record");
    l.event = freeEvents_.back();
    if (cudaEventRecord(l.event, stream) != cudaSuccess)
      res = szSetError(szUnhandledCudaError, "slot path: cudaEventRecord failed after a launch");
    if (res == szSuccess) res = joinAfter(reqs, stream, l.event);
  }
  if (res != szSuccess) {  // the communicator cannot go on
    if (!launched) {  // else the kernels may still write the results, calibrations and scratch
      for (int s : l.results) freeResults_.push_back(s);
      for (const Calibration& c : l.calib) freeCalib_.push_back(c.buf);
      scratch_.give(l.scratch);
      records_.give(l.records);
    }
    return res;
  }
  freeEvents_.pop_back();
  l.stream = stream;
  l.seq = ++seq_;
  for (int c : chan) last_[size_t(c)] = ChannelLast{stream, l.event, l.seq};
  inflight_.push_back(std::move(l));
  return szSuccess;
}

// Whether every operation of `l` wrote its result (SlotOpResult::done): its kernels are past their
// last access to the launch's tables, scratch and slots, as after its event.
bool SlotPath::resultsWritten(const Launch& l) const {
  for (int slot : l.results)
    if (reinterpret_cast<const volatile int*>(&results_[slot].done)[0] == 0) return false;
  std::atomic_thread_fence(std::memory_order_acquire);  // the results' other fields after `done`
  return true;
}

// A finished launch's operations, kept for reap's caller; the first failure among them.
szResult_t SlotPath::finish(Launch& l) {
  for (const Calibration& cal : l.calib) {  // the histograms ran ahead of the launch, whatever its outcome
    const unsigned long long* h = calibHost_ + size_t(cal.buf) * kCountBins;
    l.ops[cal.op].groups[cal.entry].counts.assign(h, h + kCountBins);
    freeCalib_.push_back(cal.buf);
  }
  szResult_t first = szSuccess;
#if SZ_PROFILE
  uint64_t start = ~uint64_t(0), doneNs = 0;
#endif
  for (size_t k = 0; k < l.ops.size(); ++k) {
    SlotCompletion& c = l.ops[k];
    const SlotOpResult& r = results_[l.results[k]];
    completeFromResult(c, r);
#if SZ_PROFILE
    profileKernel(c, r, l.blocks[k]);
    if (r.done && r.startNs) start = std::min(start, r.startNs);
    if (r.done) doneNs = std::max(doneNs, r.doneNs);
#endif
    freeResults_.push_back(l.results[k]);
    if (c.status != szSuccess && first == szSuccess) first = failed(c, "");
    finished_.push_back(std::move(c));
  }
#if SZ_PROFILE
  // The device's idle time between two launches of a stream: the host's lateness or the launch's
  // own latency (its blocks' first stamp is taken after they load the operation).
  uint64_t& last = lastDoneNs_[l.stream];
  if (last && start != ~uint64_t(0) && start > last) SZ_PROFILE_ADD("kernel: previous launch's done to first start", start - last);
  last = doneNs;
#endif
  freeEvents_.push_back(l.event);
  scratch_.give(l.scratch);
  records_.give(l.records);
  return first;
}

// Collects every finished launch; the first failure among them. A stream's launches finish in
// the order they were enqueued, so once one of a stream's launches is running, the launches
// behind it on that stream are not asked: a reap queries one event per stream that has work in
// flight, however many launches are queued (a host that runs ahead of its kernels would
// otherwise query every queued launch at every group, and its time per operation grow with them).
szResult_t SlotPath::collect(bool query) {
  szResult_t first = szSuccess;
  std::vector<cudaStream_t>& running = running_;  // kept: no allocation per reap
  running.clear();
  for (auto it = inflight_.begin(); it != inflight_.end();) {
    if (std::find(running.begin(), running.end(), it->stream) != running.end()) {
      ++it;
      continue;
    }
    // Done when each of its operations' results says so (the kernels write them last, behind a
    // system fence): no CUDA call, which costs a few microseconds per group with several threads
    // in one context. Otherwise the event, which also reports a launch that failed.
    if (!resultsWritten(*it)) {
      if (!query) {
        running.push_back(it->stream);
        ++it;
        continue;
      }
      cudaError_t q;
      {
        CaptureModeRelaxed relaxed;  // a query while a stream of this process is captured
        q = cudaEventQuery(it->event);
      }
      if (q == cudaErrorNotReady) {
        running.push_back(it->stream);
        ++it;
        continue;
      }
      if (q != cudaSuccess) {
        cudaGetLastError();
        return szSetError(szUnhandledCudaError, "slot path: a launch failed: %s", cudaGetErrorString(q));
      }
    }
    szResult_t r = finish(*it);
    if (first == szSuccess) first = r;
    spare_.push_back(std::move(*it));
    it = inflight_.erase(it);
  }
  if (inflight_.empty()) tableHead_ = 0;
  return first;
}

szResult_t SlotPath::reap(const std::function<void(const SlotCompletion&)>& done, bool query) {
  SZ_PROFILE_SCOPE("host slot reap");
  szResult_t first = collect(query);
  std::vector<SlotCompletion> replays;
  graphs_.poll(&replays);
  for (SlotCompletion& c : replays) {
    if (c.status != szSuccess && first == szSuccess) first = failed(c, ", replayed from a CUDA graph");
    finished_.push_back(std::move(c));
  }
  std::vector<SlotCompletion>& ready = ready_;  // kept, as finished_: no allocation per reap
  ready.clear();
  ready.swap(finished_);
  for (const SlotCompletion& c : ready) done(c);
  return first;
}

}  // namespace sz
