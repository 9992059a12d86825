// SPDX-License-Identifier: MIT
// §3.1 life of a page, §3.4 dropping the swap cache (swap_cache_del_folio,
// folio_free_swap), §1.4 counts kept across CACHED ⇄ SHADOW.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// §3.1 steps 1-4 and §3.4 folio_free_swap.
TEST(Cache_3_1, LifeOfAnAnonymousPage) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0);
  ASSERT_NE(f, nullptr);
  const SwapEntry e = f->swap();
  EXPECT_EQ(e, (SwapEntry{t, 1}));
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kCached);  // 1. CACHED, count 0
  EXPECT_EQ(h.Sl(t, 1).count, 0u);
  EXPECT_EQ(h.Sl(t, 1).folio, f);
  ASSERT_TRUE(h.Dup(*f).ok());  // 2. unmap: one mapping
  EXPECT_EQ(h.Sl(t, 1).count, 1u);
  ASSERT_TRUE(h.Del(*f).ok());  // 3. written and reclaimed
  EXPECT_FALSE(f->in_swap_cache());
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, 1).count, 1u);
  EXPECT_EQ(h.Dv(t).inuse, 1u);
  Folio& in = h.NewFolio(0);  // 4. fault: swap-in, then map
  ASSERT_TRUE(h.AddCache(in, e).ok());
  EXPECT_EQ(in.swap(), e);
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kCached);
  EXPECT_EQ(h.Sl(t, 1).count, 1u);
  EXPECT_EQ(h.Sl(t, 1).folio, &in);
  ASSERT_TRUE(h.Put(in).ok());
  EXPECT_EQ(h.Sl(t, 1).count, 0u);
  EXPECT_EQ(h.Dv(t).inuse, 1u);  // cache-only still occupies the slot
  EXPECT_TRUE(h.FreeSwap(in));
  EXPECT_FALSE(in.in_swap_cache());
  EXPECT_TRUE(in.dirty);
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63);
}

// §3.4: deleting from the cache frees exactly the slots with count 0 and
// turns the others into SHADOW keeping their counts.
TEST(Cache_3_4, DelFreesCountZeroSlotsKeepsOthersAsShadow) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 2);
  ASSERT_TRUE(h.Dup(*f, 1).ok());
  ASSERT_TRUE(h.Dup(*f, 3).ok());
  ASSERT_TRUE(h.Dup(*f, 3).ok());
  ASSERT_TRUE(h.Del(*f).ok());
  EXPECT_FALSE(f->in_swap_cache());
  EXPECT_EQ(h.Sl(t, 16).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 17).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, 17).count, 1u);
  EXPECT_EQ(h.Sl(t, 18).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 19).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, 19).count, 2u);
  EXPECT_EQ(h.Cl(t, 1).count, 2u);
  EXPECT_EQ(h.Dv(t).inuse, 2u);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 2), (Offs{1}));
}

// §3.4: all counts 0 → the whole folio is freed as one batch; the cluster
// empties and goes to the free list.
TEST(Cache_3_4, DelWithAllCountsZeroFreesEverything) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 3);
  ASSERT_EQ(f->swap().offset, 16u);
  ASSERT_EQ(h.sys.nr_swap_pages(), 63 - 8);
  ASSERT_TRUE(h.Del(*f).ok());
  EXPECT_EQ(h.sys.nr_swap_pages(), 63);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFree);
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3, 1}));
}

// §3.4: folio_free_swap only for a freeable folio (not under writeback,
// storage not suspended) without references.
TEST(Cache_3_4, FolioFreeSwapRequiresFreeableAndNoReferences) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 1);
  ASSERT_TRUE(h.Dup(*f, 0).ok());
  EXPECT_FALSE(h.FreeSwap(*f));  // page 0 has a reference
  EXPECT_TRUE(f->in_swap_cache());
  ASSERT_TRUE(h.Put(*f, 0).ok());
  {
    FolioLockGuard g(*f);
    f->writeback = true;
  }
  EXPECT_FALSE(h.FreeSwap(*f));
  {
    FolioLockGuard g(*f);
    f->writeback = false;
  }
  h.sys.SetStorageSuspended(true);
  EXPECT_FALSE(h.FreeSwap(*f));
  EXPECT_EQ(h.Dv(t).inuse, 2u);
  EXPECT_FALSE(f->dirty);
  h.sys.SetStorageSuspended(false);
  EXPECT_TRUE(h.FreeSwap(*f));
  EXPECT_TRUE(f->dirty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
}

// §1.4: CACHED keeps its count when it leaves the cache and vice versa.
TEST(Cache_1_4, CountKeptAcrossCacheTransitions) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.SwapOut(0);
  ASSERT_TRUE(h.DupDirect(e).ok());
  ASSERT_TRUE(h.DupDirect(e).ok());
  Folio& in = h.NewFolio(0);
  ASSERT_TRUE(h.AddCache(in, e).ok());
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kCached);
  EXPECT_EQ(h.Sl(t, e.offset).count, 3u);
  ASSERT_TRUE(h.Del(in).ok());
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(t, e.offset).count, 3u);
}

// §3.1 step 4 / C5 note: swap-in may build a large cached folio over slots
// that were allocated one by one (aligned, inside one cluster).
TEST(Cache_3_1, SwapInLargeFolioOverOrder0Slots) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.SwapOut(0).valid());  // 1, 2, 3
  Folio& in = h.NewFolio(1);
  ASSERT_TRUE(h.AddCache(in, SwapEntry{t, 2}).ok());
  EXPECT_EQ(h.Sl(t, 2).folio, &in);
  EXPECT_EQ(h.Sl(t, 3).folio, &in);
  EXPECT_EQ(h.Sl(t, 3).count, 1u);
  EXPECT_EQ(h.Cl(t, 0).order, 0);
  ASSERT_TRUE(h.Put(in).ok());
  EXPECT_TRUE(h.FreeSwap(in));
  EXPECT_EQ(h.Dv(t).inuse, 1u);
}

}  // namespace
}  // namespace swaplab::alloc::test
