// SPDX-License-Identifier: MIT
// §2.3 slow path and device selection; §1.1 priority lists and requeue.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

SwaponOptions Hdd(std::string name, uint64_t pages, std::optional<int> prio = {}) {
  SwaponOptions o = Dev(std::move(name), pages);
  o.ssd = false;
  o.prio = prio;
  return o;
}

// §2.3: higher priority first; the avail list is sorted (G3).
TEST(Alloc_2_3, HigherPriorityFirst) {
  Harness h(Options(4, 1));
  SwaponOptions a = Dev("a", 64), b = Dev("b", 64);
  a.prio = 5;
  b.prio = 10;
  const int A = h.On(a), B = h.On(b);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{B, A}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{B, 1}));
  EXPECT_EQ(h.Dv(A).inuse, 0u);
}

// §2.3 / D3: a full device leaves the avail list and is never tried; the
// lower priority is used only then.
TEST(Alloc_2_3, LowerPriorityOnlyWhenHigherFull) {
  Harness h(Options(4, 1));
  const int B = h.On(Hdd("b", 16, 10));
  const int A = h.On(Hdd("a", 64, 5));
  for (uint64_t want = 1; want <= 15; ++want) ASSERT_EQ(h.Ent(0), (SwapEntry{B, want}));
  EXPECT_FALSE(h.Dv(B).on_avail_list);
  EXPECT_EQ(h.Dv(B).inuse, h.Dv(B).pages);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 1}));
  EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{B, A}));
}

// §2.3: equal priorities rotate on every slow-path entry; non-SSD devices
// have no fast path, so they alternate on every allocation.
TEST(Alloc_2_3, EqualPriorityNonSsdRotatesEveryAllocation) {
  Harness h(Options(4, 1));
  const int A = h.On(Hdd("a", 64)), B = h.On(Hdd("b", 64));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A, B}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 1}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{B, A}));  // A requeued
  EXPECT_EQ(h.Ent(0), (SwapEntry{B, 1}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A, B}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 2}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{B, 2}));
}

// §2.3 consequence: with SSDs the fast path serves a CPU until its cluster
// is used up, so equal priorities rotate once per consumed cluster.
TEST(Alloc_2_3, EqualPrioritySsdRotatesPerCluster) {
  Harness h(Options(4, 1));
  const int A = h.On(Dev("a", 48)), B = h.On(Dev("b", 48));
  for (uint64_t want = 1; want <= 15; ++want) ASSERT_EQ(h.Ent(0), (SwapEntry{A, want}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{B, A}));
  for (uint64_t want = 1; want <= 15; ++want) ASSERT_EQ(h.Ent(0), (SwapEntry{B, want}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A, B}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 16}));  // A: nonfull[0] empty → free list
  EXPECT_EQ(h.sys.Hint(0, 0).type, A);
  EXPECT_EQ(h.sys.Hint(0, 0).offset, 17u);
}

// §1.1: requeue does nothing when the next device has another priority.
TEST(Alloc_1_1, RequeueNoOpWhenLastOfItsPriority) {
  Harness h(Options(4, 1));
  const int A = h.On(Hdd("a", 64, 5));
  const int B = h.On(Hdd("b", 64)), C = h.On(Hdd("c", 64));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 1}));
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 2}));
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A, B, C}));
}

// §3.5 step 4: a full device that gets a slot back rejoins the avail list
// after its equal-priority peers.
TEST(Alloc_3_5, DeviceBackOnAvailListAfterPeers) {
  Harness h(Options(4, 1));
  const int A = h.On(Hdd("a", 16)), B = h.On(Hdd("b", 64)), C = h.On(Hdd("c", 64));
  std::vector<Folio*> onA;
  // Rotation A, B, C, A, B, C, ...: 15 rounds fill A.
  for (int round = 0; round < 15; ++round) {
    Folio* f = h.AllocNew(0);
    ASSERT_EQ(f->swap().type, A);
    onA.push_back(f);
    ASSERT_EQ(h.Ent(0).type, B);
    ASSERT_EQ(h.Ent(0).type, C);
  }
  EXPECT_FALSE(h.Dv(A).on_avail_list);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{B, C}));
  h.FreeCacheOnly(*onA[4]);
  EXPECT_TRUE(h.Dv(A).on_avail_list);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{B, C, A}));
}

