// SPDX-License-Identifier: MIT
// §1.7 list transitions, one test per row of the table (rows that other
// files cover in depth are cross-referenced), and C3/C4 at quiescence.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// Rows 1-2: swapon → FREE (no bad slot) / NONFULL on nonfull[0] (bad slot).
TEST(Lists_1_7, SwaponFreeOrNonfull) {
  Harness h(Options(4, 1));
  SwaponOptions o = Dev("a", 72);  // clusters 0..4, 4 partial
  o.bad_pages = {33};
  const int t = h.On(o);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 3}));
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 2, 4}));
  for (uint64_t c : {0, 2, 4}) EXPECT_EQ(h.Cl(t, c).flag, ClusterFlag::kNonfull) << c;
}

// Row 3 (isolate → NONE) is transient; C3: never visible at quiescence.
TEST(Lists_1_7, NoIsolatedClusterAtQuiescence) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 128));
  std::vector<SwapEntry> e;
  for (int i = 0; i < 20; ++i) e.push_back(h.SwapOut(i % 2, i % 3));
  for (size_t i = 0; i < e.size(); i += 3) ASSERT_TRUE(h.PutDirect(e[i]).ok());
  const DeviceInfo d = h.Dv(t);
  EXPECT_EQ(d.isolated_clusters, 0u);
  EXPECT_EQ(
      d.free_clusters + d.nonfull_clusters + d.frag_clusters + d.full_clusters + d.discard_clusters,
      d.nr_clusters);
  for (uint64_t c = 0; c < d.nr_clusters; ++c) EXPECT_NE(h.Cl(t, c).flag, ClusterFlag::kNone);
}

// Row 4: after an allocation attempt 0 < count < CLUSTER → frag[order].
TEST(Lists_1_7, AllocationLeavesPartialClusterOnFrag) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  EXPECT_EQ(h.Off(0, 3), 16u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFrag);
  EXPECT_EQ(h.L(t, ListId::kFrag, 3), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2}));
}

// Row 5: count == CLUSTER after an allocation → full list.
TEST(Lists_1_7, AllocationFillingClusterMovesToFull) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  EXPECT_EQ(h.Off(0, 3), 16u);
  EXPECT_EQ(h.Off(0, 3), 24u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFull);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{1}));
  EXPECT_TRUE(h.L(t, ListId::kFrag, 3).empty());
}

// Row 7: slots freed, 0 < count → nonfull[order] (see free_test.cc).
TEST(Lists_1_7, FreeToPartialMovesToNonfullOfItsOrder) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  const SwapEntry e = h.SwapOut(0, 3);
  ASSERT_TRUE(h.PutDirect(e, 2).ok());
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 3), (Offs{1}));
}

// Rows 8-9: count 0 → DISCARD (WRITEOK + PAGE_DISCARD) else FREE (see
// discard_test.cc, free_test.cc).
TEST(Lists_1_7, FreeToEmptyGoesToFreeOrDiscard) {
  for (DiscardMode m : {DiscardMode::kNone, DiscardMode::kPages}) {
    SystemOptions so = Options(4, 1);
    so.run_deferred_work_inline = false;
    Harness h(so);
    SwaponOptions o = Dev("a", 48);
    o.discard = m;
    const int t = h.On(o);
    const SwapEntry e = h.SwapOut(0, 3);
    ASSERT_TRUE(h.PutDirect(e, 8).ok());
    const ClusterFlag want = m == DiscardMode::kNone ? ClusterFlag::kFree : ClusterFlag::kDiscard;
    EXPECT_EQ(h.Cl(t, 1).flag, want) << Name(m);
    EXPECT_EQ(h.Cl(t, 1).has_table, m != DiscardMode::kNone) << Name(m);
  }
}

// Rows 10-11: the discard worker (see discard_test.cc) ends with FREE.
TEST(Lists_1_7, DiscardEndsInFree) {
  SystemOptions so = Options(4, 1);
  so.run_deferred_work_inline = false;
  Harness h(so);
  SwaponOptions o = Dev("a", 48);
  o.discard = DiscardMode::kPages;
  const int t = h.On(o);
  const SwapEntry e = h.SwapOut(0, 4);
  ASSERT_TRUE(h.PutDirect(e, 16).ok());
  ASSERT_EQ(h.Cl(t, 1).flag, ClusterFlag::kDiscard);
  h.sys.RunDeferredWork();
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFree);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 1}));
}

// Row 13: full-cluster reclaim that frees nothing relocates to the full
// tail (see reclaim_test.cc NothingFreedGoesBackToFullTail).
TEST(Lists_1_7, FullReclaimNothingFreedBackToFullTail) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  for (int i = 0; i < 31; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  ASSERT_EQ(h.L(t, ListId::kFull), (Offs{0, 1}));
  ASSERT_TRUE(h.sys.ReclaimFullClusters(t, false).ok());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{1, 0}));
}

// §1.7 "an allocation into a NONFULL cluster that leaves it partial moves
// it to frag[order]"; "A cluster a CPU is filling sits on frag[order]" and
// other CPUs can take it from there.
TEST(Lists_1_7, ClusterBeingFilledIsSharedThroughFrag) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 32));  // clusters 0 and 1
  // Swapped-out slots, so that full-cluster reclaim finds nothing.
  EXPECT_EQ(h.SwapOut(0).offset, 1u);
  EXPECT_EQ(h.SwapOut(1).offset, 16u);  // CPU 1: free list
  for (uint64_t want = 17; want < 32; ++want) ASSERT_EQ(h.SwapOut(1).offset, want);
  // CPU 1's cluster is full; nonfull and free are empty → frag[0] holds
  // cluster 0, which CPU 0 is filling: scanned from its start → 2.
  EXPECT_EQ(h.SwapOut(1).offset, 2u);
  EXPECT_EQ(h.SwapOut(0).offset, 3u);  // CPU 0's hint (2) finds 2 busy and moves on
  EXPECT_EQ(h.L(t, ListId::kFrag, 0), (Offs{0}));
}

}  // namespace
}  // namespace swaplab::alloc::test
