// Overlap checks between the buffers of a group's operations (src/group.cc): receive buffers of
// two operations that overlap, and a receive buffer that overlaps a buffer the group sends. One
// sort and one sweep, O(n log n) in the buffers: a group of 64 vectored operations of 32 buffers
// each compared every pair of buffers of every pair of operations, about two million tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sz {

// A buffer [begin, end) of operation `owner` (empty buffers overlap nothing).
struct OwnedRange {
  uintptr_t begin, end;
  int owner;
};

// Whether two ranges of different owners overlap. `ranges` is reordered.
inline bool overlapAcrossOwners(std::vector<OwnedRange>& ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const OwnedRange& a, const OwnedRange& b) { return a.begin < b.begin; });
  // The two furthest ends seen so far that belong to different owners: a range overlaps an
  // earlier one of another owner exactly when it starts before the furthest end among those.
  OwnedRange first{0, 0, -1}, second{0, 0, -1};
  for (const OwnedRange& r : ranges) {
    if (r.begin >= r.end) continue;
    const OwnedRange& other = first.owner != r.owner ? first : second;
    if (other.owner >= 0 && r.begin < other.end) return true;
    // A range ending short of `first` is of first's owner here (another owner's would have
    // overlapped it), so it changes neither end.
    if (r.end > first.end) {
      if (first.owner != r.owner) second = first;
      first = r;
    }
  }
  return false;
}

// Whether any range of `a` overlaps any range of `b`. Both are reordered.
inline bool overlapBetween(std::vector<OwnedRange>& a, std::vector<OwnedRange>& b) {
  for (OwnedRange& r : a) r.owner = 0;
  for (OwnedRange& r : b) r.owner = 1;
  std::vector<OwnedRange> all;
  all.reserve(a.size() + b.size());
  all.insert(all.end(), a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  return overlapAcrossOwners(all);
}

}  // namespace sz
