// SPDX-License-Identifier: MIT
// §7 counters a user sees: swpout / pswpout / thp_swpout at write-out,
// swpout_fallback / thp_swpout_fallback where the caller splits (§2.10),
// alloc_failures, /proc/swaps Used.
#include <gtest/gtest.h>

#include <array>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

struct Split {
  explicit Split(Harness& h, int n) {
    for (int i = 0; i < n; ++i) pages.push_back(&h.NewFolio(0));
  }
  std::vector<Folio*> pages;
};

Result<SwapOutResult> SwapOutFolio(Harness& h, CpuId cpu, Folio& f, const Split& s) {
  f.Lock();
  Result<SwapOutResult> r = h.sys.SwapOutFolio(cpu, f, s.pages);
  f.Unlock();
  h.Check("SwapOutFolio");
  return r;
}

// §7: a large folio written in one piece counts swpout[order] once and
// pswpout per page; PMD order also counts thp_swpout.
TEST(Counters_7, SwapOutInOnePiece) {
  Harness h(Options(4, 1));  // PMD order 4
  h.On(Dev("zram0", 64));
  Folio& f = h.NewFolio(2);
  Split s(h, 4);
  Result<SwapOutResult> r = SwapOutFolio(h, 0, f, s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->split);
  EXPECT_EQ(r->pages_placed, 4);
  EXPECT_TRUE(f.in_swap_cache());
  SwapCounters c = h.sys.counters();
  EXPECT_EQ(c.swpout[2], 1u);
  EXPECT_EQ(c.pswpout, 4u);
  EXPECT_EQ(c.thp_swpout, 0u);
  EXPECT_EQ(c.swpout_fallback[2], 0u);
  Folio& pmd = h.NewFolio(4);
  Split s2(h, 16);
  r = SwapOutFolio(h, 0, pmd, s2);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->split);
  c = h.sys.counters();
  EXPECT_EQ(c.swpout[4], 1u);
  EXPECT_EQ(c.thp_swpout, 1u);
  EXPECT_EQ(c.pswpout, 20u);
}

// §2.10: allocation failure of a large folio splits it: swpout_fallback
// for the original order, each page placed at order 0: page 0 first, then
// the tails last-first (v6.15+, split_tails_last_first) or in page order.
TEST(Counters_7, FallbackOnSwapFile) {
  for (const bool last_first : {false, true}) {
    SCOPED_TRACE(last_first ? "tails last-first" : "page order");
    SystemOptions so = Options(4, 1);
    so.policy.split_tails_last_first = last_first;
    Harness h(so);
    SwaponOptions o = Dev("/swapfile", 64);
    o.blkdev = false;
    const int t = h.On(o);
    Folio& f = h.NewFolio(2);
    Split s(h, 4);
    Result<SwapOutResult> r = SwapOutFolio(h, 0, f, s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->split);
    EXPECT_EQ(r->pages_placed, 4);
    EXPECT_FALSE(f.in_swap_cache());
    const std::array<uint64_t, 4> want =
        last_first ? std::array<uint64_t, 4>{1, 4, 3, 2} : std::array<uint64_t, 4>{1, 2, 3, 4};
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(s.pages[i]->swap(), (SwapEntry{t, want[i]})) << "page " << i;
      EXPECT_EQ(h.Sl(t, want[i]).folio, s.pages[i]);
    }
    SwapCounters c = h.sys.counters();
    EXPECT_EQ(c.swpout_fallback[2], 1u);
    EXPECT_EQ(c.swpout[2], 0u);
    EXPECT_EQ(c.thp_swpout_fallback, 0u);
    EXPECT_EQ(c.pswpout, 4u);
    EXPECT_EQ(h.Dv(t).inuse, 4u);
    // PMD order also counts thp_swpout_fallback.
    Folio& pmd = h.NewFolio(4);
    Split s2(h, 16);
    r = SwapOutFolio(h, 0, pmd, s2);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->split);
    c = h.sys.counters();
    EXPECT_EQ(c.swpout_fallback[4], 1u);
    EXPECT_EQ(c.thp_swpout_fallback, 1u);
    EXPECT_EQ(c.thp_swpout, 0u);
    EXPECT_EQ(c.pswpout, 20u);
  }
}

// §7: folio_alloc_swap returning ENOMEM counts a failure; nothing counts
// swpout or pswpout at allocation time.
TEST(Counters_7, AllocationCountsNoWriteOut) {
  Harness h(Options(4, 1));
  h.On(Dev("a", 16));
  // Swapped out (count 1): the reclaim work scheduled when the device
  // becomes full (§2.8 step 5) cannot free them.
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  Folio& f = h.NewFolio(0);
  EXPECT_ERRNO(h.Alloc(0, f), -ENOMEM);
  const SwapCounters c = h.sys.counters();
  EXPECT_EQ(c.alloc_failures, 1u);
  EXPECT_EQ(c.pswpout, 0u);
  EXPECT_EQ(c.swpout[0], 0u);
}

// §7 /proc/swaps: Used counts cache-only and hibernation slots.
TEST(Counters_7, ProcSwapsUsedIncludesCacheOnlyAndHibernation) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("/dev/vdb", 64));
  ASSERT_NE(h.AllocNew(0, 1), nullptr);                   // 2 cache-only
  ASSERT_TRUE(h.sys.AllocHibernationSlot(0, t).valid());  // 1
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.SwapOut(0).valid());  // 1
  const std::string ps = h.sys.ProcSwaps();
  std::istringstream in(ps);
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, type;
    uint64_t size = 0, used = 0;
    ls >> name >> type >> size >> used;
    if (name != "/dev/vdb") continue;
    found = true;
    EXPECT_EQ(size, 63u * 4);
    EXPECT_EQ(used, 4u * 4);
  }
  EXPECT_TRUE(found) << ps;
}

}  // namespace
}  // namespace swaplab::alloc::test
