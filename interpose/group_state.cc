// Group bookkeeping (group_state.h).
#include "interpose/group_state.h"

#include <utility>

namespace szi {

bool GroupState::end(std::vector<PendingAttach>* ready) {
  if (depth_ == 0) return false;
  if (--depth_ == 0) {
    ready->insert(ready->end(), pending_.begin(), pending_.end());
    pending_.clear();
  }
  return true;
}

bool GroupState::defer(PendingAttach p) {
  if (depth_ == 0) return false;
  pending_.push_back(std::move(p));
  return true;
}

GroupState& threadGroup() {
  thread_local GroupState state;
  return state;
}

}  // namespace szi
