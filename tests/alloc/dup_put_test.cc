// SPDX-License-Identifier: MIT
// §3.2 increasing a count (folio_dup_swap, swap_dup_entry_direct, extend
// table) and §3.3 decreasing it (folio_put_swap, swap_put_entries_direct
// with its cache reclaim step).
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

void SetMapped(Folio& f, bool mapped) {
  FolioLockGuard g(f);
  f.mapped = mapped;
}

// §3.2: +1 on every slot of the folio, or on one page's slot.
TEST(Dup_3_2, FolioDupAllPagesOrOnePage) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 2);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(h.Dup(*f).ok());
  ASSERT_TRUE(h.Dup(*f, 2).ok());
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(h.Sl(t, 16 + p).kind, SlotKind::kCached);
    EXPECT_EQ(h.Sl(t, 16 + p).count, p == 2 ? 2u : 1u);
  }
  EXPECT_EQ(h.Dv(t).inuse, 4u);
}

// §3.3: folio_put_swap never frees, the folio stays cached.
TEST(Put_3_3, FolioPutNeverFrees) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 1);
  ASSERT_TRUE(h.Dup(*f).ok());
  ASSERT_TRUE(h.Put(*f).ok());
  EXPECT_TRUE(f->in_swap_cache());
  EXPECT_EQ(h.Sl(t, 16).kind, SlotKind::kCached);
  EXPECT_EQ(h.Sl(t, 16).count, 0u);
  EXPECT_EQ(h.Sl(t, 17).count, 0u);
  EXPECT_EQ(h.Dv(t).inuse, 2u);
}

// §3.2: swap_dup_entry_direct adds one to a slot that has a count.
TEST(Dup_3_2, DirectDupOnSwappedOutSlot) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.SwapOut(0);
  ASSERT_TRUE(h.DupDirect(e).ok());
  EXPECT_EQ(h.Sl(t, e.offset).count, 2u);
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Dv(t).inuse, 1u);
  ASSERT_TRUE(h.PutDirect(e).ok());
  EXPECT_EQ(h.Sl(t, e.offset).count, 1u);
  ASSERT_TRUE(h.PutDirect(e).ok());
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
}

// §3.2 steps 2-4, §3.3 put_one, S3: counts past COUNT_MAX − 1 live in the
// extend table, which exists only while some slot of the cluster uses it.
TEST(Dup_3_2, ExtendTableBeyondCountMax) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry a = h.SwapOut(0);
  const SwapEntry b = h.SwapOut(0);
  ASSERT_EQ(a.offset / 16, b.offset / 16);
  for (uint32_t c = 2; c <= 14; ++c) {
    ASSERT_TRUE(h.DupDirect(a).ok());
    ASSERT_EQ(h.Sl(t, a.offset).count, c);
  }
  EXPECT_FALSE(h.Cl(t, 0).has_extend_table);
  ASSERT_TRUE(h.DupDirect(a).ok());  // 14 → 15: extend table created
  EXPECT_EQ(h.Sl(t, a.offset).count, 15u);
  EXPECT_TRUE(h.Cl(t, 0).has_extend_table);
  for (int i = 0; i < 25; ++i) ASSERT_TRUE(h.DupDirect(a).ok());
  EXPECT_EQ(h.Sl(t, a.offset).count, 40u);
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(h.DupDirect(b).ok());
  EXPECT_EQ(h.Sl(t, b.offset).count, 16u);
  // a: 40 → 14 clears a's extend entry; b still uses the table.
  for (int i = 0; i < 26; ++i) ASSERT_TRUE(h.PutDirect(a).ok());
  EXPECT_EQ(h.Sl(t, a.offset).count, 14u);
  EXPECT_TRUE(h.Cl(t, 0).has_extend_table);
  ASSERT_TRUE(h.PutDirect(b).ok());
  EXPECT_EQ(h.Sl(t, b.offset).count, 15u);
  EXPECT_TRUE(h.Cl(t, 0).has_extend_table);
  ASSERT_TRUE(h.PutDirect(b).ok());  // 15 → 14: table released
  EXPECT_EQ(h.Sl(t, b.offset).count, 14u);
  EXPECT_FALSE(h.Cl(t, 0).has_extend_table);
  EXPECT_EQ(h.Dv(t).inuse, 2u);
}

