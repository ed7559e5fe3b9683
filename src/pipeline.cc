// The slice pipeline for host buffers: OpRunner (op_runner.h) drives one operation's slices
// through CPU codec tasks and wire messages, its send side here (each slice encoded with the
// codebook of its segment group) and its receive side in op_recv.cc; Pipeline's progress thread
// steps every active runner, keeping each (peer, direction) in submission order. See pipeline.h
// for the protocol.
#include <algorithm>
#include <cstring>

#include "codec/checksum.h"
#include "base/checks.h"
#include "base/debug.h"
#include "base/param.h"
#include "src/op_runner.h"

namespace sz {
namespace {

// Whether an operation's slices travel as SplitZip frames: compressible type and codec on; or
// auto, large enough that the pipeline can hide the codec's latency, and faster end to end than
// the raw wire by the online model (auto_model.h).
bool useFrames(szComm* comm, int peer, szDataType_t type, uint64_t bytes) {
  const CommConfig& cfg = comm->cfg;
  if (!szTypeIsCompressible(type) || cfg.codec == SZ_CODEC_OFF) return false;
  if (cfg.codec == SZ_CODEC_ON) return true;
  return bytes >= uint64_t(szParamAutoMinBytes()) && comm->autoHost.useFrames(peer, type, bytes);
}

}  // namespace

uint8_t* OpRunner::contiguous(uint64_t offset, uint64_t bytes) const {
  for (const Segment& s : op_->segments) {
    if (offset < s.bytes) return offset + bytes <= s.bytes ? s.ptr + offset : nullptr;
    offset -= s.bytes;
  }
  return nullptr;
}

int OpRunner::groupAt(uint64_t offset) const {
  for (const Segment& s : op_->segments) {
    if (offset < s.bytes) return s.group;
    offset -= s.bytes;
  }
  return 0;
}

// Calls fn(segment pointer, position in the range, length) for the pieces of a byte range.
template <typename F>
void OpRunner::forPieces(uint64_t offset, uint64_t bytes, F&& fn) const {
  uint64_t pos = 0;
  for (const Segment& s : op_->segments) {
    if (pos == bytes) return;
    if (offset >= s.bytes) {
      offset -= s.bytes;
      continue;
    }
    uint64_t n = std::min<uint64_t>(s.bytes - offset, bytes - pos);
    fn(s.ptr + offset, pos, n);
    pos += n;
    offset = 0;
  }
}

// Copies a slice's bytes [off, off + bytes) of the user's segments into `buf` (gather) or back
// from it (scatter).
void OpRunner::copySlice(uint64_t off, uint64_t bytes, uint8_t* buf, bool gather) {
  forPieces(off, bytes, [&](uint8_t* p, uint64_t pos, uint64_t n) {
    if (gather) memcpy(buf + pos, p, n);
    else memcpy(p, buf + pos, n);
  });
}

// Gives slot `s` a pooled payload buffer, taken only when the slice needs one (frames, or raw
// bytes to gather).
szResult_t OpRunner::ensureSlot(Slot& s, bool needPayload) {
  if (needPayload && s.frame == nullptr) SZCHECK(pipe_->takeBuffer(&s.frame));
  return szSuccess;
}

void OpRunner::finish(szResult_t res) {
  if (finished_) return;
  finished_ = true;
  TRACE(SZ_P2P, "rank %d: %s rank %d seq %u finished: %d (%llu of %llu slices)", comm_->rank,
        op_->send ? "send to" : "recv from", op_->peer, seq_, (int)res, (unsigned long long)completed_,
        (unsigned long long)numSlices_);
  allPosted_ = true;
  for (Slot& s : slots_) {  // codec work must not outlive the buffers it uses
    if (s.hostRunning) s.hostTask.wait();
    if (s.frame) pipe_->returnBuffer(s.frame);
    s.frame = nullptr;
  }
  if (res != szSuccess) {  // nothing more lands in this operation's buffers; the peer learns it now
    std::string why = szGetLastError(nullptr);  // this thread's message of `res`
    for (auto [wire, wireComm] : {std::pair{comm_->wire, comm_->wireComm}, std::pair{comm_->desc, comm_->descComm},
                                  std::pair{comm_->ack, comm_->ackComm}})
      wire->failPeer(wireComm, op_->peer, res, why.c_str());
  }
  if (res != szSuccess) commFail(comm_, res);
  std::lock_guard<std::mutex> lock(wait_->mu);
  if (res != szSuccess) op_->error = szGetLastError(nullptr);  // this thread's message, for the caller
  op_->result = res;
  op_->done = true;
  wait_->cv.notify_all();
}

// `mayPost`: this runner is the first of its (peer, direction) that has not posted all its
// messages; a runner starts only then, so messages follow the submission order.
// An operation that makes no progress for the timeout fails with szTimeout. The control
// channels wait without a limit of their own (an acknowledgement may come long after the
// operation started, while its slices move); the data wire times out its own requests by the
// bytes they move, so an operation with slices on the wire is not late here.
bool OpRunner::step(bool mayPost) {
  if (finished_) return false;
  if (!started_ && !mayPost) return false;
  bool moved = op_->send ? stepSend() : stepRecv();
  auto now = Clock::now();
  if (finished_) return true;
  bool onWire = dataError_ == szSuccess &&
                std::any_of(slots_.begin(), slots_.end(), [](const Slot& x) { return x.hdrReq.req || x.payReq.req; });
  if (moved || onWire) {
    lastMoved_ = now;
  } else if (now - lastMoved_ > std::chrono::milliseconds(comm_->cfg.timeoutMs)) {
    finish(szSetError(szTimeout, "rank %d: %s %s rank %d made no progress for %d ms", comm_->rank, op_->api,
                      op_->send ? "to" : "from", op_->peer, comm_->cfg.timeoutMs));
    return true;
  }
  return moved;
}

// Turns slice `slice` into its payload in slot `s`: a frame (encode) or raw bytes.
szResult_t OpRunner::startSlice(Slot& s, uint64_t slice) {
  s.slice = int64_t(slice);
  s.ready = false;
  uint64_t off = sliceOffset(slice), bytes = sliceBytes(slice), count = bytes / elemBytes_;
  uint8_t* src = contiguous(off, bytes);
  SZCHECK(ensureSlot(s, frames_ || src == nullptr));
  if (!frames_) {  // raw slice: sent from the user's memory when contiguous
    if (src == nullptr) copySlice(off, bytes, s.frame, true);
    s.payloadBytes = bytes;
    s.ready = true;
    return szSuccess;
  }
  if (src == nullptr) {
    s.staging.resize(bytes);
    copySlice(off, bytes, s.staging.data(), true);
    src = s.staging.data();
  }
  szComm* comm = comm_;
  szDataType_t type = op_->type;
  uint8_t* frame = s.frame;
  size_t cap = pipe_->slotBytes();
  uint64_t* out = &s.payloadBytes;
  s.hostRunning = true;
  s.group = groupAt(off);
  const int peer = op_->peer, group = s.group;
  const CodebookDrift::Plan plan = comm_->codebooks->plan(peer, type, group);
  szCodebook_t* cb = &s.codebook;
  s.hostTask = runTask([comm, src, count, type, plan, peer, group, frame, cap, out, cb]() {
    auto t0 = Clock::now();
    size_t bytesOut = 0;
    szResult_t r = comm->codebooks->encodeHost(peer, type, plan, src, count, frame, cap, &bytesOut, cb, group);
    *out = bytesOut;
    std::lock_guard<std::mutex> lock(comm->statsMu);
    comm->stats.encodeSeconds += seconds(t0, Clock::now());
    return r;
  });
  return szSuccess;
}

szResult_t OpRunner::pollTask(Slot& s, bool* finishedTask) {
  *finishedTask = false;
  szResult_t res = szSuccess;
  if (s.hostRunning && s.hostTask.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    s.hostRunning = false;
    res = s.hostTask.get();
    *finishedTask = true;
  }
  return res;
}

szResult_t OpRunner::postSend(Slot& s) {
  const szWire* w = comm_->wire;
  uint64_t bytes = sliceBytes(uint64_t(s.slice));
  const uint8_t* payload = s.frame;
  if (directRaw() && contiguous(sliceOffset(uint64_t(s.slice)), bytes))
    payload = contiguous(sliceOffset(uint64_t(s.slice)), bytes);
  if (frames_) {
    szFrameInfo_t info;
    if (szFrameGetInfo(payload, s.payloadBytes, &info) == szSuccess) {
      comm_->codebooks->sent(op_->peer, info, s.codebook, s.group);
      std::lock_guard<std::mutex> lock(comm_->statsMu);
      comm_->stats.escapes += info.escapeCount;
      comm_->stats.compressedSlices += info.raw ? 0 : 1;
      comm_->compressedElements += info.raw ? 0 : info.count;
    }
  }
  s.hdr = SliceHeader{kSliceMagic, seq_, uint64_t(s.slice), s.payloadBytes, 0, 0};
  if (comm_->cfg.crc) s.hdr.crc = crc32c(payload, s.payloadBytes);
  SZCHECK(w->isend(comm_->wireComm, op_->peer, &s.hdr, sizeof(s.hdr), nullptr, &s.hdrReq.req));
  SZCHECK(w->isend(comm_->wireComm, op_->peer, payload, s.payloadBytes, nullptr, &s.payReq.req));
  s.posted = Clock::now();
  TRACE(SZ_P2P, "rank %d: send to rank %d seq %u: slice %lld posted, %llu bytes", comm_->rank, op_->peer, seq_,
        (long long)s.slice, (unsigned long long)s.payloadBytes);
  std::lock_guard<std::mutex> lock(comm_->statsMu);
  comm_->stats.rawBytes += bytes;
  comm_->stats.wireBytes += sizeof(SliceHeader) + s.payloadBytes;
  comm_->stats.slices++;
  return szSuccess;
}

bool OpRunner::stepSend() {
  bool moved = false;
  if (!started_) {
    started_ = true;
    frames_ = useFrames(comm_, op_->peer, op_->type, op_->count * elemBytes_);
    startTime_ = Clock::now();
    TRACE(SZ_P2P, "rank %d: send to rank %d seq %u: %llu elements of type %d, %llu slices, %s", comm_->rank,
          op_->peer, seq_, (unsigned long long)op_->count, (int)op_->type, (unsigned long long)numSlices_,
          frames_ ? "frames" : "raw");
    desc_ = OpDesc{kOpMagic, kProtocolVersion, seq_, frames_ ? 1u : 0u, op_->count, sliceElems_,
                   numSlices_, uint32_t(op_->type), comm_->cfg.crc ? 1u : 0u};
    if (failed(comm_->desc->isend(comm_->descComm, op_->peer, &desc_, sizeof(desc_), nullptr, &descReq_.req)) ||
        failed(comm_->ack->irecv(comm_->ackComm, op_->peer, &ack_, sizeof(ack_), nullptr, &ackReq_.req)))
      return true;
    moved = true;
  }
  if (failed(descReq_.poll(comm_->desc, &moved)) || failed(ackReq_.poll(comm_->ack, &moved))) return true;
  if (dataError_ != szSuccess && !ackReq_.done) return moved;  // only the acknowledgement can still come
  for (Slot& s : slots_) {
    if (dataError_ != szSuccess) break;
    if (failedData(s.hdrReq.poll(comm_->wire, &moved)) || failedData(s.payReq.poll(comm_->wire, &moved))) break;
    bool taskDone = false;
    if (failed(pollTask(s, &taskDone))) return true;
    if (taskDone) {
      s.ready = true;
      moved = true;
    }
    if (s.slice >= 0 && s.hdrReq.done && s.payReq.done) {  // both messages left: the slot is free
      std::lock_guard<std::mutex> lock(comm_->statsMu);
      comm_->stats.wireSeconds += seconds(s.posted, Clock::now());
      s.slice = -1;
      s.hdrReq.reset();
      s.payReq.reset();
      ++completed_;
    }
    if (s.slice < 0 && nextStart_ < numSlices_) {
      if (failed(startSlice(s, nextStart_++))) return true;
      moved = true;
    }
  }
  // Slices are posted in order: the data channel's messages follow the slice order.
  while (nextPost_ < numSlices_ && dataError_ == szSuccess) {
    Slot* next = nullptr;
    for (Slot& s : slots_)
      if (s.slice == int64_t(nextPost_) && s.ready) next = &s;
    if (next == nullptr) break;
    if (failedData(postSend(*next))) break;
    next->ready = false;
    ++nextPost_;
    moved = true;
  }
  if (finished_) return true;
  if (nextPost_ == numSlices_) allPosted_ = true;
  if (ackReq_.done) {
    if (ackReq_.bytes != sizeof(ack_) || ack_.magic != kAckMagic || ack_.seq != seq_) {
      finish(szSetError(szCorruptFrame, "rank %d: bad acknowledgement from rank %d", comm_->rank, op_->peer));
    } else if (ack_.status != szSuccess) {
      finish(szSetError(ack_.status == szInvalidUsage ? szInvalidUsage : szRemoteError,
                        "rank %d: %s of %llu elements of %s to rank %d: the receiver %s "
                        "(a receive of %llu elements of %s)",
                        comm_->rank, op_->api, (unsigned long long)op_->count, szTypeName(op_->type), op_->peer,
                        ack_.status == szInvalidUsage ? "does not match" : "failed",
                        (unsigned long long)ack_.count, szTypeName(ack_.type)));
    } else if (dataError_ != szSuccess) {
      finish(szSetError(dataError_, "%s", dataWhy_.c_str()));
    } else if (completed_ == numSlices_ && descReq_.done) {
      uint64_t total = op_->count * elemBytes_;
      if (comm_->cfg.codec == SZ_CODEC_AUTO && total >= uint64_t(szParamAutoMinBytes()))
        comm_->autoHost.record(op_->peer, op_->type, total, frames_, seconds(startTime_, Clock::now()), 0);
      finish(szSuccess);
    }
    return true;
  }
  return moved;
}


Pipeline::Pipeline(szComm* comm, size_t slotBytes)
    : comm_(comm), slotBytes_(slotBytes), thread_([this] { progressLoop(); }) {}

Pipeline::~Pipeline() {
  abort();
  for (uint8_t* p : free_) delete[] p;
}

szResult_t Pipeline::takeBuffer(uint8_t** p) {
  {
    std::lock_guard<std::mutex> lock(poolMu_);
    if (!free_.empty()) {
      *p = free_.back();
      free_.pop_back();
      return szSuccess;
    }
  }
  *p = new (std::nothrow) uint8_t[slotBytes_];  // not zero-filled: every byte used is written first
  return *p ? szSuccess : szSetError(szSystemError, "cannot allocate a %zu-byte slice buffer", slotBytes_);
}

void Pipeline::returnBuffer(uint8_t* p) {
  std::lock_guard<std::mutex> lock(poolMu_);
  free_.push_back(p);
}

void Pipeline::abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<GroupWait> Pipeline::submit(const std::vector<std::shared_ptr<Op>>& ops) {
  auto wait = std::make_shared<GroupWait>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& op : ops) {  // sequence numbers follow submission order per (peer, direction)
      auto r = std::make_shared<OpRunner>(comm_, this, op, seqs_[std::make_pair(op->peer, op->send)]++, wait);
      if (stop_) r->fail(szSetError(szInvalidUsage, "communicator is aborted"));
      else incoming_.push_back(r);
    }
  }
  cv_.notify_all();
  return wait;
}

