// SPDX-License-Identifier: MIT
// Large (order > 0) allocation: §2.11 order-4 example, §1.3 usable(),
// §2.4 search order and stealing, §2.6 alignment, O3, C5.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// §2.11 last example: order 4 on a fresh non-discard block device.
TEST(Alloc_2_11, Order4OnFreshBlockDevice) {
  Harness h(Options(kDefaultClusterShift, 1));
  const int t = h.On(Dev("zram0", 2048));
  Folio* f = h.AllocNew(0, 4);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->swap(), (SwapEntry{t, 512}));
  ASSERT_INVARIANTS(h.sys);
  for (int p = 0; p < 16; ++p) {
    const SlotInfo s = h.Sl(t, 512 + p);
    EXPECT_EQ(s.kind, SlotKind::kCached);
    EXPECT_EQ(s.count, 0u);
    EXPECT_EQ(s.folio, f);
  }
  EXPECT_EQ(h.Sl(t, 528).kind, SlotKind::kEmpty);
  const ClusterInfo c = h.Cl(t, 1);
  EXPECT_EQ(c.order, 4);
  EXPECT_EQ(c.count, 16u);
  EXPECT_EQ(c.flag, ClusterFlag::kFrag);
  EXPECT_TRUE(c.has_table);
  EXPECT_EQ(h.L(t, ListId::kFrag, 4), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3}));
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0}));
  EXPECT_EQ(h.sys.Hint(0, 4).type, t);
  EXPECT_EQ(h.sys.Hint(0, 4).offset, 528u);
  EXPECT_EQ(h.Dv(t).inuse, 16u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 2047 - 16);
  // The next one comes from the fast path.
  EXPECT_EQ(h.Off(0, 4), 528u);
  EXPECT_EQ(h.sys.Hint(0, 4).offset, 544u);
}

// O3 / §2.4: a swap file (not BLKDEV) never gets large folios.
TEST(Alloc_2_4, LargeFoliosOnlyOnBlockDevices) {
  Harness h(Options(4, 1));
  SwaponOptions o = Dev("/swapfile", 64);
  o.blkdev = false;
  const int t = h.On(o);
  Folio& f = h.NewFolio(2);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_FALSE(f.in_swap_cache());
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3}));
  EXPECT_EQ(h.sys.counters().alloc_failures, 1u);
  EXPECT_EQ(h.Off(0, 0), 1u);  // order 0 works
}

// §2.3: for k > 0 only the first device of the avail list is tried.
TEST(Alloc_2_3, LargeFolioTriesOnlyFirstDevice) {
  Harness h(Options(4, 1));
  SwaponOptions a = Dev("a", 16);  // only cluster 0 (header): no free cluster
  a.prio = 10;
  SwaponOptions b = Dev("b", 64);
  b.prio = 5;
  const int A = h.On(a), B = h.On(b);
  Folio& f = h.NewFolio(2);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_EQ(h.Dv(B).inuse, 0u);
  EXPECT_EQ(h.Dv(A).inuse, 0u);
  EXPECT_EQ(h.Ent(0, 0), (SwapEntry{A, 1}));
}

// O3 + §2.3: the first device being a swap file, a large folio fails
// even though a lower-priority block device has room.
TEST(Alloc_2_3, LargeFolioFailsWhenFirstDeviceIsAFile) {
  Harness h(Options(4, 1));
  SwaponOptions a = Dev("/swapfile", 64);
  a.blkdev = false;
  a.prio = 10;
  SwaponOptions b = Dev("/dev/sdb", 64);
  b.prio = 5;
  h.On(a);
  const int B = h.On(b);
  Folio& f = h.NewFolio(3);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_EQ(h.Dv(B).inuse, 0u);
}

