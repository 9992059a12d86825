// SPDX-License-Identifier: MIT
// The aging generators on small devices: what each one leaves on the
// device, checked slot by slot, and determinism for a seed.
#include "swaplab/workload/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace swaplab::workload {
namespace {

using alloc::ListId;
using alloc::SlotKind;
using alloc::SwapEntry;

struct Dev {
  explicit Dev(uint64_t pages, std::string preset = "mm-new", int cpus = 4, bool ssd = true) {
    alloc::SystemOptions so;
    so.policy = *alloc::Policy::Preset(preset);
    so.nr_cpus = cpus;
    sys = std::make_unique<alloc::SwapSystem>(so);
    alloc::SwaponOptions o;
    o.name = "d";
    o.pages = pages;
    o.ssd = ssd;
    type = *sys->Swapon(o);
  }
  std::unique_ptr<alloc::SwapSystem> sys;
  int type = -1;
};

TEST(Rng, SameSeedSameSequenceAndBelowInRange) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
  for (int i = 0; i < 100; ++i) EXPECT_LT(a.Below(7), 7u);
}

TEST(ShuffledOrder, IsAPermutationAndNotTheIdentity) {
  Rng r(1);
  const auto v = ShuffledOrder(1000, r);
  std::vector<uint64_t> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_EQ(s[i], i);
  uint64_t in_place = 0;
  for (uint64_t i = 0; i < 1000; ++i) in_place += v[i] == i;
  EXPECT_LT(in_place, 20u);  // a shuffle leaves ~1 fixed point
}

// fill-free with whole-cluster folios: every cluster comes back free, and
// the free list is in the order the folios were freed, not disk order.
TEST(FillFree, ShuffledFreeListFollowsFreeOrder) {
  Dev d(512 * 17);
  Workload w(*d.sys, 7);
  FillFreeSpec s;
  s.region_pages = 512 * 16;
  s.order = 9;
  auto r = FillFree(w, s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(d.sys->Device(d.type)->inuse, 0u);
  ASSERT_EQ(r->freed.size(), 16u);
  std::set<uint64_t> distinct(r->freed.begin(), r->freed.end());
  EXPECT_EQ(distinct.size(), 16u);
  const auto free_list = *d.sys->List(d.type, ListId::kFree);
  // The freed clusters sit at the tail of the free list, in free order.
  ASSERT_GE(free_list.size(), 16u);
  std::vector<uint64_t> tail(free_list.end() - 16, free_list.end());
  std::vector<uint64_t> sorted = tail;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(tail, sorted) << "free list should not be in disk order";
}

TEST(FillFree, UnshuffledFreesInFillOrderAndShareIsHonoured) {
  Dev d(4096);
  Workload w(*d.sys, 7);
  FillFreeSpec s;
  s.region_pages = 1024;
  s.order = 2;
  s.shuffled = false;
  s.free_share = 0.5;
  auto r = FillFree(w, s);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->freed.size(), 128u);
  for (uint64_t i = 0; i < 128; ++i) EXPECT_EQ(r->freed[i], i);
  EXPECT_EQ(d.sys->Device(d.type)->inuse, 512u);
}

// holes: region pages [h, 2h), [3h, 4h), ... are free, the others used.
TEST(Holes, EveryOtherStretchIsFree) {
  for (uint64_t h : {1u, 4u, 16u}) {
    Dev d(4096);
    Workload w(*d.sys, 1);
    HolesSpec s;
    s.region_pages = 1024;
    s.order = 0;
    s.hole_pages = h;
    auto r = Holes(w, s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->freed_pages, 512u);
    for (uint64_t p = 0; p < 1024; ++p) {
      const bool hole = (p / h) % 2 == 1;
      EXPECT_EQ(w.SlotOf(r->folios[p], 0).valid(), !hole) << "h=" << h << " page " << p;
    }
    EXPECT_EQ(d.sys->Device(d.type)->inuse, 512u);
    // On one CPU the region is laid out in slot order from slot 1 of
    // cluster 0 onwards, so the holes are also every other h slots.
    const SwapEntry first = w.SlotOf(r->folios[0], 0);
    for (uint64_t p = 0; p < 1024; p += 2 * h) {
      EXPECT_EQ(w.SlotOf(r->folios[p], 0).offset, first.offset + p);
    }
  }
}

TEST(Holes, RejectsHoleNotAMultipleOfTheFolio) {
  Dev d(4096);
  Workload w(*d.sys, 1);
  HolesSpec s;
  s.region_pages = 1024;
  s.order = 4;
  s.hole_pages = 8;
  auto r = Holes(w, s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("multiple"), std::string::npos);
  EXPECT_EQ(d.sys->Device(d.type)->inuse, 0u);
}

