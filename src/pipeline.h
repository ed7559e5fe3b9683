// The slice pipeline (paper App. B): each operation is cut into slices that flow
// encode -> wire -> decode with up to `depth` slices in flight per operation, driven by the
// communicator's progress thread. The wire protocol (docs/PIPELINE.md):
//   data channel, sender -> receiver:  OpDesc, then per slice SliceHeader + payload
//   control channel, receiver -> sender: OpAck (status, the receiver's count and type)
// so both sides see a count/type mismatch, and a send completes only once the receiver has
// decoded every slice.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/comm.h"

namespace sz {

class OpRunner;
struct GroupWait;

struct DeviceContext;

class Pipeline {
 public:
  // `device`: the communicator's CUDA resources (null without a GPU); `slotBytes`: the size of
  // a slice buffer (the largest frame of a slice).
  Pipeline(szComm* comm, DeviceContext* device, size_t slotBytes);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Hands a group of operations to the progress thread; wait() blocks until the given ones
  // are complete and returns the first error (each op's own result is in op->result).
  // Separate, so a group spanning several communicators submits to all before waiting on any.
  std::shared_ptr<GroupWait> submit(const std::vector<std::shared_ptr<Op>>& ops);
  static szResult_t wait(const std::shared_ptr<GroupWait>& handle, const std::vector<std::shared_ptr<Op>>& ops);

  // Stops the progress thread; outstanding operations fail with szRemoteError.
  void abort();
  // True when no operation is outstanding.
  bool idle();

  // Slice buffers, pooled per kind (BufferKind). Device and pinned buffers are taken on the
  // user's thread when a device operation is called (reserve()), never on the progress thread:
  // allocating device or pinned memory may synchronize the device, and the user's stream may by
  // then wait on an operation only the progress thread can complete.
  enum BufferKind { kDeviceBuffer = 0, kPinnedBuffer = 1, kHostBuffer = 2, kPinnedHeader = 3, kKinds = 4 };
  szResult_t takeBuffer(int kind, uint8_t** p);
  void returnBuffer(int kind, uint8_t* p);
  // Reserves a device operation's slice buffers (Op::buffers), on the calling thread.
  szResult_t reserve(Op& op);
  // Fills the pools with one device operation's buffers, at init: allocating later happens only
  // while other operations are in flight (and may synchronize the device behind them).
  szResult_t preallocate();
  void release(Op& op);
  size_t slotBytes() const { return slotBytes_; }
  // Progress thread: the sequence number of the next acknowledgement to `peer`; receives
  // acknowledge in this order because the sender matches acknowledgements to its sends in order.
  uint32_t& nextAck(int peer) { return nextAck_[peer]; }
  DeviceContext* device() const { return device_; }

 private:
  void progressLoop();

  szComm* comm_;
  DeviceContext* device_;
  size_t slotBytes_;
  std::mutex poolMu_;
  std::vector<uint8_t*> free_[kKinds];
  size_t activeCount_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<OpRunner>> incoming_;
  std::map<std::pair<int, bool>, uint32_t> seqs_;  // next sequence number per (peer, send)
  std::map<int, uint32_t> nextAck_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sz