szResult_t Pipeline::wait(const std::shared_ptr<GroupWait>& handle, const std::vector<std::shared_ptr<Op>>& ops) {
  std::unique_lock<std::mutex> lock(handle->mu);
  handle->cv.wait(lock, [&] {
    for (const auto& op : ops)
      if (!op->done) return false;
    return true;
  });
  for (const auto& op : ops)  // the progress thread's message becomes the caller's last error
    if (op->result != szSuccess) return szSetError(op->result, "%s", op->error.c_str());
  return szSuccess;
}

bool Pipeline::idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return incoming_.empty() && activeCount_ == 0;
}

void Pipeline::progressLoop() {
  // Per (peer, direction): runners in submission order; only the first may post messages.
  std::map<std::pair<int, bool>, std::deque<std::shared_ptr<OpRunner>>> posting;
  std::vector<std::shared_ptr<OpRunner>> active;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active.empty()) cv_.wait(lock, [&] { return stop_ || !incoming_.empty(); });
      if (stop_) break;
      while (!incoming_.empty()) {
        auto r = incoming_.front();
        incoming_.pop_front();
        posting[std::make_pair(r->op().peer, r->op().send)].push_back(r);
        active.push_back(r);
      }
      activeCount_ = active.size();
    }
    bool moved = false;
    for (auto& r : active) {
      auto& q = posting[std::make_pair(r->op().peer, r->op().send)];
      moved |= r->step(!q.empty() && q.front() == r);
      while (!q.empty() && q.front()->allPosted()) q.pop_front();
    }
    active.erase(std::remove_if(active.begin(), active.end(), [](const auto& r) { return r->finished(); }),
                 active.end());
    {
      std::lock_guard<std::mutex> lock(mu_);
      activeCount_ = active.size();
    }
    if (!moved) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  for (auto& r : active) r->fail(szSetError(szRemoteError, "communicator aborted with the operation outstanding"));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : incoming_) r->fail(szRemoteError);
  incoming_.clear();
}

}  // namespace sz
