// SPDX-License-Identifier: MIT
// §3.5 freeing slots: partial free → nonfull[order] tail, empty → FREE
// (order 0, no table) at the tail of the free list; O2 counters.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// §3.5 step 5 / §1.7: freeing slots of FULL and FRAG clusters moves them to
// the tail of nonfull[order]; a NONFULL cluster stays where it is.
TEST(Free_3_5, PartialFreeMovesToNonfullTail) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 34; ++i) ASSERT_TRUE(h.SwapOut(0).valid());  // 1..15, 16..31, 32..34
  ASSERT_EQ(h.L(t, ListId::kFull), (Offs{0, 1}));
  ASSERT_EQ(h.L(t, ListId::kFrag, 0), (Offs{2}));
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 20}).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1}));
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 5}).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1, 0}));
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 33}).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1, 0, 2}));
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 21}).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1, 0, 2}));
  EXPECT_TRUE(h.L(t, ListId::kFull).empty());
  EXPECT_TRUE(h.L(t, ListId::kFrag, 0).empty());
  EXPECT_EQ(h.Cl(t, 1).count, 14u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.Cl(t, 2).count, 2u);
  EXPECT_EQ(h.Sl(t, 20).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 22).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, 22).count, 1u);
}

// O2: a free of n slots raises nr_swap_pages by n and lowers inuse by n.
TEST(Free_8_O2, CountersMoveByN) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.SwapOut(0, 2);
  ASSERT_EQ(e.offset, 16u);
  const int64_t nr0 = h.sys.nr_swap_pages();
  const uint64_t inuse0 = h.Dv(t).inuse;
  EXPECT_EQ(inuse0, 4u);
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 17}, 2).ok());
  EXPECT_EQ(h.sys.nr_swap_pages(), nr0 + 2);
  EXPECT_EQ(h.Dv(t).inuse, inuse0 - 2);
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 16}).ok());
  EXPECT_EQ(h.sys.nr_swap_pages(), nr0 + 3);
  EXPECT_EQ(h.Dv(t).inuse, inuse0 - 3);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63 - 1);
}

// §3.5 step 5 / §1.7 "Entering FREE resets order to 0 and drops the
// table": the emptied cluster goes to the tail of the free list.
TEST(Free_3_5, EmptiedClusterBecomesFreeAtTail) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 80));  // free: 1, 2, 3, 4
  const SwapEntry a = h.SwapOut(0, 2), b = h.SwapOut(0, 2);
  ASSERT_EQ(a.offset, 16u);
  ASSERT_EQ(b.offset, 20u);
  ASSERT_EQ(h.Cl(t, 1).order, 2);
  ASSERT_EQ(h.L(t, ListId::kFree), (Offs{2, 3, 4}));
  ASSERT_TRUE(h.PutDirect(a, 4).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 2), (Offs{1}));
  ASSERT_TRUE(h.PutDirect(b, 4).ok());
  const ClusterInfo c = h.Cl(t, 1);
  EXPECT_EQ(c.flag, ClusterFlag::kFree);
  EXPECT_EQ(c.count, 0u);
  EXPECT_EQ(c.order, 0);
  EXPECT_FALSE(c.has_table);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3, 4, 1}));
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 2).empty());
  EXPECT_EQ(h.Dv(t).inuse, 0u);
}

// §3.5: a freed cluster whose order was PMD order (whole cluster) and is
// partly freed sits on nonfull[PMD order].
TEST(Free_3_5, PartlyFreedPmdClusterOnNonfullPmdOrder) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  const SwapEntry e = h.SwapOut(0, 4);
  ASSERT_EQ(e.offset, 16u);
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 23}).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 4), (Offs{1}));
  EXPECT_EQ(h.Cl(t, 1).order, 4);
  EXPECT_EQ(h.Cl(t, 1).count, 15u);
}

// §3.3: the zap range is split at cluster boundaries; every piece frees.
TEST(Put_3_3, RangeSplitAtClusterBoundaries) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(h.SwapOut(0).valid());  // 1..40
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 28}, 8).ok());              // 28..31 | 32..35
  for (uint64_t o = 28; o < 36; ++o) EXPECT_EQ(h.Sl(t, o).kind, SlotKind::kEmpty) << o;
  EXPECT_EQ(h.Cl(t, 1).count, 12u);
  EXPECT_EQ(h.Cl(t, 2).count, 5u);  // 36..40
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1, 2}));
  EXPECT_EQ(h.Dv(t).inuse, 32u);
}

// §3.3: in one zap, count-1 slots are freed, higher counts decremented.
TEST(Put_3_3, MixedCountsFreeOnlyCountOne) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.SwapOut(0, 2);  // 16..19, count 1
  ASSERT_TRUE(h.DupDirect(SwapEntry{t, 17}).ok());
  ASSERT_TRUE(h.DupDirect(SwapEntry{t, 19}).ok());
  ASSERT_TRUE(h.DupDirect(SwapEntry{t, 19}).ok());
  ASSERT_TRUE(h.PutDirect(e, 4).ok());
  EXPECT_EQ(h.Sl(t, 16).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 17).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, 17).count, 1u);
  EXPECT_EQ(h.Sl(t, 18).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 19).count, 2u);
  EXPECT_EQ(h.Dv(t).inuse, 2u);
  EXPECT_EQ(h.Cl(t, 1).count, 2u);
  EXPECT_EQ(h.Cl(t, 1).order, 2);
}

}  // namespace
}  // namespace swaplab::alloc::test
