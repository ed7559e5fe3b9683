// Host buffers on the slot protocol (src/proto/host_slots.h).
#include "src/proto/host_slots.h"

#include <algorithm>
#include <functional>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>

#include "base/auth.h"
#include "base/checks.h"
#include "codec/checksum.h"
#include "codec/dtype.h"
#include "src/proto/slot_seal.h"
#include "src/proto/slot_slices.h"
#include "transport/slot_words.h"

namespace sz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One operation of a run, shared by the threads working on it.
struct OpState {
  const Op* req = nullptr;
  int self = 0;  // this rank
  SlotChannel ch{};
  uint64_t stepBase = 0, slices = 0, sliceBytes = 0, bytes = 0, elem = 1;
  std::vector<uint32_t> sliceSeg;  // per slice: the segment holding its first byte
  std::atomic<uint64_t> next{0};   // the next slice to claim (in order); kClosed once finished
  std::atomic<uint64_t> finished{0};
  std::atomic<int> status{0};
  std::mutex mu;  // the tallies and the message
  std::string error;
  SlotCompletion c{};
  std::vector<SlotGroupResult> groups;  // send frames: per segment group that slices took
  bool closed() const;  // finished: no slice is claimed any more
};

constexpr uint64_t kClosed = ~uint64_t(0);

bool OpState::closed() const { return next.load() == kClosed; }

// Thread-local gather and scatter buffer of a slice that spans segments.
thread_local std::vector<uint8_t> tScratch;

const char* describe(int status) {
  switch (status) {
    case szInvalidUsage: return "the peer's matching call has another count or type";
    case szTimeout: return "no progress for the timeout (the peer did not post its matching call, or stopped)";
    case szRemoteError: return "the peer failed";
    case szCorruptFrame: return "a slot held a corrupt frame or header";
    default: return "failed";
  }
}

// Stops the channel on this side and tells the peer, as the kernels' failChannel does: a mismatch
// verdict travels as itself, any other failure as szRemoteError.
void failChannel(const SlotChannel& ch, int code) {
  slotRaiseError(ch.localError, code);
  slotRaiseError(ch.peerError, code == szInvalidUsage ? szInvalidUsage : szRemoteError);
}

}  // namespace

struct HostSlots::Run {
  // The run's requests, its own copy: a pool thread may still be between two checks of a closed
  // operation when the caller returns (run() does not wait for the pool to leave the run), and
  // reads nothing of the caller's after that.
  std::vector<Op> reqs;
  std::vector<std::unique_ptr<OpState>> ops;
  std::atomic<int> left{0};
  std::atomic<int64_t> lastMove{0};  // steady clock, ns
  Clock::time_point start;
  // The pool threads join: from the start where sends encode frames, else at the first frame a
  // receive meets (a receive that may decode gets raw slices whenever its sender chose raw, and
  // copying those takes no more than the caller's thread).
  std::atomic<bool> pool{false};
  std::function<void()> wakePool;  // sets `pool` and wakes the pool threads
  // A thread with nothing to do waits here between polls; the thread that finishes the run's last
  // operation wakes them all, so the caller returns at once instead of sleeping out its poll
  // (20 us, 60-100 us with the kernel's timer slack).
  std::mutex idleMu;
  std::condition_variable idle;
};

namespace {

int64_t nowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

// Fails `o` with `code` and `message` (the first failure wins; an operation that finished stays
// finished) and stops its channel.
void failOp(OpState& o, int code, const std::string& message) {
  std::lock_guard<std::mutex> lock(o.mu);
  if (o.closed() || o.status.load() != 0) return;
  o.status = code;
  o.error = message;
  failChannel(o.ch, code);
}

std::string opName(const OpState& o) {
  const Op& r = *o.req;
  char buf[160];
  snprintf(buf, sizeof(buf), "%s of %llu elements of %s %s rank %d", r.api, (unsigned long long)r.count,
           szTypeName(r.type), r.send ? "to" : "from", r.peer);
  return buf;
}

}  // namespace

