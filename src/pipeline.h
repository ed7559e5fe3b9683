// The slice pipeline for host buffers (paper App. B): each operation is cut into slices that flow
// encode -> wire -> decode with up to `depth` slices in flight per operation, driven by the
// communicator's progress thread. The wire protocol (docs/PIPELINE.md):
//   data channel, sender -> receiver:  OpDesc, then per slice SliceHeader + payload
//   control channel, receiver -> sender: OpAck (status, the receiver's count and type)
// so both sides see a count/type mismatch, and a send completes only once the receiver has
// decoded every slice. It runs on the tcp wire whatever the communicator's wire; device buffers
// take the slot protocol (src/proto/slot_path.h).
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

class Pipeline {
 public:
  // `slotBytes`: the size of a slice buffer (the largest frame of a slice).
  Pipeline(szComm* comm, size_t slotBytes);
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

  // Slice buffers (slotBytes() each), pooled.
  szResult_t takeBuffer(uint8_t** p);
  void returnBuffer(uint8_t* p);
  size_t slotBytes() const { return slotBytes_; }
  // Progress thread: the sequence number of the next acknowledgement to `peer`; receives
  // acknowledge in this order because the sender matches acknowledgements to its sends in order.
  uint32_t& nextAck(int peer) { return nextAck_[peer]; }

 private:
  void progressLoop();

  szComm* comm_;
  size_t slotBytes_;
  std::mutex poolMu_;
  std::vector<uint8_t*> free_;
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
