// SPDX-License-Identifier: MIT
// §2.11 worked examples (order 0) and the order-0 rules of §2.2, §2.6.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

constexpr uint64_t kC = 512;  // default CLUSTER

// §2.11 example, steps 1-3, device size a multiple of CLUSTER.
TEST(Alloc_2_11, FreshSsdOrder0WholeClusters) {
  Harness h(Options(kDefaultClusterShift, 1));
  const int t = h.On(Dev("a", 4 * kC));
  ASSERT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0}));
  ASSERT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3}));
  // Step 1: slow path → nonfull[0] → cluster 0, offset 0 is BAD, 1 taken.
  EXPECT_EQ(h.Off(0), 1u);
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.sys.Hint(0, 0).type, t);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 2u);
  EXPECT_EQ(h.Cl(t, 0).flag, ClusterFlag::kFrag);
  EXPECT_EQ(h.Cl(t, 0).order, 0);
  EXPECT_EQ(h.L(t, ListId::kFrag, 0), (Offs{0}));
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 0).empty());
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3}));
  const uint64_t hits0 = h.sys.counters().fast_path_hits;
  // Step 2: 510 more via the fast path, offsets 2..511.
  for (uint64_t want = 2; want < kC; ++want) {
    ASSERT_EQ(h.Off(0), want);
    if (want < kC - 1) {
      ASSERT_EQ(h.sys.Hint(0, 0).offset, want + 1);
    }
  }
  EXPECT_EQ(h.sys.counters().fast_path_hits - hits0, 510u);
  EXPECT_EQ(h.Cl(t, 0).flag, ClusterFlag::kFull);
  EXPECT_EQ(h.Cl(t, 0).count, kC);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{0}));
  EXPECT_TRUE(h.L(t, ListId::kFrag, 0).empty());
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 0u);
  // Step 3: nonfull[0] is empty → the free list gives cluster 1.
  EXPECT_EQ(h.Off(0), kC);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, kC + 1);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFrag);
  EXPECT_TRUE(h.Cl(t, 1).has_table);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3}));
  EXPECT_EQ(h.Dv(t).inuse, kC);
  EXPECT_EQ(h.sys.nr_swap_pages(), int64_t(4 * kC - 1 - kC));
}

// §2.11 step 3, partial last cluster: it is used next, from its start.
TEST(Alloc_2_11, PartialLastClusterUsedBeforeFreeList) {
  Harness h(Options(kDefaultClusterShift, 1));
  const int t = h.On(Dev("a", 4 * kC + 100));
  ASSERT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 4}));
  for (uint64_t want = 1; want < kC; ++want) ASSERT_EQ(h.Off(0), want);
  EXPECT_EQ(h.Off(0), 4 * kC);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 4 * kC + 1);
  EXPECT_EQ(h.L(t, ListId::kFrag, 0), (Offs{4}));
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 0).empty());
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3}));
  // The 99 usable slots of cluster 4 ([2048, 2148)), then cluster 1.
  for (uint64_t want = 4 * kC + 1; want < 4 * kC + 100; ++want) ASSERT_EQ(h.Off(0), want);
  EXPECT_EQ(h.Cl(t, 4).flag, ClusterFlag::kFull);
  EXPECT_EQ(h.Off(0), kC);
}

// §2.11 with PAGE_DISCARD: free list first; cluster 0 only when no free
// cluster is left.
TEST(Alloc_2_11, PageDiscardPrefersFreeClusters) {
  Harness h(Options(kDefaultClusterShift, 1));
  SwaponOptions o = Dev("a", 4 * kC);
  o.discard = DiscardMode::kPages;
  const int t = h.On(o);
  ASSERT_TRUE(h.Dv(t).page_discard);
  EXPECT_EQ(h.Off(0), kC);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, kC + 1);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0}));
  for (uint64_t want = kC + 1; want < 4 * kC; ++want) ASSERT_EQ(h.Off(0), want);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{1, 2, 3}));
  EXPECT_EQ(h.Off(0), 1u);
}