ChannelSource proxyChannelSource(SlotProxy* proxy, int chan) {
  return [proxy, chan](const std::vector<int>& peers, std::vector<SlotChannel>* channels) {
    channels->assign(2 * peers.size(), SlotChannel{});
    for (size_t i = 0; i < peers.size(); ++i) {
      SZCHECK(proxy->channel(chan, peers[i], 1, &(*channels)[2 * i]));
      SZCHECK(proxy->channel(chan, peers[i], 0, &(*channels)[2 * i + 1]));
    }
    return szSuccess;
  };
}

SlotsFlushed proxyFlushed(SlotProxy* proxy, int chan) {
  return [proxy, chan](int peer, uint64_t steps) { return proxy->flushed(chan, peer, steps); };
}

szResult_t HostSlots::create(SlotProxy* proxy, const ChannelSource& source, const SlotsFlushed& flushed, int rank,
                             int nranks, const HostSlotConfig& config, CodebookDrift* codebooks,
                             std::unique_ptr<HostSlots>* out) {
  std::unique_ptr<HostSlots> h(new HostSlots());
  h->proxy_ = proxy;
  h->flushed_ = flushed;
  h->rank_ = rank;
  h->nranks_ = nranks;
  h->cfg_ = config;
  h->cfg_.workers = std::max(1, config.workers);
  h->codebooks_ = codebooks;
  std::vector<uint64_t> sliceBytes(size_t(nranks), config.sliceBytes);
  sliceBytes[size_t(rank)] = 0;
  h->channels_.init(source, rank, std::move(sliceBytes));
  *out = std::move(h);
  return szSuccess;
}

HostSlots::~HostSlots() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : pool_) t.join();
}

