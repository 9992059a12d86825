// SPDX-License-Identifier: MIT
// Bad input: every call returns the kernel's errno with a message and
// leaves every observable bit of state as it was (conventions: validate
// first, then mutate).
//
// Where the spec names no errno (put / free of a slot not in use: the
// kernel only warns) the test accepts -EINVAL or -ENOENT, the two codes the
// spec uses for "not a valid reference" (§3.2 step 1).
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

#define EXPECT_ERRNO_IN(status_expr, e1, e2)                                              \
  do {                                                                                    \
    const ::swaplab::Status st2_ = (status_expr);                                         \
    EXPECT_TRUE(st2_.code() == (e1) || st2_.code() == (e2)) << "got " << st2_.ToString(); \
    EXPECT_FALSE(st2_.message().empty());                                                 \
  } while (0)

// A device of 64 pages with bad page 5, a cached order-1 folio with count
// 1 (16, 17), a cache-only folio (1) and a swapped-out slot (2).
class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    SwaponOptions o = Dev("a", 64);
    o.bad_pages = {5};
    t = h.On(o);
    cache_only = h.AllocNew(0);
    shadow = h.SwapOut(0);
    cached = h.AllocNew(0, 1);
    ASSERT_NE(cached, nullptr);
    ASSERT_TRUE(h.Dup(*cached).ok());
    ASSERT_EQ(cache_only->swap().offset, 1u);
    ASSERT_EQ(shadow.offset, 2u);
    ASSERT_EQ(cached->swap().offset, 16u);
    before = Snapshot(h.sys);
  }
  void ExpectUnchanged() {
    EXPECT_EQ(Snapshot(h.sys), before);
    EXPECT_INVARIANTS(h.sys);
  }
  Harness h{Options(4, 2)};
  int t = -1;
  Folio* cache_only = nullptr;
  Folio* cached = nullptr;
  SwapEntry shadow;
  std::string before;
};

// §2.1 step 1: 2^k > CLUSTER → EINVAL.
TEST_F(BadInput, Alloc_2_1_OrderBeyondCluster) {
  Folio& f = h.NewFolio(5);  // CLUSTER = 16 = 2^4
  EXPECT_ERRNO(h.Alloc(0, f), -EINVAL);
  EXPECT_FALSE(f.in_swap_cache());
  ExpectUnchanged();
}

TEST(BadInputDefault, Alloc_2_1_OrderTenWithDefaultCluster) {
  Harness h(Options(kDefaultClusterShift, 1));
  h.On(Dev("a", 2048));
  const std::string before = Snapshot(h.sys);
  Folio& f = h.NewFolio(10);
  EXPECT_ERRNO(h.Alloc(0, f), -EINVAL);
  EXPECT_EQ(Snapshot(h.sys), before);
  ASSERT_INVARIANTS(h.sys);
}

// Folio contract (folio.h): unlocked or already cached folios → EINVAL.
TEST_F(BadInput, Alloc_2_1_UnlockedFolio) {
  Folio& f = h.NewFolio(0);
  EXPECT_ERRNO(h.sys.FolioAllocSwap(0, f), -EINVAL);
  ExpectUnchanged();
}

TEST_F(BadInput, Alloc_2_1_FolioAlreadyInSwapCache) {
  EXPECT_ERRNO(h.Alloc(0, *cached), -EINVAL);
  EXPECT_EQ(cached->swap().offset, 16u);
  ExpectUnchanged();
}

// §2.10 caller contract (swap_system.h): each split page listed once; a
// page listed twice would be locked twice for the call.
TEST_F(BadInput, SwapOut_2_10_SplitPageListedTwice) {
  Folio& f = h.NewFolio(1);
  Folio& p0 = h.NewFolio(0);
  Folio* const twice[] = {&p0, &p0};
  FolioLockGuard g(f);
  auto r = h.sys.SwapOutFolio(0, f, twice);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), -EINVAL);
  EXPECT_NE(r.status().message().find("twice"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(p0.locked());
  EXPECT_FALSE(f.in_swap_cache());
  ExpectUnchanged();
}

// The split pages are validated and locked in one pass: an error found at
// page 3 (listed twice, not next to its first listing) or at the last page
// (locked by someone else) unlocks the pages locked before it.
TEST_F(BadInput, SwapOut_2_10_SplitPagesErrorLeavesNoneLocked) {
  Folio& f = h.NewFolio(2);
  Folio& p0 = h.NewFolio(0);
  Folio& p1 = h.NewFolio(0);
  Folio& p2 = h.NewFolio(0);
  Folio& p3 = h.NewFolio(0);
  FolioLockGuard g(f);
  Folio* const twice[] = {&p0, &p1, &p2, &p1};
  auto r = h.sys.SwapOutFolio(0, f, twice);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("twice"), std::string::npos) << r.status().ToString();
  Folio* const last_locked[] = {&p0, &p1, &p2, &p3};
  p3.Lock();
  auto r2 = h.sys.SwapOutFolio(0, f, last_locked);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), -EINVAL);
  EXPECT_NE(r2.status().message().find("unlocked"), std::string::npos) << r2.status().ToString();
  p3.Unlock();
  for (Folio* p : {&p0, &p1, &p2, &p3}) EXPECT_FALSE(p->locked());
  EXPECT_FALSE(f.in_swap_cache());
  ExpectUnchanged();
  // The same pages, valid: placed whole, every split page unlocked after.
  auto ok = h.sys.SwapOutFolio(0, f, last_locked);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(f.in_swap_cache());
  for (Folio* p : {&p0, &p1, &p2, &p3}) EXPECT_FALSE(p->locked());
}

