// SPDX-License-Identifier: MIT
// Worker::FlagsWindowEnd: which runs of PFNs share one read of
// /proc/kpageflags (the worker's before a page-out, the runner's wait for
// writeback). Pure: no root, no swap.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "swaplab/kernel/worker.h"

namespace swaplab::kernel {
namespace {

using Runs = std::vector<std::pair<uint64_t, uint64_t>>;  // (first PFN, pages), sorted

// The reads FlagsWindowEnd makes of `runs`: (first PFN, one past the last).
Runs Reads(const Runs& runs) {
  Runs reads;
  for (size_t r = 0; r < runs.size();) {
    uint64_t hi = 0;
    const size_t end = Worker::FlagsWindowEnd(
        r, runs.size(), [&](size_t k) { return runs[k].first; },
        [&](size_t k) { return runs[k].second; }, &hi);
    EXPECT_GT(end, r);
    reads.emplace_back(runs[r].first, hi);
    r = end;
  }
  return reads;
}

TEST(FlagsWindowEnd, NeighboursWithinTheGapShareARead) {
  constexpr uint64_t gap = Worker::kFlagsGap;
  EXPECT_EQ(Reads({{100, 1}, {101, 4}, {105 + gap, 2}}), (Runs{{100, 107 + gap}}));
  // One PFN more between them: two reads.
  EXPECT_EQ(Reads({{100, 1}, {102 + gap, 1}}), (Runs{{100, 101}, {102 + gap, 103 + gap}}));
}

TEST(FlagsWindowEnd, AReadStopsAtTheWindow) {
  constexpr uint64_t w = Worker::kFlagsWindow;
  // Runs of 512 pages back to back: a read takes w / 512 of them.
  Runs runs;
  for (uint64_t k = 0; k < 2 * w / 512 + 1; ++k) runs.emplace_back(1000 + 512 * k, 512);
  const Runs reads = Reads(runs);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0], std::make_pair(uint64_t{1000}, 1000 + w));
  EXPECT_EQ(reads[1], std::make_pair(1000 + w, 1000 + 2 * w));
  EXPECT_EQ(reads[2], std::make_pair(1000 + 2 * w, 1000 + 2 * w + 512));
  // A run that would end one PFN past the window starts a read of its own.
  EXPECT_EQ(Reads({{0, w - 96}, {w - 6, 7}}), (Runs{{0, w - 96}, {w - 6, w + 1}}));
  EXPECT_EQ(Reads({{0, w - 96}, {w - 6, 6}}), (Runs{{0, w}}));
}

TEST(FlagsWindowEnd, OverlappingOrRepeatedRunsAreReadApart) {
  // A run starting inside the one before (never from pagemap, but the
  // reads must still cover each run whole).
  EXPECT_EQ(Reads({{10, 5}, {12, 5}}), (Runs{{10, 15}, {12, 17}}));
}

}  // namespace
}  // namespace swaplab::kernel