namespace {

// A send's slice `i`: its slot is free (credited). Encodes or copies it into the slot, writes the
// header and publishes it.
void sendSlice(OpState& o, uint64_t i, CodebookDrift* codebooks, const HostSlotConfig& cfg) {
  const bool crc = cfg.crc;
  const Op& r = *o.req;
  const SlotChannel& ch = o.ch;
  const uint64_t step = o.stepBase + i;
  if (cfg.macKey && step >= kSealMaxStep) {  // its nonce would repeat an earlier slot's
    failOp(o, szInternalError, opName(o) + ": the channel's steps ran out for SZ_AUTH_DATA's nonces");
    return;
  }
  const uint32_t j = slotOf(step, ch.nslots);
  uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  uint8_t* payload = slot + kSlotHeaderBytes;
  const uint64_t off = i * o.sliceBytes, n = std::min(o.sliceBytes, o.bytes - off);
  const uint32_t first = o.sliceSeg.empty() ? 0 : o.sliceSeg[i];
  bool frame = r.frames && n > 0 && r.compressible();
  // The slice in the caller's buffer, or null when it spans segments (then gathered into `src`).
  const uint8_t* const inCaller = n > 0 ? slicePlace(r.segs[first], off, n) : nullptr;
  const uint8_t* src = inCaller;
  if (n > 0 && inCaller == nullptr) {  // a slice across segments: gathered (straight into the slot when raw)
    uint8_t* to = frame ? (tScratch.resize(n), tScratch.data()) : payload;
    forEachPiece(r.segs, first, off, n, [&](const uint8_t* p, uint64_t pos, uint64_t len) { memcpy(to + pos, p, len); });
    src = to;
  }
  uint64_t bytes = n;
  uint32_t flags = 0;
  const int group = r.segGroups.empty() ? 0 : r.segGroups[first];
  szCodebook_t cb{};
  szFrameInfo_t info{};
  size_t got = 0;
  double codecSeconds = 0;
  if (frame) {
    const CodebookDrift::Plan plan = codebooks->plan(r.peer, r.type, group);
    const Clock::time_point t0 = Clock::now();
    szResult_t res = codebooks->encodeHost(r.peer, r.type, plan, src, n / o.elem, payload, ch.stride - kSlotHeaderBytes,
                                           &got, &cb, group);
    if (res == szSuccess) res = szFrameGetInfo(payload, got, &info);
    if (res != szSuccess) {
      failOp(o, res, opName(o) + ": encoding a slice failed: " + szGetLastError(nullptr));
      return;
    }
    codecSeconds = since(t0);
    // Counted by the drift whether it travels as a frame or not: a frame the codec stored raw
    // (its codebook missed the data) travels as a raw slice, and counts as all escapes. Left
    // uncounted, a slice raw under a hold left no window to end the hold, and the data stayed
    // raw for good (issue 33: E4M3 shifted off its codebook, 4 runs in 30).
    codebooks->sent(r.peer, info, cb, group);
    frame = got <= n;  // a frame never outgrows its raw slice (a receive may land it in its place)
  }
  if (frame) {
    bytes = got;
    flags = kSlotFrame;
    std::lock_guard<std::mutex> lock(o.mu);
    o.c.codecSeconds += codecSeconds;
    o.c.escapes += info.escapeCount;
    o.c.compressedSlices += info.raw ? 0 : 1;
    auto g = std::find_if(o.groups.begin(), o.groups.end(), [group](const SlotGroupResult& x) { return x.group == group; });
    if (g == o.groups.end()) g = o.groups.insert(o.groups.end(), SlotGroupResult{group, cb, 0, 0, 0, {}});
    g->codebook = cb;
    g->elements += n / o.elem;
    g->compressedElements += info.raw ? 0 : n / o.elem;
    g->escapes += info.escapeCount;
  }
  // A raw slice of the caller's buffer stays there where the channel allows it (the proxy ships
  // header and payload as one message; releasePayloads guards a failure), else is copied in.
  const bool zeroCopy = !frame && inCaller != nullptr && ch.payloads != nullptr && cfg.macKey == nullptr;
  if (!frame && !zeroCopy && src != payload && n > 0) memcpy(payload, src, n);
  if (zeroCopy) payload = const_cast<uint8_t*>(src);
  if (ch.payloads != nullptr) __atomic_store_n(&ch.payloads[j].data, zeroCopy ? payload : nullptr, __ATOMIC_RELAXED);
  SlotHeader* h = reinterpret_cast<SlotHeader*>(slot);
  h->bytes = bytes;
  h->opCount = r.count;
  h->opSlices = o.slices;
  h->opType = uint32_t(r.type);
  h->step = step;
  h->version = kSlotProtocolVersion;
  h->crc = crc ? crc32c(payload, bytes) : 0;
  h->flags = flags | (crc ? kSlotCrc : 0) | (cfg.macKey ? kSlotMac : 0) | (cfg.encrypt ? kSlotSealed : 0);
  if (cfg.macKey) sealSlot(cfg.macKey, h, payload, o.self, r.peer, uint32_t(cfg.channel));
  __atomic_store_n(&ch.signals[j].bytes, bytes, __ATOMIC_RELAXED);
  slotStoreRelease(&ch.signals[j].ready, readyValue(step));
  std::lock_guard<std::mutex> lock(o.mu);
  o.c.wireBytes += bytes;
}

// Where a receive's raw slices from the second on may land, in its buffers (SlotProxy::landInto):
// each contiguous slice's place, none for a slice across segments.
std::vector<SlotLanding> landings(const OpState& o) {
  std::vector<SlotLanding> places(size_t(o.slices - 1), SlotLanding{nullptr, 0});
  for (uint64_t k = 1; k < o.slices; ++k) {
    const uint64_t off = k * o.sliceBytes, n = std::min(o.sliceBytes, o.bytes - off);
    uint8_t* const place = n > 0 ? slicePlace(o.req->segs[o.sliceSeg.empty() ? 0 : o.sliceSeg[k]], off, n) : nullptr;
    if (place != nullptr) places[size_t(k - 1)] = SlotLanding{place, n};
  }
  return places;
}

// A receive's slice `i`: its slot has landed. Checks the header, decodes or copies the payload
// into the user's buffers and returns the slot. True if it held a frame. Its payload may have
// landed in its place in the user's buffer (the proxy's zero-copy landing): a raw one is then
// where it belongs, a frame is decoded from a copy. A first slice that arrived raw lets the
// slices after it land in place (the sender chose raw for the operation).
bool recvSlice(OpState& o, uint64_t i, SlotProxy* proxy, const HostSlotConfig& cfg) {
  const bool crc = cfg.crc;
  const Op& r = *o.req;
  const SlotChannel& ch = o.ch;
  const uint64_t step = o.stepBase + i;
  const uint32_t j = slotOf(step, ch.nslots);
  uint8_t* slot = ch.ring + uint64_t(j) * ch.stride;
  uint8_t* const inPlace = ch.payloads != nullptr ? __atomic_load_n(&ch.payloads[j].data, __ATOMIC_RELAXED) : nullptr;
  uint8_t* payload = inPlace != nullptr ? inPlace : slot + kSlotHeaderBytes;
  const uint64_t off = i * o.sliceBytes, n = std::min(o.sliceBytes, o.bytes - off);
  const uint32_t first = o.sliceSeg.empty() ? 0 : o.sliceSeg[i];
  SlotHeader h;
  memcpy(&h, slot, sizeof(h));  // read once: the checks below hold for this copy
  // The payload the header names must be what landed (the proxy wrote its size in the signal);
  // with SZ_AUTH_DATA the MAC is checked next, before any other field of the header is believed.
  if (h.bytes != __atomic_load_n(&ch.signals[j].bytes, __ATOMIC_RELAXED) || h.bytes > ch.stride - kSlotHeaderBytes) {
    failOp(o, szCorruptFrame, opName(o) + ": slot of step " + std::to_string(step) + " has a bad header");
    return false;
  }
  // A frame (whose escapes the decoder bounds-checks, then follows) or a checksummed or sealed
  // payload is checked and used from a copy the peer cannot reach; a raw unchecked one is the
  // peer's bytes however they change.
  if (ch.peerWritable && ((h.flags & kSlotFrame) || cfg.macKey || crc)) {
    thread_local std::vector<uint8_t> landed;
    landed.resize(h.bytes);
    memcpy(landed.data(), payload, h.bytes);
    payload = landed.data();
  }
  // The slot is this side's until its credit returns: it is decrypted where it landed (or in
  // the copy).
  if (cfg.macKey && (!(h.flags & kSlotMac) || bool(h.flags & kSlotSealed) != cfg.encrypt ||
                     !openSlot(cfg.macKey, h, payload, r.peer, o.self, uint32_t(cfg.channel)))) {
    failOp(o, szCorruptFrame, opName(o) + ": slice " + std::to_string(i) + " fails its MAC (" +
                                  (cfg.encrypt ? "SZ_ENCRYPT" : "SZ_AUTH_DATA") + ")");
    return false;
  }
  int e = checkSlotHeader(h, step, r.count, r.type, o.slices, n, ch.stride - kSlotHeaderBytes);
  if (e == szInvalidUsage) {
    failOp(o, e, opName(o) + " does not match its send of " + std::to_string(h.opCount) + " elements of " +
                     szTypeName(int(h.opType)));
    return false;
  }
  if (e != 0) {
    failOp(o, e, opName(o) + ": slot of step " + std::to_string(step) + " has a bad header");
    return false;
  }
  if (crc && (!(h.flags & kSlotCrc) || crc32c(payload, h.bytes) != h.crc)) {
    failOp(o, szCorruptFrame, opName(o) + ": slice " + std::to_string(i) + " fails its CRC32C");
    return false;
  }
  uint8_t* const place = n > 0 ? slicePlace(r.segs[first], off, n) : nullptr;  // null: across segments
  const bool contiguous = place != nullptr;
  auto scatter = [&](const uint8_t* from) {
    forEachPiece(r.segs, first, off, n, [&](uint8_t* p, uint64_t pos, uint64_t len) { memcpy(p, from + pos, len); });
  };
  if (inPlace != nullptr && (inPlace != place || h.bytes > n)) {
    failOp(o, szInternalError, opName(o) + ": slice " + std::to_string(i) + " landed outside its place");
    return false;
  }
  if (inPlace != nullptr && (h.flags & kSlotFrame)) {  // decoded into the place it lies in: from a copy
    thread_local std::vector<uint8_t> frameCopy;
    frameCopy.assign(payload, payload + h.bytes);
    payload = frameCopy.data();
  }
  if (h.flags & kSlotFrame) {
    uint8_t* dst = contiguous ? place : (tScratch.resize(n), tScratch.data());
    size_t count = 0;
    szDataType_t type = r.type;
    const Clock::time_point t0 = Clock::now();
    szResult_t res = szDecode(payload, h.bytes, dst, n, &count, &type);
    if (res != szSuccess || count != n / o.elem || type != r.type) {
      failOp(o, szCorruptFrame, opName(o) + ": slice " + std::to_string(i) + " holds a bad frame" +
                                    (res != szSuccess ? std::string(": ") + szGetLastError(nullptr) : std::string()));
      return false;
    }
    if (!contiguous && n > 0) scatter(dst);
    {
      std::lock_guard<std::mutex> lock(o.mu);
      o.c.codecSeconds += since(t0);
      o.c.compressedSlices += 1;
    }
  } else if (contiguous) {
    if (inPlace == nullptr) memcpy(place, payload, n);
  } else if (n > 0) {
    scatter(payload);
  }
  if (i == 0 && !(h.flags & kSlotFrame) && o.slices > 1 && ch.payloads != nullptr && cfg.macKey == nullptr)
    proxy->landInto(cfg.channel, r.peer, step + 1, landings(o));
  slotStoreRelease(&ch.credits[j], creditAfter(step, ch.nslots));
  std::lock_guard<std::mutex> lock(o.mu);
  o.c.wireBytes += h.bytes;
  return (h.flags & kSlotFrame) != 0;
}

// Whether slice `i` of `o` can start: its slot is credited (send) or has landed (receive).
bool sliceReady(const OpState& o, uint64_t i) {
  const uint64_t step = o.stepBase + i;
  const uint32_t j = slotOf(step, o.ch.nslots);
  if (o.req->send) return slotFree(slotLoadAcquire(&o.ch.credits[j]), step);
  return slotLoadAcquire(&o.ch.signals[j].ready) == readyValue(step);
}

// Whether every slice of `o` is credited: a send's by its receiver (the slots are free again), a
// receive's by this side (each landed, was checked and went to the caller's buffers). The last
// ring's worth of steps tells: an earlier step's slot was credited before a later step used it.
bool credited(const OpState& o) {
  const uint64_t end = o.stepBase + o.slices;
  for (uint64_t step = end - std::min<uint64_t>(o.slices, o.ch.nslots); step < end; ++step)
    if (slotLoadAcquire(&o.ch.credits[slotOf(step, o.ch.nslots)]) < creditAfter(step, o.ch.nslots)) return false;
  return true;
}

// Finishes `o` once it is through: a send when the receiver has drained its last slots, a
// receive when its credits have left; a failed one once no thread works on its slices and its
// error has left (bounded: the peer may be gone). Closing takes `next`, so no slice is claimed
// after the caller may have returned. True if it finished now.
bool finish(HostSlots::Run& run, OpState& o, SlotProxy* proxy, const SlotsFlushed& flushed, const HostSlotConfig& cfg) {
  uint64_t claimed = o.next.load();
  if (claimed == kClosed || o.finished.load() != claimed) return false;
  const int status = o.status.load();
  if (status == 0) {
    if (claimed < o.slices) return false;
    if (o.req->send) {
      if (!credited(o)) return false;
    } else if (!flushed(o.req->peer, o.stepBase + o.slices)) {
      return false;
    }
  } else if (!flushed(o.req->peer, 0) &&
             nowNs() - run.lastMove.load() < int64_t(cfg.timeoutMs) * 1000000) {
    return false;
  }
  // A failed operation's buffers go back to its caller: the proxy lets go of them first.
  if (status != 0 && o.ch.payloads != nullptr) proxy->releasePayloads(cfg.channel, o.req->peer, o.req->send, o.stepBase);
  {
    std::lock_guard<std::mutex> lock(o.mu);  // closing and failing exclude each other
    if (o.status.load() != status || !o.next.compare_exchange_strong(claimed, kClosed)) return false;
    o.c.seconds = since(run.start);
  }
  if (run.left.fetch_sub(1) == 1) {
    { std::lock_guard<std::mutex> lock(run.idleMu); }  // a thread between its check and its wait sees it
    run.idle.notify_all();
  }
  return true;
}

// Works on `run` until every operation has finished: claims the next slice of an operation whose
// slot is ready, and between them drives the proxy. Every thread of the run runs this; pool
// threads (`caller` false) back off sooner when nothing is ready, leaving the cores to the caller
// and the wire.
void work(HostSlots::Run& run, SlotProxy* proxy, const SlotsFlushed& flushed, const HostSlotConfig& cfg,
          CodebookDrift* codebooks, bool caller) {
  int idle = 0;
  while (run.left.load() > 0) {
    bool moved = false;
    for (auto& op : run.ops) {
      OpState& o = *op;
      if (o.closed()) continue;
      const uint64_t i = o.next.load();
      if (o.status.load() == 0 && i < o.slices && sliceReady(o, i)) {
        uint64_t expect = i;
        if (o.next.compare_exchange_strong(expect, i + 1)) {
          if (o.req->send) sendSlice(o, i, codebooks, cfg);
          else if (recvSlice(o, i, proxy, cfg) && caller && !run.pool.load() && run.wakePool) run.wakePool();
          o.finished.fetch_add(1);
          moved = true;
        }
      }
      moved |= finish(run, o, proxy, flushed, cfg);
      // An error word stops the operation unless every slice is credited: a peer that closes its
      // connections after its last credit left fails this side's proxy after it delivered them,
      // and finish() then closes the operation (a broken peer's credits count as flushed). Not
      // finish()'s verdict: between it and this check another thread of the run may have driven
      // the proxy into the peer's close, or still be between the last credit and `finished`.
      // The word is read before the credits, so an error raised after the last credit was
      // written finds it written.
      if (!o.closed() && o.status.load() == 0) {
        const int e = slotLoadError(o.ch.localError);
        if (e != 0 && !credited(o)) failOp(o, e, opName(o) + ": " + describe(e));
      }
    }
    if (proxy->progress()) moved = true;
    if (moved) {
      run.lastMove = nowNs();
      idle = 0;
      continue;
    }
    if (nowNs() - run.lastMove.load() > int64_t(cfg.timeoutMs) * 1000000) {
      for (auto& op : run.ops)
        if (!op->closed())
          failOp(*op, szTimeout, opName(*op) + ": made no progress for " + std::to_string(cfg.timeoutMs) + " ms");
      run.lastMove = nowNs();
      continue;
    }
    if (++idle < (caller ? 64 : 8)) continue;
    if (idle < (caller ? 1024 : 16)) {
      std::this_thread::yield();
    } else {
      std::unique_lock<std::mutex> lock(run.idleMu);
      run.idle.wait_for(lock, std::chrono::microseconds(20), [&run] { return run.left.load() == 0; });
    }
  }
}

}  // namespace

