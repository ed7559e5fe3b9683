// The slot path in a build without CUDA (make CUDA=0): no slot wire is built and no communicator
// creates one, but the communicator still names its entry points, so they exist and fail.
#include "base/checks.h"
#include "src/proto/slot_path.h"

szResult_t sz::SlotPath::create(const ChannelSource&, int, std::vector<uint64_t>, const SlotPathConfig&, std::unique_ptr<SlotPath>*) {
  return szSetError(szUnhandledCudaError, "SlotPath::create: SplitZip was built without CUDA");
}
sz::SlotPath::~SlotPath() = default;
sz::SlotGraphs::~SlotGraphs() = default;  // no graph is ever captured
szResult_t sz::SlotPath::enqueue(const std::vector<Op>&, bool) {
  return szSetError(szUnhandledCudaError, "SlotPath::enqueue: SplitZip was built without CUDA");
}
szResult_t sz::SlotPath::reap(const std::function<void(const SlotCompletion&)>&, bool) {
  return szSetError(szUnhandledCudaError, "SlotPath::reap: SplitZip was built without CUDA");
}
