// Work-request accounting of one queue pair's send queue (NCCL net_ib's selective signalling):
// at most `depth` work requests outstanding, one in `signalEvery` asks for a completion, and a
// signalled completion retires every request posted before it (a send queue completes in order).
// The post that fills the queue is always signalled, so a full queue always ends in a request
// whose completion frees it. Pure accounting, unit-tested on the CPU (tests/ib_pure_test.cc).
#pragma once

#include <cstdint>

namespace sz {

class IbSendQueue {
 public:
  IbSendQueue(uint32_t depth, uint32_t signalEvery) : depth_(depth), every_(signalEvery ? signalEvery : 1) {}
  bool full() const { return posted_ - retired_ >= depth_; }
  bool idle() const { return posted_ == retired_; }
  uint64_t outstanding() const { return posted_ - retired_; }
  // Accounts one request about to be posted (the caller checked !full()): its work-request id,
  // and whether it must be signalled (`force`: the caller wants its completion).
  bool post(bool force, uint64_t* id) {
    *id = ++posted_;
    const bool signal = force || posted_ - lastSignal_ >= every_ || posted_ - retired_ == depth_;
    if (signal) lastSignal_ = posted_;
    return signal;
  }
  // The completion of the signalled request `id`: it and every earlier one are done.
  void complete(uint64_t id) {
    if (id > retired_ && id <= posted_) retired_ = id;
  }
  // Whether every request so far ends in a signalled one (else idle() needs one more signalled post).
  bool tailSignalled() const { return lastSignal_ == posted_; }

 private:
  uint64_t depth_, every_;
  uint64_t posted_ = 0, retired_ = 0, lastSignal_ = 0;
};

}  // namespace sz
