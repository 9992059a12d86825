// SPDX-License-Identifier: MIT
// The RFC's hibernation session (seed 001 patches 5, 6, 9, 10; hibernation
// spec §9.5-§9.8) on the allocator.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

constexpr uint32_t kCs = 16;  // cluster_shift 4

SwaponOptions HibDev(uint64_t pages, uint64_t reserve = 0) {
  SwaponOptions d = Dev("hib", pages);
  d.bdev = 0x0801;
  d.hibernation_reserve_pages = reserve;
  return d;
}

// Fills whole clusters with order-0 folios, then frees them cluster by
// cluster in a shuffled order, so the free list is not in disk order.
std::vector<uint64_t> ShuffleFreeList(Harness& h, int nclusters, uint64_t seed) {
  std::vector<std::vector<Folio*>> by_cluster(64);
  for (int i = 0; i < nclusters * static_cast<int>(kCs); ++i) {
    Folio* f = h.AllocNew(0, 0);
    if (f == nullptr) break;
    by_cluster[f->swap().offset / kCs].push_back(f);
  }
  std::vector<uint64_t> order;
  for (uint64_t c = 1; c < by_cluster.size(); ++c) {
    if (by_cluster[c].size() == kCs) order.push_back(c);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  for (uint64_t c : order) {
    for (Folio* f : by_cluster[c]) EXPECT_TRUE(h.Del(*f).ok());
  }
  return order;
}

TEST(HibSession_9_5, NotSuspendedGivesSingleSlotsFromTheOldPath) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(16 * kCs));
  ASSERT_TRUE(h.sys.HibernationBind(t).ok());
  auto r = h.sys.AllocHibernationRun(0);
  EXPECT_EQ(r.nr, 1u);
  EXPECT_EQ(r.first.offset, 1u);  // nonfull[0] first: cluster 0 after the header
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.sys.FreeHibernationRun(r.first, r.nr).ok());
  h.sys.HibernationUnbind();
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_6, SuspendedClaimsTheFreeListAndHandsClustersOutInDiskOrder) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(16 * kCs));
  const auto shuffled = ShuffleFreeList(h, 10, 7);
  ASSERT_GE(shuffled.size(), 5u);
  auto free_before = *h.sys.List(t, ListId::kFree);
  ASSERT_FALSE(std::is_sorted(free_before.begin(), free_before.end()));
  const uint64_t inuse_before = h.Dv(t).inuse;  // folios left in partial clusters
  ASSERT_TRUE(h.sys.HibernationBind(t, /*sort_claimed=*/true).ok());
  h.sys.SetStorageSuspended(true);
  std::vector<uint64_t> got;
  for (size_t i = 0; i < free_before.size(); ++i) {
    auto r = h.sys.AllocHibernationRun(0);
    ASSERT_EQ(r.nr, kCs);
    ASSERT_EQ(r.first.offset % kCs, 0u);
    got.push_back(r.first.offset / kCs);
    ASSERT_INVARIANTS(h.sys);
  }
  auto sorted = free_before;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(got, sorted);
  const auto c = *h.sys.Cluster(t, got[0]);
  EXPECT_EQ(c.flag, ClusterFlag::kFull);
  EXPECT_FALSE(c.has_table);
  EXPECT_EQ(h.Dv(t).inuse, inuse_before + free_before.size() * kCs);
  EXPECT_TRUE(h.sys.List(t, ListId::kFree)->empty());
  // Free list exhausted: the next run is a single slot from nonfull/frag.
  auto r = h.sys.AllocHibernationRun(0);
  EXPECT_EQ(r.nr, 1u);
  h.sys.SetStorageSuspended(false);
  h.sys.HibernationUnbind();
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_5, UnsortedClaimKeepsFreeListOrder) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(16 * kCs));
  ShuffleFreeList(h, 10, 9);
  const auto free_before = *h.sys.List(t, ListId::kFree);
  ASSERT_TRUE(h.sys.HibernationBind(t, /*sort_claimed=*/false).ok());
  h.sys.SetStorageSuspended(true);
  for (uint64_t want : free_before) {
    auto r = h.sys.AllocHibernationRun(0);
    ASSERT_EQ(r.first.offset / kCs, want);
  }
  h.sys.SetStorageSuspended(false);
  h.sys.HibernationUnbind();
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_5, UnbindReturnsUnusedClaimedClustersToTheTail) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(8 * kCs));
  ASSERT_TRUE(h.sys.HibernationBind(t).ok());
  h.sys.SetStorageSuspended(true);
  auto r = h.sys.AllocHibernationRun(0);  // claims clusters 1..7, takes 1
  ASSERT_EQ(r.first.offset, kCs);
  EXPECT_TRUE(h.sys.List(t, ListId::kFree)->empty());
  ASSERT_INVARIANTS(h.sys);
  h.sys.HibernationUnbind();
  EXPECT_EQ(*h.sys.List(t, ListId::kFree), (std::vector<uint64_t>{2, 3, 4, 5, 6, 7}));
  ASSERT_INVARIANTS(h.sys);
  // A partly returned whole cluster stays off every list until all is back.
  ASSERT_TRUE(h.sys.FreeHibernationRun(r.first, 4).ok());
  EXPECT_EQ(h.sys.Cluster(t, 1)->flag, ClusterFlag::kNone);
  EXPECT_EQ(h.Dv(t).inuse, kCs - 4);
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.sys.FreeHibernationRun(SwapEntry{t, r.first.offset + 4}, kCs - 4).ok());
  EXPECT_EQ(h.sys.Cluster(t, 1)->flag, ClusterFlag::kFree);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  h.sys.SetStorageSuspended(false);
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_5, FreeingSlotsNotGivenToHibernationIsRefusedAndChangesNothing) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(8 * kCs));
  const std::string before = Snapshot(h.sys);
  Status st = h.sys.FreeHibernationRun(SwapEntry{t, 2 * kCs}, kCs);
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_EQ(Snapshot(h.sys), before);
}