// §2.11 header note / §1.6 / D4: a non-SSD device places the same way, but
// through seq_next; the per-CPU hint never points at it.
TEST(Alloc_2_11, NonSsdSameOffsetsNoPerCpuHint) {
  Harness h(Options(kDefaultClusterShift, 2));
  SwaponOptions o = Dev("hdd", 2 * kC);
  o.ssd = false;
  const int t = h.On(o);
  for (uint64_t want = 1; want < kC; ++want) {
    ASSERT_EQ(h.Off(want % 2), want);  // two CPUs share seq_next
  }
  EXPECT_EQ(h.Off(0), kC);
  for (int cpu = 0; cpu < 2; ++cpu) EXPECT_EQ(h.sys.Hint(cpu, 0).type, -1);
  EXPECT_EQ(h.sys.counters().fast_path_hits, 0u);
  EXPECT_EQ(h.sys.counters().served_by_hint, kC - 2);  // offsets 2..511 via seq_next
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{0}));
}

// §2.6: the scan goes forward only from the hint; a slot freed behind the
// hint is not revisited by the fast path. Another CPU without a hint finds
// it through the slow path (here: the frag[0] step, the device's only
// cluster having been relocated there by the fast-path allocation).
TEST(Alloc_2_6, ScanIsForwardOnly) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 16));  // one cluster, 15 usable slots
  std::vector<Folio*> f;
  for (int i = 0; i < 5; ++i) f.push_back(h.AllocNew(0));  // 1..5
  ASSERT_EQ(f[2]->swap().offset, 3u);
  h.FreeCacheOnly(*f[2]);  // slot 3 freed: FRAG → nonfull[0]
  EXPECT_EQ(h.Cl(t, 0).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0}));
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 6u);
  EXPECT_EQ(h.Off(0), 6u);                         // forward from the hint, not 3
  EXPECT_EQ(h.Cl(t, 0).flag, ClusterFlag::kFrag);  // partial after commit → frag[0]
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 7u);
  // CPU 1: slow path; nonfull[0] and free are empty; frag[0] one cluster,
  // scanned from the cluster start → 3, next := 4.
  EXPECT_EQ(h.Off(1), 3u);
  EXPECT_EQ(h.sys.Hint(1, 0).type, t);
  EXPECT_EQ(h.sys.Hint(1, 0).offset, 4u);
  EXPECT_EQ(h.Off(0), 7u);
  EXPECT_EQ(h.Off(1), 8u);  // CPU 1 now scans forward from 4: 4..7 busy
}

// §2.6 + §2.8: a fast-path allocation that leaves the cluster partial
// relocates it to frag[order] (NONFULL → FRAG, §1.7).
TEST(Alloc_2_8, FastPathRelocatesNonfullToFrag) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  std::vector<Folio*> f;
  for (int i = 0; i < 5; ++i) f.push_back(h.AllocNew(0));
  h.FreeCacheOnly(*f[0]);  // slot 1 → nonfull[0]
  ASSERT_EQ(h.Cl(t, 0).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.Off(0), 6u);
  EXPECT_EQ(h.Cl(t, 0).flag, ClusterFlag::kFrag);
  EXPECT_EQ(h.L(t, ListId::kFrag, 0), (Offs{0}));
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 0).empty());
}

// §2.2: the fast path ignores priorities and the avail list; §2.3: a CPU
// without a hint follows priority.
TEST(Alloc_2_2, FastPathIgnoresPriority) {
  Harness h(Options(4, 2));
  SwaponOptions hi = Dev("hi", 16);  // one cluster, 15 usable
  hi.prio = 10;
  SwaponOptions lo = Dev("lo", 64);
  lo.prio = 5;
  const int H = h.On(hi), Lo = h.On(lo);
  std::vector<Folio*> f;
  for (uint64_t want = 1; want <= 15; ++want) {
    f.push_back(h.AllocNew(0));
    ASSERT_EQ(f.back()->swap(), (SwapEntry{H, want}));
  }
  EXPECT_FALSE(h.Dv(H).on_avail_list);
  EXPECT_EQ(h.Ent(0), (SwapEntry{Lo, 1}));
  EXPECT_EQ(h.sys.Hint(0, 0).type, Lo);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 2u);
  h.FreeCacheOnly(*f[6]);  // frees H:7, H back on the avail list
  EXPECT_TRUE(h.Dv(H).on_avail_list);
  EXPECT_EQ(h.Ent(0), (SwapEntry{Lo, 2}));  // fast path, lower priority
  EXPECT_EQ(h.Ent(1), (SwapEntry{H, 7}));   // slow path, priority order
}

