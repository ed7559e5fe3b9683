// One operation of the host slice pipeline (pipeline.h) as the progress thread drives it: the
// wire messages, a slice's slot and OpRunner. The send side and the progress thread are in
// src/pipeline.cc, the receive side in src/op_recv.cc. Private to the pipeline.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "src/pipeline.h"

namespace sz {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kOpMagic = 0x504F5A53;     // "SZOP"
constexpr uint32_t kSliceMagic = 0x4C535A53;  // "SZSL"
constexpr uint32_t kAckMagic = 0x4B415A53;    // "SZAK"
constexpr uint32_t kProtocolVersion = 1;

// Messages (little-endian hosts; the library targets x86-64 and aarch64).
struct OpDesc {
  uint32_t magic, version, seq, mode;  // mode: 0 raw slices, 1 SplitZip frames
  uint64_t count, sliceElems, numSlices;
  uint32_t type, crc;
};
struct SliceHeader {
  uint32_t magic, seq;
  uint64_t slice, payloadBytes;
  uint32_t crc, reserved;
};
struct OpAck {
  uint32_t magic, seq;
  int32_t status, type;
  uint64_t count;
};

// A CPU codec task on its own thread, or on this one when no thread can be created (limits).
template <typename F>
std::future<szResult_t> runTask(F&& task) {
  try {
    return std::async(std::launch::async, task);
  } catch (const std::system_error&) {
    std::promise<szResult_t> done;
    done.set_value(task());
    return done.get_future();
  }
}

inline double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A wire request; poll() tests it until done.
struct Pending {
  szWireRequest* req = nullptr;
  bool done = false;
  size_t bytes = 0;

  szResult_t poll(const szWire* w, bool* moved) {
    if (req == nullptr || done) return szSuccess;
    int d = 0;
    szResult_t res = w->test(req, &d, &bytes);
    if (res != szSuccess) {
      req = nullptr;
      return res;
    }
    if (d) {
      done = true;
      req = nullptr;
      *moved = true;
    }
    return szSuccess;
  }
  void reset() {
    req = nullptr;
    done = false;
    bytes = 0;
  }
};

// Where the callers of a group wait for their operations' `done`.
struct GroupWait {
  std::mutex mu;
  std::condition_variable cv;
};

// One in-flight slice.
struct Slot {
  int64_t slice = -1;
  SliceHeader hdr{};             // travels before the payload
  uint8_t* frame = nullptr;      // payload buffer: frame or raw bytes
  std::vector<uint8_t> staging;  // a slice spanning several segments
  Pending hdrReq, payReq;
  std::future<szResult_t> hostTask;
  bool hostRunning = false;
  bool ready = false;
  uint64_t payloadBytes = 0;
  szCodebook_t codebook{};        // host frames: the one the slice was encoded with ...
  int group = 0;                  // ... that of its first segment's group
  Clock::time_point posted;
};

// Drives one operation. Only the progress thread calls it.
class OpRunner {
 public:
  OpRunner(szComm* comm, Pipeline* pipe, std::shared_ptr<Op> op, uint32_t seq, std::shared_ptr<GroupWait> wait)
      : comm_(comm), pipe_(pipe), op_(std::move(op)), wait_(std::move(wait)), seq_(seq),
        elemBytes_(szTypeSize(op_->type)) {
    sliceElems_ = comm_->cfg.sliceBytes / elemBytes_ ? comm_->cfg.sliceBytes / elemBytes_ : 1;
    numSlices_ = (op_->count + sliceElems_ - 1) / sliceElems_;
    slots_.resize(size_t(comm_->cfg.depth));
  }

  bool step(bool mayPost);
  bool allPosted() const { return allPosted_; }
  bool finished() const { return finished_; }
  void fail(szResult_t res) { finish(res); }
  const Op& op() const { return *op_; }

 private:
  bool stepSend();
  bool stepRecv();
  szResult_t startSlice(Slot& s, uint64_t slice);
  szResult_t postSend(Slot& s);
  szResult_t postRecv(Slot& s, uint64_t slice);
  szResult_t receivedSlice(Slot& s);
  szResult_t pollTask(Slot& s, bool* finished);
  void copySlice(uint64_t off, uint64_t bytes, uint8_t* buf, bool gather);
  szResult_t ensureSlot(Slot& s, bool needPayload);
  void finish(szResult_t res);
  // Finishes the operation with `res` unless it is szSuccess; true if it failed.
  bool failed(szResult_t res) {
    if (res == szSuccess) return false;
    finish(res);
    return true;
  }
  // The same for a send's data wire, whose failure may be the receiver's doing: a receiver that
  // refused the operation (szInvalidUsage) resets the data connections when it closes, maybe
  // before this thread has read its acknowledgement. While that is outstanding the failure is
  // kept, and the acknowledgement (or its channel closing) decides the result.
  bool failedData(szResult_t res) {
    if (res == szSuccess) return false;
    if (!op_->send || (ackReq_.req == nullptr && !ackReq_.done)) return failed(res);
    dataError_ = res;
    dataWhy_ = szGetLastError(nullptr);
    return true;
  }
  // Raw slices travel straight from and into the user's memory where it is contiguous.
  bool directRaw() const { return !frames_; }
  uint64_t sliceOffset(uint64_t slice) const { return slice * sliceElems_ * elemBytes_; }
  uint64_t sliceBytes(uint64_t slice) const {
    uint64_t off = sliceOffset(slice), total = op_->count * elemBytes_;
    return total - off < sliceElems_ * elemBytes_ ? total - off : sliceElems_ * elemBytes_;
  }
  uint8_t* contiguous(uint64_t offset, uint64_t bytes) const;
  int groupAt(uint64_t offset) const;  // the segment group of the byte at `offset`
  template <typename F>
  void forPieces(uint64_t offset, uint64_t bytes, F&& fn) const;

  szComm* comm_;
  Pipeline* pipe_;
  std::shared_ptr<Op> op_;
  std::shared_ptr<GroupWait> wait_;
  uint32_t seq_;
  uint64_t elemBytes_, sliceElems_ = 0, numSlices_ = 0;
  bool frames_ = false;
  bool started_ = false, descDone_ = false, allPosted_ = false, finished_ = false, ackPosted_ = false;
  szResult_t status_ = szSuccess;  // receive side: what the acknowledgement reports
  szResult_t dataError_ = szSuccess;  // send side: the data wire failed (failedData)
  std::string dataWhy_;
  OpDesc desc_{};
  OpAck ack_{};
  Pending descReq_, ackReq_;
  std::vector<Slot> slots_;
  uint64_t nextStart_ = 0, nextPost_ = 0, completed_ = 0;
  Clock::time_point startTime_;
  Clock::time_point lastMoved_ = Clock::now();
};

}  // namespace sz