// §3.3: put needs count > 0 — a free slot, and a double free.
TEST_F(BadInput, Put_3_3_PutOfFreeSlot) {
  EXPECT_ERRNO_IN(h.sys.SwapPutEntriesDirect(SwapEntry{t, 9}), -EINVAL, -ENOENT);
  ExpectUnchanged();
}

TEST_F(BadInput, Put_3_3_DoubleFree) {
  ASSERT_TRUE(h.PutDirect(shadow).ok());
  before = Snapshot(h.sys);
  EXPECT_ERRNO_IN(h.sys.SwapPutEntriesDirect(shadow), -EINVAL, -ENOENT);
  ExpectUnchanged();
}

// A range with one slot not in use is rejected as a whole.
TEST_F(BadInput, Put_3_3_RangeWithFreeSlot) {
  EXPECT_ERRNO_IN(h.sys.SwapPutEntriesDirect(shadow, 3), -EINVAL, -ENOENT);  // 2, 3(free), 4
  ExpectUnchanged();
}

TEST_F(BadInput, Put_3_3_FolioPutBelowZero) {
  FolioLockGuard g(*cache_only);
  EXPECT_ERRNO_IN(h.sys.FolioPutSwap(*cache_only), -EINVAL, -ENOENT);
  ExpectUnchanged();
}

TEST_F(BadInput, Put_3_3_PutOfBadSlot) {
  EXPECT_ERRNO_IN(h.sys.SwapPutEntriesDirect(SwapEntry{t, 5}), -EINVAL, -ENOENT);
  ExpectUnchanged();
}

// §3.4: a folio not in the swap cache cannot leave it again.
TEST_F(BadInput, Cache_3_4_DelOfFolioNotInCache) {
  Folio& f = h.NewFolio(0);
  FolioLockGuard g(f);
  EXPECT_ERRNO(h.sys.SwapCacheDelFolio(f), -EINVAL);
  ExpectUnchanged();
}

TEST_F(BadInput, Cache_3_4_DelWithoutFolioLock) {
  EXPECT_ERRNO(h.sys.SwapCacheDelFolio(*cached), -EINVAL);
  ExpectUnchanged();
}

// §3.2 step 1: count 0 and not cached → ENOENT; BAD → EINVAL.
TEST_F(BadInput, Dup_3_2_DirectDupOfFreeSlot) {
  EXPECT_ERRNO(h.sys.SwapDupEntryDirect(SwapEntry{t, 9}), -ENOENT);
  ExpectUnchanged();
}

TEST_F(BadInput, Dup_3_2_DirectDupOfBadSlot) {
  EXPECT_ERRNO(h.sys.SwapDupEntryDirect(SwapEntry{t, 5}), -EINVAL);
  ExpectUnchanged();
}

TEST_F(BadInput, Dup_3_2_FolioDupNotInCache) {
  Folio& f = h.NewFolio(0);
  FolioLockGuard g(f);
  EXPECT_ERRNO_IN(h.sys.FolioDupSwap(f), -EINVAL, -ENOENT);
  ExpectUnchanged();
}

TEST_F(BadInput, Dup_3_2_FolioDupPageOutOfRange) {
  FolioLockGuard g(*cached);
  EXPECT_ERRNO(h.sys.FolioDupSwap(*cached, 2), -EINVAL);
  ExpectUnchanged();
}

// Unknown device types (never used, out of range, negative).
TEST_F(BadInput, UnknownDevice) {
  for (int type : {7, kMaxSwapfiles, -2}) {
    const SwapEntry e{type, 1};
    EXPECT_ERRNO(h.sys.SwapDupEntryDirect(e), -EINVAL);
    EXPECT_ERRNO(h.sys.SwapPutEntriesDirect(e), -EINVAL);
    EXPECT_ERRNO(h.sys.Swapoff(type), -EINVAL);
    EXPECT_ERRNO(h.sys.ReclaimFullClusters(type, true), -EINVAL);
    EXPECT_ERRNO(h.sys.Device(type).status(), -EINVAL);
    EXPECT_ERRNO(h.sys.Cluster(type, 0).status(), -EINVAL);
    EXPECT_ERRNO(h.sys.Slot(e).status(), -EINVAL);
    EXPECT_ERRNO_IN(h.sys.FreeHibernationSlot(e), -EINVAL, -ENOENT);
    EXPECT_EQ(h.sys.TryToReclaimSwap(e, kReclaimAnyway), 0);
    Folio& f = h.NewFolio(0);
    FolioLockGuard g(f);
    EXPECT_ERRNO(h.sys.SwapCacheAddFolio(f, e), -EINVAL);
  }
  ExpectUnchanged();
}