szResult_t HostSlots::run(std::vector<Op> reqs, std::vector<SlotCompletion>* done) {
  done->clear();
  if (reqs.empty()) return szSuccess;
  std::lock_guard<std::mutex> one(runMu_);
  auto run = std::make_shared<Run>();
  run->start = Clock::now();
  run->reqs = std::move(reqs);  // the caller's requests, moved in: no copy of their buffers' lists
  run->lastMove = nowNs();
  uint64_t codecSlices = 0, encodeSlices = 0;
  std::vector<int> peers;
  for (const Op& r : run->reqs) {
    if (r.peer < 0 || r.peer >= nranks_ || r.peer == rank_)
      return szSetError(szInternalError, "host slots: an operation with rank %d", r.peer);
    peers.push_back(r.peer);
  }
  SZCHECK(channels_.connect(peers));  // the first operations with a peer: its channels
  for (const Op& r : run->reqs) {
    auto o = std::make_unique<OpState>();
    o->req = &r;
    o->self = rank_;
    o->ch = channels_.channel(r.send, r.peer);
    o->elem = szTypeSize(r.type);
    o->bytes = r.count * o->elem;
    o->sliceBytes = cfg_.sliceBytes;
    o->slices = opSlices(o->bytes, o->sliceBytes);
    o->stepBase = channels_.takeSteps(r.send, r.peer, o->slices);
    if (r.segs.size() > 1) {
      o->sliceSeg.resize(o->slices);
      forEachSliceStart(r.segs, o->sliceBytes, o->slices, [&](uint64_t i, uint32_t seg) { o->sliceSeg[i] = seg; });
    }
    o->c = SlotCompletion{r.send, r.peer, r.type, r.count, o->bytes, r.frames, szSuccess, 0, 0, 0, o->slices, 0, 0, {}};
    o->c.driftFed = true;
    if (r.frames || r.mayDecode) codecSlices += o->slices;
    if (r.frames) encodeSlices += o->slices;
    run->ops.push_back(std::move(o));
  }
  run->left = int(run->ops.size());
  const bool pool = cfg_.workers > 1 && codecSlices > 1;
  if (pool) {
    run->pool = encodeSlices > 1;
    run->wakePool = [this, r = run.get()] {
      {
        std::lock_guard<std::mutex> lock(mu_);
        r->pool = true;
      }
      ++poolWakes_;
      cv_.notify_all();
    };
    std::lock_guard<std::mutex> lock(mu_);
    while (int(pool_.size()) < cfg_.workers - 1) pool_.emplace_back([this] { workerLoop(); });
    run_ = run;
  }
  // Only a run that starts with encoding wakes the pool: a receive that may decode (auto, the
  // codec on) wakes it at its first frame (wakePool). Waking it for raw runs, whose threads found
  // nothing to do and slept again, cost auto's raw 1 MiB exchanges 12-30 % against codec off's on
  // two cores (tcp over loopback, issue 28).
  if (run->pool.load()) run->wakePool();
  work(*run, proxy_, flushed_, cfg_, codebooks_, true);
  // The pool leaves the run on its own: every operation is closed, so a pool thread still in it
  // claims nothing, touches no caller's buffer (the proxy let go of them before each closed) and
  // only drives the proxy once more. Waiting for it cost the caller 20-1700 us a group where the
  // pool ran (two cores, frames over a paced link).
  if (pool) {
    std::lock_guard<std::mutex> lock(mu_);
    if (run_ == run) run_.reset();
  }
  // What the call cost beyond its operations' ends (the caller's wake), for the auto model, which
  // judges the caller's time (SlotCompletion::judgedSeconds).
  double last = 0;
  for (auto& o : run->ops) last = std::max(last, o->c.seconds);
  const double tail = std::max(0.0, since(run->start) - last);
  // The group's failure: the first seen here (a corrupt slot, a mismatch, a timeout) before one
  // that says only that the peer failed (which the first may have caused: a failed receive
  // fails its pair when the wire held its buffer, and the pair's send with it).
  szResult_t first = szSuccess;
  std::string why;
  for (auto& o : run->ops) {
    o->c.tailSeconds = tail;
    o->c.status = szResult_t(o->status.load());
    o->c.groups = std::move(o->groups);
    if (o->c.status != szSuccess && (first == szSuccess || (first == szRemoteError && o->c.status != szRemoteError))) {
      first = o->c.status;
      why = o->error;
    }
    done->push_back(std::move(o->c));
  }
  if (first != szSuccess) return szSetError(first, "%s", why.c_str());
  return szSuccess;
}

void HostSlots::workerLoop() {
  std::shared_ptr<Run> last;
  for (;;) {
    std::shared_ptr<Run> run;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || (run_ && run_ != last && run_->pool.load()); });
      if (stop_) return;
      run = last = run_;
    }
    work(*run, proxy_, flushed_, cfg_, codebooks_, false);
  }
}


}  // namespace sz
