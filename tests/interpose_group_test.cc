// The interposer's group bookkeeping (interpose/group_state.h): nesting, an unbalanced end, and
// the inits deferred to the outermost ncclGroupEnd.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "interpose/group_state.h"

namespace {

using szi::GroupState;
using szi::PendingAttach;

void* handle(int i) { return reinterpret_cast<void*>(uintptr_t(0x1000 + i)); }

TEST(InterposeGroup, OutsideAGroupNothingIsDeferred) {
  GroupState g;
  EXPECT_FALSE(g.defer({handle(1), false, nullptr})) << "the caller attaches at once";
  std::vector<PendingAttach> ready;
  EXPECT_FALSE(g.end(&ready)) << "an end without its start";
  EXPECT_TRUE(ready.empty());
  EXPECT_EQ(g.depth(), 0) << "an unbalanced end leaves the depth at 0";
}

TEST(InterposeGroup, DeferredUntilTheOutermostEnd) {
  GroupState g;
  g.start();
  EXPECT_TRUE(g.defer({handle(1), false, nullptr}));
  g.start();
  EXPECT_TRUE(g.defer({handle(2), true, nullptr}));
  std::vector<PendingAttach> ready;
  EXPECT_TRUE(g.end(&ready));
  EXPECT_TRUE(ready.empty()) << "an inner end runs nothing";
  EXPECT_EQ(g.depth(), 1);
  EXPECT_TRUE(g.end(&ready));
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].comm, handle(1)) << "in call order";
  EXPECT_EQ(ready[1].comm, handle(2));
  EXPECT_TRUE(ready[1].fromSplit);
  ready.clear();
  g.start();
  EXPECT_TRUE(g.end(&ready));
  EXPECT_TRUE(ready.empty()) << "the next group starts empty";
}

TEST(InterposeGroup, EachThreadHasItsOwn) {
  szi::threadGroup().start();
  int otherDepth = -1;
  std::thread([&] { otherDepth = szi::threadGroup().depth(); }).join();
  EXPECT_EQ(otherDepth, 0);
  std::vector<PendingAttach> ready;
  EXPECT_TRUE(szi::threadGroup().end(&ready));
}

}  // namespace