// §1.6 / U10: the hint is not reset when the CPU allocates on a non-SSD
// device, and keeps serving a lower-priority SSD.
TEST(Alloc_1_6, HintNotResetByNonSsdAllocation) {
  Harness h(Options(4, 2));
  SwaponOptions hi = Dev("hdd", 16);
  hi.prio = 10;
  hi.ssd = false;
  SwaponOptions lo = Dev("ssd", 64);
  lo.prio = 5;
  const int H = h.On(hi), Lo = h.On(lo);
  std::vector<Folio*> f;
  for (int i = 0; i < 15; ++i) f.push_back(h.AllocNew(0));
  EXPECT_EQ(h.sys.Hint(0, 0).type, -1);
  EXPECT_EQ(h.Ent(0), (SwapEntry{Lo, 1}));
  h.FreeCacheOnly(*f[3]);  // H:4 free again
  EXPECT_EQ(h.Ent(1), (SwapEntry{H, 4}));
  EXPECT_EQ(h.sys.Hint(0, 0).type, Lo);  // CPU 1's non-SSD allocation left CPU 0 alone
  h.FreeCacheOnly(*f[4]);                // H:5
  EXPECT_EQ(h.Ent(0), (SwapEntry{Lo, 2}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{Lo, 3}));
  EXPECT_EQ(h.Dv(H).inuse, 14u);
}

// §2.6: after an allocation that leaves no room for another of this order,
// the hint's offset is 0 (whole-cluster allocation).
TEST(Alloc_2_6, HintClearedWhenClusterHasNoRoom) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  EXPECT_EQ(h.Off(0, 4), 16u);
  EXPECT_EQ(h.sys.Hint(0, 4).offset, 0u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFull);
  EXPECT_EQ(h.Cl(t, 1).order, 4);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{1}));
}

// §2.2 step 2: when the hint's cluster is not usable the fast path fails
// and leaves the per-CPU entry unchanged (here the slow path finds no
// device either, so nothing rewrites it).
TEST(Alloc_2_2, UnusableHintClusterLeavesHintUnchanged) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 32));
  EXPECT_EQ(h.SwapOut(0).offset, 1u);  // CPU 0: hint (a, 2) in cluster 0
  for (uint64_t want = 16; want < 32; ++want) ASSERT_EQ(h.SwapOut(1).offset, want);
  // CPU 1 continues in cluster 0 through frag[0] until the device is full.
  for (uint64_t want = 2; want < 16; ++want) ASSERT_EQ(h.SwapOut(1).offset, want);
  ASSERT_EQ(h.Cl(t, 0).flag, ClusterFlag::kFull);
  ASSERT_FALSE(h.Dv(t).on_avail_list);
  const uint64_t misses = h.sys.counters().fast_path_misses;
  Folio& f = h.NewFolio(0);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_EQ(h.sys.counters().fast_path_misses, misses + 1);
  EXPECT_EQ(h.sys.Hint(0, 0).type, t);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 2u);
}

// §2.6: when the count test fails nothing is scanned, the cluster is
// relocated and the hint cleared (order 1 into a cluster with one free
// slot left).
TEST(Alloc_2_6, CountTestFailureClearsHint) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 32));
  for (int i = 0; i < 7; ++i) ASSERT_EQ(h.SwapOut(0, 1).offset, 16u + 2 * i);
  ASSERT_EQ(h.sys.Hint(0, 1).offset, 30u);
  for (uint64_t want = 1; want < 16; ++want) ASSERT_EQ(h.SwapOut(1).offset, want);
  EXPECT_EQ(h.SwapOut(1).offset, 30u);  // order 0 steals from frag[1]
  ASSERT_EQ(h.Cl(t, 1).count, 15u);
  Folio& f = h.NewFolio(1);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_EQ(h.sys.Hint(0, 1).offset, 0u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFrag);
  EXPECT_EQ(h.Cl(t, 1).count, 15u);
}

}  // namespace
}  // namespace swaplab::alloc::test
