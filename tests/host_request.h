// A host-buffer operation on one BF16 buffer (src/proto/op.h), as the communicator builds it
// for szSend / szRecv: for tests that drive the host slots directly.
#pragma once

#include <cstdint>
#include <vector>

#include "src/proto/op.h"

namespace sztest {

inline sz::Op hostRequest(bool send, int peer, std::vector<uint16_t>& buf, bool frames) {
  sz::Op q;
  q.api = send ? "szSend" : "szRecv";
  q.send = send;
  q.peer = peer;
  q.type = szBfloat16;
  q.count = buf.size();
  q.frames = frames;
  q.mayDecode = !send;
  q.segs.push_back(sz::SlotSegment{reinterpret_cast<uint8_t*>(buf.data()), buf.size() * 2, 0});
  q.segGroups.push_back(0);
  return q;
}

}  // namespace sztest