// mthp-mix on a device too small for the whole mix: large folios fall
// back (§2.10) and are counted per size; sizes follow the weights.
TEST(MthpMix, FallsBackAndCountsPerSize) {
  Dev d(512 * 4 + 1);
  Workload w(*d.sys, 3);
  MthpSpec s;
  s.total_pages = 512 * 8;  // twice the device
  s.mix = {{1, 1}, {16, 1}, {512, 1}};
  s.cpus = 2;
  auto r = MthpMix(w, s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto c = d.sys->counters();
  EXPECT_GT(c.swpout_fallback[9] + c.swpout_fallback[4], 0u);
  EXPECT_GT(c.swpout[0], 0u);
  EXPECT_TRUE(d.sys->CheckInvariants().ok());
}

TEST(PickSize, ZeroWeightNeverPicked) {
  Rng r(5);
  std::vector<SizeWeight> mix = {{1, 0}, {16, 1}};
  for (int i = 0; i < 200; ++i) EXPECT_EQ(PickSize(mix, r), 16u);
}

// build-churn: processes swap out and zap 4 KiB pages; at the end every
// process has exited, so nothing is left in swap.
TEST(BuildChurn, LeavesNothingAndZapsPages) {
  Dev d(512 * 8);
  Workload w(*d.sys, 9);
  ChurnSpec s;
  s.processes = 50;
  s.concurrent = 5;
  s.min_pages = 64;
  s.max_pages = 256;
  s.mix = {{1, 1}, {16, 2}};
  s.partial_free_share = 0.3;
  s.cpus = 4;
  auto r = BuildChurn(w, s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->processes, 50u);
  EXPECT_GT(r->pages_zapped, r->pages_swapped / 10);
  EXPECT_EQ(d.sys->Device(d.type)->inuse, 0u);
  EXPECT_TRUE(d.sys->CheckInvariants().ok());
}

// build-churn with a swap limit (ChurnSpec::swapped_pages, the memcg
// limit of seed 003's build): processes exit before a swap-out once more
// than the limit is in use, so in use never exceeds the limit plus one
// folio; without the limit the same processes end above it.
TEST(BuildChurn, SwappedLimitBoundsUsage) {
  auto peak = [](uint64_t limit) {
    Dev d(512 * 16);
    Workload w(*d.sys, 4);
    const ChurnSpec s{.processes = 40,
                      .concurrent = 40,
                      .min_pages = 200,
                      .max_pages = 400,
                      .mix = {{1, 4}, {16, 1}},
                      .partial_free_share = 0.1,
                      .exit_at_end = false,
                      .swapped_pages = limit};
    auto r = BuildChurn(w, s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(d.sys->CheckInvariants().ok());
    return d.sys->Device(d.type)->inuse;  // after the last swap-out
  };
  const uint64_t limit = 2000;
  EXPECT_LE(peak(limit), limit + 16);
  EXPECT_GT(peak(limit), limit / 2);
  EXPECT_GT(peak(0), limit + 16);
}

// build-churn with several processes swapping out at once (growing):
// reclaim takes a batch from one of them at a time, so turns switch between
// processes; one at a time, each process goes out whole. Both leave the
// device consistent and, at the end, empty.
TEST(BuildChurn, GrowingInterleavesProcesses) {
  auto run = [](uint64_t growing) {
    Dev d(512 * 16);
    Workload w(*d.sys, 11);
    ChurnSpec s;
    s.processes = 12;
    s.concurrent = 12;
    s.min_pages = 256;
    s.max_pages = 256;
    s.mix = {{1, 1}};
    s.growing = growing;
    s.batch_pages = 32;
    auto r = BuildChurn(w, s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(d.sys->CheckInvariants().ok());
    EXPECT_EQ(d.sys->Device(d.type)->inuse, 0u);
    EXPECT_EQ(r->processes, 12u);
    EXPECT_EQ(r->pages_swapped, 12u * 256u);
    return r->switches;
  };
  EXPECT_EQ(run(1), 11u);
  EXPECT_EQ(run(100), run(12));  // never more growing than processes alive
  // 12 × 256 pages in 96 turns of 32, over 4 processes at a time: most
  // turns switch (a repeat has chance 1/4 while 4 are growing).
  EXPECT_GT(run(4), 40u);
}

// usemem: with a limit of half the working set, sequential touching swaps
// every folio out and in again on the second pass.
TEST(Usemem, SequentialPassesSwapOutAndIn) {
  Dev d(4096);
  Workload w(*d.sys, 1);
  UsememSpec s;
  s.processes = 2;
  s.pages_per_process = 512;
  s.order = 0;
  s.random = false;
  s.passes = 2;
  s.limit_pages = 512;
  auto r = Usemem(w, s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->touches, 2048u);
  EXPECT_EQ(r->swapouts, 2048u - 512u);  // every touch after the first 512 evicts one
  EXPECT_EQ(r->swapins, 1024u);          // the whole second pass faults
  EXPECT_EQ(d.sys->Device(d.type)->inuse, 512u);
}

// The same seed gives the same layout, a different seed another one.
TEST(Determinism, SameSeedSameLayout) {
  auto layout = [](uint64_t seed) {
    Dev d(512 * 8);
    Workload w(*d.sys, seed);
    ChurnSpec s;
    s.processes = 30;
    s.concurrent = 6;
    s.min_pages = 32;
    s.max_pages = 300;
    s.mix = {{1, 1}, {4, 1}, {16, 1}};
    s.partial_free_share = 0.2;
    s.cpus = 3;
    EXPECT_TRUE(BuildChurn(w, s).ok());
    FillFreeSpec f;
    f.region_pages = 1024;
    f.free_share = 0.5;
    auto r = FillFree(w, f);
    std::vector<uint64_t> offs;
    for (uint64_t id : r->folios) offs.push_back(w.SlotOf(id, 0).offset);
    return offs;
  };
  EXPECT_EQ(layout(11), layout(11));
  EXPECT_NE(layout(11), layout(12));
}

// rotation: two equal-priority devices both get allocations.
TEST(Rotation, SpreadsOverEqualPriorityDevices) {
  alloc::SystemOptions so;
  so.policy = *alloc::Policy::Preset("linux-6.14");
  so.nr_cpus = 2;
  alloc::SwapSystem sys(so);
  for (const char* n : {"a", "b"}) {
    alloc::SwaponOptions o;
    o.name = n;
    o.pages = 4096;
    o.prio = 5;
    ASSERT_TRUE(sys.Swapon(o).ok());
  }
  Workload w(sys, 1);
  auto r = Rotation(w, 4000, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->per_device.size(), 2u);
  EXPECT_GT(r->per_device[0], 0u);
  EXPECT_GT(r->per_device[1], 0u);
}

// occupy: exactly the listed slots stay taken, under each preset whose
// allocator fills a device differently (slot cache, nonfull first, 6.1's scan).
TEST(OccupySlots, LeavesExactlyTheSlotsInUse) {
  for (const char* preset : {"linux-6.1", "linux-6.12", "linux-6.18", "mm-new"}) {
    SCOPED_TRACE(preset);
    alloc::SystemOptions so;
    so.policy = *alloc::Policy::Preset(preset);
    so.nr_cpus = 1;
    alloc::SwapSystem sys(so);
    alloc::SwaponOptions o;
    o.name = "occupied";
    o.pages = 2048;
    auto type = sys.Swapon(o);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    // Slot 0, a repeat and a slot past the device are ignored.
    const std::vector<uint64_t> in_use = {0, 5, 6, 700, 700, 1500, 2047, 3000};
    auto listed = [&](uint64_t s) {
      return s != 0 && std::find(in_use.begin(), in_use.end(), s) != in_use.end();
    };
    auto left = OccupySlots(sys, *type, in_use);
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    EXPECT_EQ(*left, 5u);  // not slot 0 (the header) nor 3000 (past the end)
    // The rest is free, or held by CPU 0's slot cache (6.1 to 6.14 keep up
    // to 64 slots there, as a running kernel's CPUs do).
    uint64_t cached = 0;
    for (uint64_t s = 1; s < 2048; ++s) {
      auto slot = sys.Slot({*type, s});
      ASSERT_TRUE(slot.ok());
      const bool in_slot_cache = slot->kind == alloc::SlotKind::kCached && slot->folio == nullptr;
      cached += in_slot_cache;
      if (listed(s))
        EXPECT_GT(slot->count, 0u) << "slot " << s;
      else
        EXPECT_TRUE(slot->kind == alloc::SlotKind::kEmpty || in_slot_cache) << "slot " << s;
    }
    EXPECT_LE(cached, so.policy.slot_cache ? 64u : 0u);
    EXPECT_EQ(sys.Device(*type)->inuse, 5u + cached);
    EXPECT_TRUE(sys.CheckInvariants().ok()) << sys.CheckInvariants().ToString();
  }
}

}  // namespace
}  // namespace swaplab::workload