TEST(HibSession_9_7, ReservationAtSwaponIsTheFirstRunAndIsNotAdvertised) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(16 * kCs, /*reserve=*/3 * kCs - 5));  // rounds up to 3 clusters
  EXPECT_EQ(h.sys.HibernationReserve(t), (std::pair<uint64_t, uint64_t>{1, 3}));
  EXPECT_EQ(h.Dv(t).pages, 16 * kCs - 1 - 3 * kCs);
  EXPECT_EQ(h.sys.CountSwapPages(t, false), 16 * kCs - 1);
  EXPECT_EQ(h.sys.CountSwapPages(t, true), 16 * kCs - 1);
  EXPECT_EQ(*h.sys.List(t, ListId::kFree),
            (std::vector<uint64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.sys.HibernationBind(t).ok());
  auto r = h.sys.AllocHibernationRun(0);
  EXPECT_EQ(r.first.offset, kCs);
  EXPECT_EQ(r.nr, 3 * kCs);
  EXPECT_EQ(h.Dv(t).inuse, 0u);            // no accounting for the reserve
  auto r2 = h.sys.AllocHibernationRun(0);  // not suspended: a single slot
  EXPECT_EQ(r2.nr, 1u);
  ASSERT_TRUE(h.sys.FreeHibernationRun(r.first, r.nr).ok());  // left alone
  EXPECT_EQ(h.sys.Cluster(t, 1)->flag, ClusterFlag::kNone);
  ASSERT_TRUE(h.sys.FreeHibernationRun(r2.first, 1).ok());
  h.sys.HibernationReset();  // re-arms the reservation
  EXPECT_EQ(h.sys.AllocHibernationRun(0).nr, 3 * kCs);
  h.sys.HibernationUnbind();
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_7, ReservationOverHalfTheAreaIsRefused) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(8 * kCs, 5 * kCs));
  EXPECT_EQ(h.sys.HibernationReserve(t), (std::pair<uint64_t, uint64_t>{0, 0}));
  EXPECT_EQ(h.Dv(t).pages, 8 * kCs - 1);
  ASSERT_INVARIANTS(h.sys);
}

TEST(HibSession_9_5, SwapoffRefusedWhileBound) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(8 * kCs));
  ASSERT_TRUE(h.sys.HibernationBind(t).ok());
  EXPECT_EQ(h.sys.Swapoff(t).code(), -EBUSY);
  h.sys.HibernationUnbind();
  EXPECT_TRUE(h.sys.Swapoff(t).ok());
}

}  // namespace
}  // namespace swaplab::alloc::test

namespace swaplab::alloc::test {
namespace {

// Seed 000's alternative: PMD-sized (whole-cluster) ranges from the normal
// allocator, then smaller orders; large orders only on block devices (O3).
TEST(HibRange_Seed000, PmdSizedRangesComeFromFreeClustersThroughTheNormalAllocator) {
  Harness h(Options(4, 1));
  const int t = h.On(HibDev(8 * kCs));
  const SwapEntry a = h.sys.AllocHibernationRange(0, t, 4);
  ASSERT_TRUE(a.valid());
  EXPECT_EQ(a.offset, kCs);  // cluster 1 from the free list (cluster 0 has the header)
  EXPECT_EQ(h.sys.Cluster(t, 1)->flag, ClusterFlag::kFull);
  EXPECT_EQ(h.Dv(t).inuse, kCs);
  const SwapEntry b = h.sys.AllocHibernationRange(0, t, 2);
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(b.offset % 4, 0u);
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(h.sys.FreeHibernationRun(a, kCs).ok());
  ASSERT_TRUE(h.sys.FreeHibernationRun(b, 4).ok());
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  ASSERT_INVARIANTS(h.sys);
  SwaponOptions file = Dev("file", 8 * kCs);
  file.blkdev = false;
  const int f = h.On(file);
  EXPECT_FALSE(h.sys.AllocHibernationRange(0, f, 4).valid());
}

}  // namespace
}  // namespace swaplab::alloc::test