// Builds a PAGE_DISCARD device of two clusters (31 slots) whose only free
// slots are a whole cluster waiting for discard (deferred work not run).
int DiscardPendingDevice(Harness& h, const std::string& name, std::optional<int> prio) {
  SwaponOptions o = Dev(name, 32);
  o.discard = DiscardMode::kPages;
  o.prio = prio;
  const int t = h.On(o);
  return t;
}

// §2.3: an order-0 allocation that fails on a higher-priority device
// (still on the avail list) continues with the next device.
TEST(Alloc_2_3, Order0FallsToLowerPriorityWhenHigherFails) {
  SystemOptions opt = Options(4, 2);
  opt.run_deferred_work_inline = false;
  Harness h(opt);
  const int A = DiscardPendingDevice(h, "a", 10);
  SwaponOptions b = Dev("b", 32);
  b.prio = 5;
  const int B = h.On(b);
  for (int i = 0; i < 31; ++i) ASSERT_EQ(h.SwapOut(0).type, A);
  ASSERT_TRUE(h.PutDirect(SwapEntry{A, 16}, 16).ok());
  ASSERT_EQ(h.L(A, ListId::kDiscard), (Offs{1}));
  ASSERT_TRUE(h.Dv(A).on_avail_list);
  EXPECT_EQ(h.Ent(1), (SwapEntry{B, 1}));
  EXPECT_EQ(h.L(A, ListId::kDiscard), (Offs{1}));  // no sync discard: we succeeded
  EXPECT_EQ(h.sys.counters().sync_discard_retries, 0u);
  EXPECT_TRUE(h.sys.HasDeferredWork());
  h.sys.RunDeferredWork();
  ASSERT_INVARIANTS(h.sys);
  EXPECT_FALSE(h.sys.HasDeferredWork());
  EXPECT_EQ(h.L(A, ListId::kFree), (Offs{1}));
  // CPU 0's hint is spent (its last slot was A:15): slow path → A's free list.
  EXPECT_EQ(h.Ent(0), (SwapEntry{A, 16}));
}

// §11 U5: equal-priority devices that all fail order 0 while staying on
// the avail list must not loop forever; without the §2.9 retry the
// allocation fails with ENOMEM.
TEST(Alloc_2_3_U5, EqualPriorityDevicesThatAllFailTerminate) {
  SystemOptions opt = Options(4, 2);
  opt.run_deferred_work_inline = false;
  opt.policy.sync_discard_retry = false;
  Harness h(opt);
  const int A = DiscardPendingDevice(h, "a", {});
  const int B = DiscardPendingDevice(h, "b", {});
  for (int i = 0; i < 62; ++i) ASSERT_TRUE(h.SwapOut(0).valid()) << i;
  ASSERT_TRUE(h.PutDirect(SwapEntry{A, 16}, 16).ok());
  ASSERT_TRUE(h.PutDirect(SwapEntry{B, 16}, 16).ok());
  ASSERT_EQ(h.sys.avail_devices().size(), 2u);
  Folio& f = h.NewFolio(0);
  EXPECT_ERRNO(h.Alloc(1, f), -ENOMEM);
  EXPECT_EQ(h.sys.counters().alloc_failures, 1u);
  EXPECT_EQ(h.L(A, ListId::kDiscard), (Offs{1}));
  EXPECT_EQ(h.L(B, ListId::kDiscard), (Offs{1}));
}

}  // namespace
}  // namespace swaplab::alloc::test