// §1.3 usable(): an allocation of order k > 0 goes only into an empty
// cluster or one of order k. §2.4 order for non-discard devices: nonfull[k]
// → free → frag[k] (one cluster).
TEST(Alloc_1_3, LargeOrderOnlyIntoEmptyOrSameOrderCluster) {
  Harness h(Options(4, 4));
  const int t = h.On(Dev("a", 80));  // clusters 0..4
  EXPECT_EQ(h.Off(0, 2), 16u);
  EXPECT_EQ(h.Off(0, 2), 20u);
  EXPECT_EQ(h.sys.Hint(0, 2).offset, 24u);
  EXPECT_EQ(h.Cl(t, 1).order, 2);
  // Cluster 1 has 8 free slots but order 2: order 1 takes a free cluster.
  EXPECT_EQ(h.Off(0, 1), 32u);
  EXPECT_EQ(h.Cl(t, 2).order, 1);
  EXPECT_EQ(h.L(t, ListId::kFrag, 1), (Offs{2}));
  // Order 2 on another CPU: nonfull[2] empty → free list (cluster 3), not
  // frag[2].
  EXPECT_EQ(h.Off(1, 2), 48u);
  EXPECT_EQ(h.L(t, ListId::kFrag, 2), (Offs{1, 3}));
  EXPECT_EQ(h.Off(2, 1), 64u);  // order 1, CPU 2: last free cluster
  EXPECT_TRUE(h.L(t, ListId::kFree).empty());
  // Order 2 on CPU 3: no nonfull, no free → frag[2] head (cluster 1),
  // scanned from its start: 16, 20 busy → 24.
  EXPECT_EQ(h.Off(3, 2), 24u);
  EXPECT_EQ(h.L(t, ListId::kFrag, 2), (Offs{3, 1}));
  EXPECT_EQ(h.sys.Hint(3, 2).offset, 28u);
}

// §2.6: candidates are aligned to 2^k; two free slots that straddle an
// alignment boundary are not an order-1 range.
TEST(Alloc_2_6, CandidatesAreAligned) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 48));
  std::vector<SwapEntry> e;
  for (int i = 0; i < 8; ++i) e.push_back(h.SwapOut(0, 1));  // 16, 18, ..., 30
  ASSERT_EQ(e[1].offset, 18u);
  ASSERT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFull);
  EXPECT_TRUE(h.PutDirect(SwapEntry{t, 19}).ok());
  EXPECT_TRUE(h.PutDirect(SwapEntry{t, 20}).ok());
  EXPECT_EQ(h.Cl(t, 1).count, 14u);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 1), (Offs{1}));
  // CPU 1: nonfull[1] → cluster 1 has no aligned free pair → relocated to
  // frag[1]; then the free list → cluster 2.
  EXPECT_EQ(h.Off(1, 1), 32u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFrag);
  EXPECT_EQ(h.L(t, ListId::kFrag, 1), (Offs{1, 2}));
  EXPECT_EQ(h.sys.Hint(1, 1).offset, 34u);
}

// §2.4: PMD order only comes from the free list; its nonfull list is not
// scanned (the partly freed PMD cluster stays where it is).
TEST(Alloc_2_4, PmdOrderOnlyFromFreeList) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 48));
  const SwapEntry a = h.SwapOut(0, 4);
  EXPECT_EQ(a.offset, 16u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFull);
  EXPECT_EQ(h.SwapOut(0, 4).offset, 32u);  // swapped out: reclaim cannot free it
  EXPECT_TRUE(h.PutDirect(SwapEntry{t, 16}, 8).ok());
  EXPECT_EQ(h.L(t, ListId::kNonfull, 4), (Offs{1}));
  Folio& f = h.NewFolio(4);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 4), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{2}));
  EXPECT_EQ(h.sys.counters().alloc_failures, 1u);
}

