// SPDX-License-Identifier: MIT
// §6 hibernation hooks: slot allocation and free, device lookup, pin /
// unpin / repin, swapdev_block, count_swap_pages, find_first_swap.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

SwaponOptions OnBdev(std::string name, uint64_t pages, uint64_t bdev, uint64_t block) {
  SwaponOptions o = Dev(std::move(name), pages);
  o.bdev = bdev;
  o.first_block = block;
  return o;
}

// §6 swap_alloc_hibernation_slot: exactly that device, regardless of
// priority; the slot holds one reference and is not cached (primary tree:
// SHADOW with count 1, §2.8 step 2). No rotation of the avail list.
TEST(Hib_6, AllocOnExactlyThatDevice) {
  Harness h(Options(4, 1));
  SwaponOptions a = Dev("a", 64);
  a.prio = 10;
  const int A = h.On(a);
  const int B = h.On(Dev("b", 64));
  const int C = h.On(Dev("c", 64));
  const SwapEntry e = h.sys.AllocHibernationSlot(0, B);
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(e, (SwapEntry{B, 1}));
  EXPECT_EQ(h.Sl(B, 1).kind, SlotKind::kShadow);
  EXPECT_EQ(h.Sl(B, 1).count, 1u);
  EXPECT_EQ(h.Sl(B, 1).folio, nullptr);
  EXPECT_EQ(h.Dv(B).inuse, 1u);
  EXPECT_EQ(h.Dv(A).inuse, 0u);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{A, B, C}));
  EXPECT_EQ(h.sys.nr_swap_pages(), 3 * 63 - 1);
}

// §1.4 / U2: with the HIB entry knob the slot is a HIB entry.
TEST(Hib_6, HibEntryKind) {
  Policy p = PrimaryPolicy();
  p.hibernation_hib_entry = true;
  Harness h(Options(4, 1, p));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.sys.AllocHibernationSlot(0, t);
  ASSERT_INVARIANTS(h.sys);
  ASSERT_TRUE(e.valid());
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kHib);
  EXPECT_EQ(h.Dv(t).inuse, 1u);
  ASSERT_TRUE(h.sys.FreeHibernationSlot(e).ok());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
}

// §6 (v7.1+): the per-CPU hint is tried first; §10.3 before: the slow
// per-device path (here: nonfull[0] empty → free list → cluster 1).
TEST(Hib_6, PerCpuHintFirstOnlyWithKnob) {
  for (bool knob : {true, false}) {
    Policy p = PrimaryPolicy();
    p.hibernation_percpu_hint = knob;
    Harness h(Options(4, 1, p));
    const int t = h.On(Dev("a", 64));
    ASSERT_EQ(h.Off(0), 1u);  // hint := 2, cluster 0 on frag[0]
    const SwapEntry e = h.sys.AllocHibernationSlot(0, t);
    ASSERT_INVARIANTS(h.sys);
    EXPECT_EQ(e.offset, knob ? 2u : 16u) << "hibernation_percpu_hint=" << knob;
    if (knob) {
      EXPECT_EQ(h.sys.Hint(0, 0).offset, 3u);
    }
  }
}

// §6: a per-CPU hint on another device is not used; allocate_on_device
// runs on the requested one.
TEST(Hib_6, HintOnOtherDeviceIgnored) {
  Harness h(Options(4, 1));
  SwaponOptions a = Dev("a", 64);
  a.prio = 10;
  const int A = h.On(a);
  const int B = h.On(Dev("b", 64));
  ASSERT_EQ(h.Ent(0), (SwapEntry{A, 1}));
  ASSERT_EQ(h.sys.Hint(0, 0).type, A);
  EXPECT_EQ(h.sys.AllocHibernationSlot(0, B), (SwapEntry{B, 1}));
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Dv(A).inuse, 1u);
}

// §6: no discard retry for hibernation slots.
TEST(Hib_6, NoSyncDiscardRetry) {
  SystemOptions so = Options(4, 2);
  so.run_deferred_work_inline = false;
  Harness h(so);
  SwaponOptions o = Dev("a", 32);
  o.discard = DiscardMode::kPages;
  const int t = h.On(o);
  for (int i = 0; i < 31; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  ASSERT_TRUE(h.PutDirect(SwapEntry{t, 16}, 16).ok());
  ASSERT_EQ(h.L(t, ListId::kDiscard), (Offs{1}));
  EXPECT_FALSE(h.sys.AllocHibernationSlot(1, t).valid());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.L(t, ListId::kDiscard), (Offs{1}));
  EXPECT_EQ(h.sys.counters().sync_discard_retries, 0u);
}

// §6 swap_free_hibernation_slot: the reference is put and the slot freed.
TEST(Hib_6, FreeHibernationSlot) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  const SwapEntry e = h.sys.AllocHibernationSlot(0, t);
  ASSERT_TRUE(e.valid());
  ASSERT_TRUE(h.sys.FreeHibernationSlot(e).ok());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Sl(t, e.offset).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Dv(t).inuse, 0u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 63);
}

// §6: no slot on an unknown device or a full one; the empty entry.
TEST(Hib_6, NoSlotGivesInvalidEntry) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 16));  // 15 slots
  EXPECT_FALSE(h.sys.AllocHibernationSlot(0, 5).valid());
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(h.sys.AllocHibernationSlot(0, t).valid());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_FALSE(h.sys.AllocHibernationSlot(0, t).valid());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Dv(t).inuse, 15u);
}

