// The interposer's group bookkeeping, per thread: how deep ncclGroupStart/End nest, and the
// communicator inits and splits issued inside a group. NCCL runs those at the outermost
// ncclGroupEnd, so only then can their SplitZip communicators be made (attach.h): every rank
// is then inside that ncclGroupEnd, which makes the attach collective. Pure logic
// (tests/interpose_group_test.cc).
#pragma once

#include <memory>
#include <vector>

namespace szi {

class HandshakeClient;

// A communicator whose SplitZip side waits for the NCCL init to finish.
struct PendingAttach {
  void* comm = nullptr;                     // ncclComm_t
  bool fromSplit = false;                   // made by ncclCommSplit of an interposed parent
  std::shared_ptr<HandshakeClient> client;  // ncclCommInitRank*: its handshake, registered
};

class GroupState {
 public:
  int depth() const { return depth_; }
  void start() { ++depth_; }
  // Returns false for an ncclGroupEnd without its ncclGroupStart (NCCL refuses it too).
  // Otherwise true; at the outermost end, *ready receives the group's pending attaches.
  bool end(std::vector<PendingAttach>* ready);
  // Outside a group the attach happens at once: returns false and leaves `p` to the caller.
  bool defer(PendingAttach p);

 private:
  int depth_ = 0;
  std::vector<PendingAttach> pending_;
};

// The calling thread's state.
GroupState& threadGroup();

}  // namespace szi