// Offsets at or past max (64): EINVAL everywhere, including ranges that
// cross max.
TEST_F(BadInput, OffsetsPastTheEnd) {
  for (uint64_t off : {64ull, 65ull, 1000ull}) {
    const SwapEntry e{t, off};
    EXPECT_ERRNO(h.sys.SwapDupEntryDirect(e), -EINVAL);
    EXPECT_ERRNO(h.sys.SwapPutEntriesDirect(e), -EINVAL);
    EXPECT_ERRNO(h.sys.Slot(e).status(), -EINVAL);
  }
  EXPECT_ERRNO(h.sys.Cluster(t, 4).status(), -EINVAL);
  EXPECT_ERRNO(h.sys.SwapPutEntriesDirect(SwapEntry{t, 62}, 4), -EINVAL);
  ExpectUnchanged();
}

// Swap-in over slots that are not SHADOW: kernel swapcache_prepare gives
// ENOENT for a free slot and EEXIST for one already cached; a misaligned
// large folio is EINVAL (S4).
TEST_F(BadInput, Cache_3_1_SwapInOverWrongSlots) {
  Folio& f = h.NewFolio(0);
  Folio& g = h.NewFolio(1);
  {
    FolioLockGuard l(f);
    EXPECT_ERRNO(h.sys.SwapCacheAddFolio(f, SwapEntry{t, 9}), -ENOENT);
    EXPECT_ERRNO(h.sys.SwapCacheAddFolio(f, SwapEntry{t, 16}), -EEXIST);
  }
  {
    FolioLockGuard l(g);
    EXPECT_ERRNO(h.sys.SwapCacheAddFolio(g, SwapEntry{t, 3}), -EINVAL);
  }
  EXPECT_ERRNO(h.sys.SwapCacheAddFolio(f, shadow), -EINVAL);  // not locked
  ExpectUnchanged();
}

// §5.1: swapon errors leave no trace (the record is not consumed).
TEST(BadInputSwapon, Swapon_5_1_Rejections) {
  Harness h(Options(4, 1));
  const int a = h.On(Dev("a", 64));
  ASSERT_EQ(a, 0);
  const std::string before = Snapshot(h.sys);
  auto rejected = [&](SwaponOptions o, int want, const char* what) {
    Result<int> r = h.sys.Swapon(o);
    EXPECT_FALSE(r.ok()) << what;
    EXPECT_ERRNO(r.status(), want);
    EXPECT_EQ(Snapshot(h.sys), before) << what;
    EXPECT_INVARIANTS(h.sys);
  };
  rejected(Dev("a", 64), -EBUSY, "same name twice");
  rejected(Dev("b", 0), -EINVAL, "zero-sized");
  rejected(Dev("b", 1), -EINVAL, "header only (last_page 0)");
  SwaponOptions o = Dev("b", 64);
  o.bad_pages = {0};
  rejected(o, -EINVAL, "bad page 0 (the header)");
  o.bad_pages = {64};
  rejected(o, -EINVAL, "bad page past last_page");
  o.bad_pages = {7, 9, 7};
  rejected(o, -EINVAL, "duplicated bad page");
  o = Dev("b", 3);
  o.bad_pages = {1, 2};
  rejected(o, -EINVAL, "no usable page left");
  o = Dev("b", 64);
  o.blkdev = false;
  o.bad_pages = {3};
  rejected(o, -EINVAL, "regular file with bad pages");
  o = Dev("b", 64);
  o.prio = 32768;
  rejected(o, -EINVAL, "priority above 32767");
  o.prio = -5;
  rejected(o, -EINVAL, "negative priority");
  o = Dev("b", 2000);
  for (uint64_t p = 1; p <= 1000; ++p) o.bad_pages.push_back(p);
  rejected(o, -EINVAL, "more than MAX_SWAP_BADPAGES (637 with 4 KiB pages)");
  EXPECT_EQ(h.On(Dev("b", 64)), 1);  // the next record is still type 1
}

// §5.2: swapoff of a device that is not active.
TEST(BadInputSwapoff, Swapoff_5_2_Twice) {
  Harness h(Options(4, 1));
  const int a = h.On(Dev("a", 64));
  h.On(Dev("b", 64));
  ASSERT_TRUE(h.SwapOff(a).ok());
  const std::string before = Snapshot(h.sys);
  EXPECT_ERRNO(h.sys.Swapoff(a), -EINVAL);
  EXPECT_EQ(Snapshot(h.sys), before);
  ASSERT_INVARIANTS(h.sys);
}

}  // namespace
}  // namespace swaplab::alloc::test