// §1.4 / U6: COUNT_MAX is a parameter (5 count bits → 31).
TEST(Dup_1_4, CountMaxIsAParameter) {
  Policy p = PrimaryPolicy();
  p.count_max = 31;
  ASSERT_TRUE(p.Validate().ok());
  Harness h(Options(4, 1, p));
  const int t = h.On(Dev("a", 64));
  const SwapEntry a = h.SwapOut(0);
  for (int i = 0; i < 29; ++i) ASSERT_TRUE(h.DupDirect(a).ok());
  EXPECT_EQ(h.Sl(t, a.offset).count, 30u);
  EXPECT_FALSE(h.Cl(t, 0).has_extend_table);
  ASSERT_TRUE(h.DupDirect(a).ok());
  EXPECT_EQ(h.Sl(t, a.offset).count, 31u);
  EXPECT_TRUE(h.Cl(t, 0).has_extend_table);
}

// §3.2: folio_dup_swap goes through the extend table the same way.
TEST(Dup_3_2, FolioDupUsesExtendTable) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 1);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(h.Dup(*f).ok());
  EXPECT_EQ(h.Sl(t, 16).count, 20u);
  EXPECT_EQ(h.Sl(t, 17).count, 20u);
  EXPECT_TRUE(h.Cl(t, 1).has_extend_table);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(h.Put(*f).ok());
  EXPECT_FALSE(h.Cl(t, 1).has_extend_table);
  EXPECT_EQ(h.Sl(t, 16).kind, SlotKind::kCached);
  EXPECT_EQ(h.Sl(t, 16).count, 0u);
}

// §3.3 step 3: a CACHED slot whose count drops to 0 in a zap makes its
// folio a candidate; UNMAPPED reclaims it when nothing maps it.
TEST(Put_3_3, ZapReclaimsUnmappedCachedFolio) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 2);
  ASSERT_TRUE(h.Dup(*f).ok());
  SetMapped(*f, false);
  const SwapEntry e = f->swap();
  ASSERT_TRUE(h.PutDirect(e, 4).ok());
  EXPECT_FALSE(f->in_swap_cache());
  EXPECT_TRUE(f->dirty);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(h.Sl(t, e.offset + p).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  EXPECT_EQ(h.sys.counters().folios_reclaimed, 1u);
}

// §3.3 step 3 / §4.2 step 4: a still-mapped folio is kept unless swap is
// more than half full (FULL → mem_cgroup_swap_full → vm_swap_full).
TEST(Put_3_3, ZapKeepsMappedFolioUnlessSwapFull) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 32));  // 31 usable
  Folio* f = h.AllocNew(0, 0);
  ASSERT_TRUE(h.Dup(*f).ok());
  ASSERT_TRUE(h.PutDirect(f->swap()).ok());
  EXPECT_TRUE(f->in_swap_cache());
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kCached);
  EXPECT_EQ(h.Sl(t, 1).count, 0u);
  ASSERT_FALSE(h.sys.vm_swap_full());
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  ASSERT_TRUE(h.sys.vm_swap_full());  // 2 × 15 < 31
  Folio* g = h.AllocNew(0, 0);
  ASSERT_TRUE(h.Dup(*g).ok());
  const SwapEntry ge = g->swap();
  ASSERT_TRUE(h.PutDirect(ge).ok());
  EXPECT_FALSE(g->in_swap_cache());
  EXPECT_EQ(h.Sl(t, ge.offset).kind, SlotKind::kEmpty);
}

}  // namespace
}  // namespace swaplab::alloc::test

namespace swaplab::alloc::test {
namespace {

// §3.2 "without memory": a multi-slot dup that needs the extend table fails
// with -ENOMEM and changes nothing (all or nothing), while slots below
// COUNT_MAX − 1 still dup.
TEST(Dup_3_2, ExtendTableAllocationFailureIsAllOrNothing) {
  SystemOptions o = Options(4, 1);
  o.fail_extend_table_alloc = true;
  Harness h(std::move(o));
  const int t = h.On(Dev("a", 64));
  Folio* f = h.AllocNew(0, 1);  // two slots, 16 and 17
  ASSERT_NE(f, nullptr);
  for (int i = 0; i < 14; ++i) ASSERT_TRUE(h.Dup(*f, 0).ok());  // slot 16: 14
  ASSERT_EQ(h.Sl(t, 16).count, 14u);
  const std::string before = Snapshot(h.sys);
  Status st;
  {
    FolioLockGuard g(*f);
    st = h.sys.FolioDupSwap(*f);  // slot 16 needs the table, slot 17 would go 0 → 1
  }
  EXPECT_EQ(st.code(), -ENOMEM) << st.ToString();
  EXPECT_FALSE(st.message().empty());
  EXPECT_EQ(Snapshot(h.sys), before);
  EXPECT_EQ(h.Sl(t, 17).count, 0u);
  EXPECT_FALSE(h.Cl(t, 1).has_extend_table);
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.Dup(*f, 1).ok());  // a slot that needs no table still works
  EXPECT_EQ(h.Sl(t, 17).count, 1u);
}

}  // namespace
}  // namespace swaplab::alloc::test