// §2.4 last step: order 0 steals from frag[o] then nonfull[o], o = 1..,
// after its own lists and the free list failed. Slots are swapped out
// (count 1), so the reclaim step (vm_swap_full) finds nothing.
TEST(Alloc_2_4, Order0StealsFromHigherOrders) {
  Harness h(Options(4, 4));
  const int t = h.On(Dev("a", 48));
  for (int i = 0; i < 15; ++i) h.SwapOut(0, 0);        // cluster 0 full
  for (int i = 0; i < 4; ++i) h.SwapOut(1, 2);         // cluster 1: 16..31, order 2
  EXPECT_EQ(h.SwapOut(2, 1).offset, 32u);              // cluster 2, order 1
  EXPECT_TRUE(h.PutDirect(SwapEntry{t, 20}, 4).ok());  // cluster 1 → nonfull[2]
  EXPECT_EQ(h.L(t, ListId::kNonfull, 2), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFrag, 1), (Offs{2}));
  ASSERT_TRUE(h.sys.vm_swap_full());
  // frag[1] is tried before nonfull[2].
  EXPECT_EQ(h.Off(3, 0), 34u);
  EXPECT_EQ(h.Cl(t, 2).order, 1);               // order-0 use does not change the order
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{0}));  // reclaim freed nothing, relocated
  for (uint64_t want = 35; want < 48; ++want) ASSERT_EQ(h.Off(3, 0), want);
  EXPECT_EQ(h.Cl(t, 2).flag, ClusterFlag::kFull);
  // frag[1] and nonfull[1] empty → frag[2] empty → nonfull[2] = cluster 1.
  EXPECT_EQ(h.Off(3, 0), 20u);
  EXPECT_EQ(h.Cl(t, 1).order, 2);
  EXPECT_EQ(h.L(t, ListId::kFrag, 2), (Offs{1}));
}

// §2.5: nonfull[k] is scanned "all clusters": a failing cluster is
// relocated (to frag[k]) and the next one is tried in the same call.
TEST(Alloc_2_5, NonfullScansAllClusters) {
  Harness h(Options(4, 2));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(h.SwapOut(0, 1).valid());  // clusters 1, 2
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 19}).ok());
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 20}).ok());  // cluster 1: no aligned pair
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 36}, 2).ok());
  ASSERT_EQ(h.L(t, ListId::kNonfull, 1), (Offs{1, 2}));
  EXPECT_EQ(h.Off(1, 1), 36u);
  EXPECT_EQ(h.L(t, ListId::kFrag, 1), (Offs{1}));
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{2}));
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 1).empty());
}

// §2.4 note: only one frag[k] cluster is tried per call; the failed one is
// relocated to the tail, so the next call reaches the other. The older
// kFragAll step (§10.2 step 4) rotates through the list in one call.
TEST(Alloc_2_4, OneFragClusterPerCall) {
  for (const char* preset : {"linux-6.18", "linux-6.15"}) {
    Result<Policy> p = Policy::Preset(preset);
    ASSERT_TRUE(p.ok());
    Harness h(Options(4, 3, *p));
    const int t = h.On(Dev("a", 64));
    for (int i = 0; i < 8; ++i) ASSERT_EQ(h.SwapOut(0, 1).offset, 16u + 2 * i);
    ASSERT_TRUE(h.PutDirect(SwapEntry{t, 19}).ok());
    ASSERT_TRUE(h.PutDirect(SwapEntry{t, 20}).ok());
    EXPECT_EQ(h.SwapOut(1, 1).offset, 32u) << preset;  // cluster 2 (free list)
    EXPECT_EQ(h.SwapOut(1, 4).offset, 48u) << preset;  // cluster 3: no free cluster left
    Folio& f = h.NewFolio(1);
    const Status st = h.Alloc(2, f);
    if (std::string(preset) == "linux-6.18") {
      // frag[1] = {1, 2}: cluster 1 (no aligned pair) is the one tried.
      EXPECT_ERRNO(st, -ENOMEM);
      EXPECT_EQ(h.L(t, ListId::kFrag, 1), (Offs{2, 1}));
      EXPECT_EQ(h.Off(2, 1), 34u);
    } else {
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(f.swap().offset, 34u);
    }
  }
}

// C5: every range handed out with order k > 0 lies in a cluster of order
// k, aligned to 2^k.
TEST(Alloc_8_C5, LargeRangesInClustersOfTheirOrder) {
  Harness h(Options(6, 2));  // CLUSTER 64
  const int t = h.On(Dev("a", 64 * 12));
  const int orders[] = {1, 3, 2, 1, 6, 3, 2, 2, 5, 1, 4, 3};
  for (int i = 0; i < 12; ++i) {
    Folio* f = h.AllocNew(i % 2, orders[i]);
    ASSERT_NE(f, nullptr) << i;
    const uint64_t off = f->swap().offset;
    EXPECT_EQ(off % (uint64_t{1} << orders[i]), 0u);
    EXPECT_EQ(h.Cl(t, off / 64).order, orders[i]);
  }
}

}  // namespace
}  // namespace swaplab::alloc::test