// §6 swap_type_of / find_hibernation_swap_type: device and first block.
TEST(Hib_6, FindHibernationSwapType) {
  Harness h(Options(4, 1));
  const int a = h.On(OnBdev("a", 64, 7, 100));
  SwaponOptions b = OnBdev("b", 64, 9, 0);
  b.extents = {{0, 10, 500}, {10, 54, 900}};
  const int bt = h.On(b);
  Result<int> r = h.sys.FindHibernationSwapType(7, 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, a);
  r = h.sys.FindHibernationSwapType(9, 500);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, bt);
  EXPECT_ERRNO(h.sys.FindHibernationSwapType(7, 101).status(), -ENODEV);
  EXPECT_ERRNO(h.sys.FindHibernationSwapType(8, 100).status(), -ENODEV);
  EXPECT_ERRNO(h.sys.FindHibernationSwapType(9, 0).status(), -ENODEV);
}

// §6 swapdev_block: through the extent map; 0 if missing.
TEST(Hib_6, SwapdevBlock) {
  Harness h(Options(4, 1));
  const int a = h.On(OnBdev("a", 64, 7, 100));
  SwaponOptions b = OnBdev("b", 64, 9, 0);
  b.extents = {{0, 10, 500}, {10, 54, 900}};
  const int bt = h.On(b);
  EXPECT_EQ(h.sys.SwapdevBlock(a, 5), 105u);
  EXPECT_EQ(h.sys.SwapdevBlock(bt, 3), 503u);
  EXPECT_EQ(h.sys.SwapdevBlock(bt, 12), 902u);
  EXPECT_EQ(h.sys.SwapdevBlock(17, 1), 0u);
}

// §6 count_swap_pages: pages, or pages − inuse with free.
TEST(Hib_6, CountSwapPages) {
  Harness h(Options(4, 1));
  const int t = h.On(Dev("a", 64));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(h.SwapOut(0).valid());
  EXPECT_EQ(h.sys.CountSwapPages(t, false), 63u);
  EXPECT_EQ(h.sys.CountSwapPages(t, true), 58u);
  EXPECT_EQ(h.sys.CountSwapPages(9, false), 0u);
}

// §6 pin: EBUSY when pinned twice; swapoff of a pinned device fails with
// EBUSY and changes nothing; unpin allows swapoff; unpin of an invalid
// type does nothing.
TEST(Hib_6, PinBlocksSwapoff) {
  Harness h(Options(4, 1));
  const int t = h.On(OnBdev("a", 64, 7, 100));
  Result<int> r = h.sys.PinHibernationSwapType(7, 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, t);
  EXPECT_TRUE(h.Dv(t).hibernation_pinned);
  EXPECT_ERRNO(h.sys.PinHibernationSwapType(7, 100).status(), -EBUSY);
  EXPECT_ERRNO(h.sys.PinHibernationSwapType(7, 5).status(), -ENODEV);
  const std::string before = Snapshot(h.sys);
  EXPECT_ERRNO(h.SwapOff(t, h.DropAll()), -EBUSY);
  EXPECT_EQ(Snapshot(h.sys), before);
  h.sys.UnpinHibernationSwapType(23);
  h.sys.UnpinHibernationSwapType(-1);
  EXPECT_TRUE(h.Dv(t).hibernation_pinned);
  h.sys.UnpinHibernationSwapType(t);
  EXPECT_FALSE(h.Dv(t).hibernation_pinned);
  EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
}

// §6 repin: same device keeps the pin; a free device takes it over; an
// already pinned one is EBUSY; a failed lookup keeps the old pin.
TEST(Hib_6, Repin) {
  Harness h(Options(4, 1));
  const int a = h.On(OnBdev("a", 64, 7, 100));
  const int b = h.On(OnBdev("b", 64, 8, 200));
  const int c = h.On(OnBdev("c", 64, 9, 300));
  ASSERT_TRUE(h.sys.PinHibernationSwapType(7, 100).ok());
  Result<int> r = h.sys.RepinHibernationSwapType(a, 7, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, a);
  EXPECT_TRUE(h.Dv(a).hibernation_pinned);
  EXPECT_ERRNO(h.sys.RepinHibernationSwapType(a, 7, 999).status(), -ENODEV);
  EXPECT_TRUE(h.Dv(a).hibernation_pinned);
  r = h.sys.RepinHibernationSwapType(a, 8, 200);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, b);
  EXPECT_FALSE(h.Dv(a).hibernation_pinned);
  EXPECT_TRUE(h.Dv(b).hibernation_pinned);
  ASSERT_TRUE(h.sys.PinHibernationSwapType(9, 300).ok());
  EXPECT_ERRNO(h.sys.RepinHibernationSwapType(b, 9, 300).status(), -EBUSY);
  EXPECT_TRUE(h.Dv(b).hibernation_pinned);
  EXPECT_TRUE(h.Dv(c).hibernation_pinned);
  ASSERT_INVARIANTS(h.sys);
}

// §6 find_first_swap: the first WRITEOK device by type; ENODEV if none.
TEST(Hib_6, FindFirstSwap) {
  Harness h(Options(4, 1));
  EXPECT_ERRNO(h.sys.FindFirstSwap().status(), -ENODEV);
  const int a = h.On(OnBdev("a", 64, 7, 100));
  SwaponOptions bo = OnBdev("b", 64, 8, 200);
  bo.prio = 100;  // priority does not matter
  const int b = h.On(bo);
  Result<int> r = h.sys.FindFirstSwap();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, a);
  ASSERT_TRUE(h.SwapOff(a).ok());
  r = h.sys.FindFirstSwap();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, b);
}

}  // namespace
}  // namespace swaplab::alloc::test
