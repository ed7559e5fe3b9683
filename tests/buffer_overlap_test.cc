// The group's buffer overlap checks (src/buffer_overlap.h) against the pairwise test they
// replace, on hand-picked cases and on seeded random buffer lists.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "src/buffer_overlap.h"

namespace {

using sz::OwnedRange;

bool pairwiseAcrossOwners(const std::vector<OwnedRange>& r) {
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (r[i].owner != r[j].owner && r[i].begin < r[i].end && r[j].begin < r[j].end && r[i].begin < r[j].end &&
          r[j].begin < r[i].end)
        return true;
  return false;
}

bool pairwiseBetween(const std::vector<OwnedRange>& a, const std::vector<OwnedRange>& b) {
  for (const OwnedRange& x : a)
    for (const OwnedRange& y : b)
      if (x.begin < x.end && y.begin < y.end && x.begin < y.end && y.begin < x.end) return true;
  return false;
}

TEST(BufferOverlap, HandPickedCases) {
  auto across = [](std::vector<OwnedRange> r) { return sz::overlapAcrossOwners(r); };
  EXPECT_FALSE(across({}));
  EXPECT_FALSE(across({{0, 100, 0}, {100, 200, 1}}));       // touching, not overlapping
  EXPECT_TRUE(across({{0, 100, 0}, {99, 200, 1}}));
  EXPECT_FALSE(across({{0, 100, 0}, {50, 60, 0}}));         // one owner's own ranges may overlap
  EXPECT_FALSE(across({{0, 100, 0}, {50, 50, 1}}));         // an empty range overlaps nothing
  EXPECT_TRUE(across({{50, 60, 1}, {0, 100, 0}}));          // any order
  // The furthest end is the current range's own owner's; an earlier range of another owner
  // still reaches it.
  EXPECT_TRUE(across({{0, 100, 2}, {10, 200, 1}, {50, 60, 1}}));
  EXPECT_TRUE(across({{0, 1000, 0}, {10, 20, 0}, {30, 40, 0}, {500, 501, 1}}));
  std::vector<OwnedRange> recv = {{0, 100, 0}}, send = {{100, 200, 0}, {300, 400, 0}};
  EXPECT_FALSE(sz::overlapBetween(recv, send));
  recv = {{0, 100, 0}, {350, 360, 5}};
  send = {{100, 200, 0}, {300, 400, 0}};
  EXPECT_TRUE(sz::overlapBetween(recv, send));
}

TEST(BufferOverlap, AgreesWithThePairwiseTestOnRandomBufferLists) {
  std::mt19937 rng(7);
  int overlapping = 0, between = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int n = 1 + int(rng() % 24), owners = 1 + int(rng() % 6), span = 64 + int(rng() % 4000);
    std::vector<OwnedRange> r, a, b;
    for (int i = 0; i < n; ++i) {
      const uintptr_t begin = rng() % uintptr_t(span), len = rng() % 5 == 0 ? 0 : 1 + rng() % 200;
      r.push_back(OwnedRange{begin, begin + len, int(rng() % uint32_t(owners))});
      (rng() % 2 ? a : b).push_back(r.back());
    }
    const bool want = pairwiseAcrossOwners(r), wantBetween = pairwiseBetween(a, b);
    overlapping += want;
    between += wantBetween;
    std::vector<OwnedRange> copy = r;
    ASSERT_EQ(sz::overlapAcrossOwners(copy), want) << "trial " << trial;
    ASSERT_EQ(sz::overlapBetween(a, b), wantBetween) << "trial " << trial;
  }
  // Both outcomes were exercised.
  EXPECT_GT(overlapping, 400);
  EXPECT_LT(overlapping, 3600);
  EXPECT_GT(between, 400);
  EXPECT_LT(between, 3600);
}

}  // namespace
