// SPDX-License-Identifier: MIT
// The knobs of the linux-6.1 preset (Debian 12's 6.1, read from
// linux-source-6.1 6.1.192 mm/swapfile.c), one test each: with the knob the
// model does what 6.1's source does, without it what 6.12 does. The
// harness checks every invariant after each call.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "alloc/test_util.h"
#include "swaplab/alloc/preset_for_release.h"

namespace swaplab::alloc::test {
namespace {

Policy Linux61() { return PresetPolicy("linux-6.1"); }
Policy Linux61NoSlotCache() { return NoSlotCache(Linux61()); }

// linux-6.1 without the slot cache, its SSDs served by the swap_map scan
// (`on`) or by 6.12's cluster allocator.
Policy Linux61Ssd(bool on) {
  Policy p = Linux61NoSlotCache();
  p.ssd_swap_map_scan = on;
  return p;
}

// The three knobs are what 6.1 adds to linux-6.12; every other knob is
// 6.12's, and a 6.1 kernel release maps to the preset.
TEST(Linux61_Preset, IsLinux612PlusThreeKnobs) {
  Policy p = Linux61();
  EXPECT_TRUE(p.Validate().ok());
  EXPECT_TRUE(p.ssd_swap_map_scan);
  EXPECT_FALSE(p.scan_reclaim_direct);
  EXPECT_FALSE(p.mthp_swap);
  Policy q = *Policy::Preset("linux-6.12");
  q.ssd_swap_map_scan = true;
  q.scan_reclaim_direct = false;
  q.mthp_swap = false;
  EXPECT_EQ(p.KnobValues(), q.KnobValues());
  EXPECT_EQ(PresetForRelease("6.1.0-57-amd64"), "linux-6.1");
  EXPECT_EQ(PresetForRelease("6.12.118+deb12-amd64"), "linux-6.12");
}

// scan_swap_map_try_ssd_cluster(): each CPU takes the free list's head
// (interleaved as 6.12's: 16-slot clusters, one column here) and goes on in
// it; with no free cluster left the swap_map scan takes the rest, from
// lowest_bit once it passed highest_bit (cluster 0's slots after the
// header). 6.12 would take nonfull[0]'s clusters in the order they became
// nonfull.
TEST(Linux61_Knobs, SsdPerCpuClustersThenTheSwapMapScan) {
  {
    Harness h(Options(4, 2, Linux61NoSlotCache()));
    const int t = h.On(Dev("a", 4 * 16));
    EXPECT_EQ(h.Off(0), 16u);
    EXPECT_EQ(h.Off(1), 32u);
    EXPECT_EQ(h.Off(0), 17u);
    for (uint64_t want = 18; want < 32; ++want) ASSERT_EQ(h.Off(0), want);
    EXPECT_EQ(h.Off(0), 48u);  // cluster 1 full: the next free cluster
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
  {
    Harness h(Options(4, 1, Linux61NoSlotCache()));
    const int t = h.On(Dev("a", 4 * 16));
    // Mapped and out of the cache (a cache-only slot would be reclaimed
    // and taken once swap is half full).
    for (uint64_t want = 16; want < 64; ++want) ASSERT_EQ(h.SwapOut(0).offset, want);
    // Each call starts at its base, the slot after the last one taken, and
    // the scan label looks from the slot after that: every other slot,
    // then the ones skipped from lowest_bit.
    for (uint64_t want : {1, 3, 5, 7, 9, 11, 13, 15, 2, 4, 6, 8, 10, 12, 14})
      ASSERT_EQ(h.SwapOut(0).offset, want);
    EXPECT_EQ(h.Off(0), 0u);  // full
    EXPECT_EQ(h.L(t, ListId::kFull).size(), 4u);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
  for (bool on : {true, false}) {
    Harness h(Options(4, 1, Linux61Ssd(on)));
    SwaponOptions d = Dev("a", 4 * 16);
    for (uint64_t b = 1; b < 16; ++b) d.bad_pages.push_back(b);  // cluster 0: BAD only
    const int t = h.On(d);
    std::vector<SwapEntry> es;  // mapped, out of the cache: nothing to reclaim
    for (int i = 0; i < 48; ++i) es.push_back(h.SwapOut(0));
    ASSERT_EQ(es[47].offset, 63u);
    ASSERT_TRUE(h.PutDirect(es[24]).ok());  // 40: cluster 2 goes to nonfull first
    ASSERT_TRUE(h.PutDirect(es[4]).ok());   // 20
    EXPECT_EQ(h.Off(0), on ? 20u : 40u);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

// A freed cluster goes to the free list's tail; the CPU's cluster still
// names it, and scan_swap_map_ssd_cluster_conflict() drops it there (a free
// cluster that is not the head): the head is taken. 6.12 scans its stale
// next[0] where it points.
TEST(Linux61_Knobs, SsdFreedClusterGoesToTheTailAndIsNotReused) {
  for (bool on : {true, false}) {
    Harness h(Options(4, 1, Linux61Ssd(on)));
    const int t = h.On(Dev("a", 6 * 16));
    Folio* f = h.AllocNew(0);
    ASSERT_EQ(f->swap().offset, 16u);
    h.FreeCacheOnly(*f);
    EXPECT_EQ(h.L(t, ListId::kFree), (Offs{2, 3, 4, 5, 1}));
    EXPECT_EQ(h.Off(0), on ? 32u : 17u);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

// With no free cluster left, the scan starts from the CPU's scan base
// (cluster_next_cpu), which SetScanBase sets: the scan label looks from the
// slot after it. Without the knob there is no such base.
TEST(Linux61_Knobs, SsdScanBaseStartsTheSwapMapScan) {
  for (bool on : {true, false}) {
    Harness h(Options(4, 1, Linux61Ssd(on)));
    const int t = h.On(Dev("a", 4 * 16));
    for (int i = 0; i < 48; ++i) ASSERT_NE(h.Off(0), 0u);  // clusters 1..3 (6.12: 1..3 too)
    const Status st = h.sys.SetScanBase(t, 0, 5);
    EXPECT_EQ(st.ok(), on) << st.ToString();
    EXPECT_EQ(h.Off(0), on ? 6u : 1u);
    EXPECT_EQ(h.sys.ScanBase(t, 0), on ? 7u : 0u);
    EXPECT_EQ(h.sys.SetScanBase(t, 1, 5).code(), -EINVAL);   // no CPU 1
    EXPECT_EQ(h.sys.SetScanBase(t, 0, 0).code(), -EINVAL);   // the header
    EXPECT_EQ(h.sys.SetScanBase(t, 0, 64).code(), -EINVAL);  // past the end
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
  Harness h(Options(4, 1, Linux61()));
  SwaponOptions d = Dev("hdd", 64);
  d.ssd = false;
  const int t = h.On(d);
  EXPECT_EQ(h.sys.SetScanBase(t, 0, 5).code(), -EINVAL);  // a rotational device has none
}

// set_cluster_next(): a base that would cross into the next 64 MiB
// (SWAP_ADDRESS_SPACE_PAGES) jumps to a 64 MiB boundary drawn between
// lowest_bit and highest_bit (never below lowest_bit); inside the same
// 64 MiB it is the slot after the last one taken.
TEST(Linux61_Knobs, SsdScanBaseJumpsWhenItCrosses64MiB) {
  Harness h(Options(9, 1, Linux61NoSlotCache()));
  const int t = h.On(Dev("a", 128 * 512));  // 256 MiB; free list head: cluster 32
  ASSERT_TRUE(h.sys.SetScanBase(t, 0, 16500).ok());
  EXPECT_EQ(h.Off(0), 16384u);
  EXPECT_EQ(h.sys.ScanBase(t, 0), 16385u);
  ASSERT_TRUE(h.sys.SetScanBase(t, 0, 16383).ok());
  EXPECT_EQ(h.Off(0), 16385u);
  const uint64_t b = h.sys.ScanBase(t, 0);
  EXPECT_TRUE(b == 1 || b == 16384 || b == 32768 || b == 49152) << b;
}

// Swapon draws each CPU's base in [1, max - 1] from the device's generator:
// the same seed gives the same bases, another seed others.
TEST(Linux61_Knobs, ScanBasesAtSwaponFollowTheSeed) {
  auto bases = [](uint64_t seed) {
    SystemOptions o = Options(9, 4, Linux61NoSlotCache());
    o.scan_base_seed = seed;
    Harness h(o);
    const int t = h.On(Dev("a", 128 * 512));
    std::vector<uint64_t> b;
    for (int cpu = 0; cpu < 4; ++cpu) b.push_back(h.sys.ScanBase(t, cpu));
    return b;
  };
  const std::vector<uint64_t> a = bases(1);
  for (uint64_t b : a) EXPECT_TRUE(b >= 1 && b < 128 * 512) << b;
  EXPECT_EQ(a, bases(1));
  EXPECT_NE(a, bases(2));
}

// swap_alloc_cluster(): a PMD folio takes the free list's head whole and
// runs no discard for it; 6.12 restarts its search after the discard.
TEST(Linux61_Knobs, PmdFolioTakesTheFreeHeadWholeWithoutDiscard) {
  for (bool on : {true, false}) {
    SystemOptions o = Options(4, 1, Linux61Ssd(on));
    o.run_deferred_work_inline = false;  // discards wait
    Harness h(o);
    SwaponOptions d = Dev("a", 4 * 16);
    d.discard = DiscardMode::kPages;
    d.discard_supported = true;
    const int t = h.On(d);
    EXPECT_EQ(h.SwapOut(0, 4).offset, 16u);  // mapped: nothing to reclaim
    Folio* f = h.AllocNew(0, 4);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->swap().offset, 32u);
    EXPECT_EQ(h.SwapOut(0, 4).offset, 48u);
    EXPECT_EQ(h.L(t, ListId::kFull).size(), 3u);
    h.FreeCacheOnly(*f);  // cluster 2: to the discard list
    EXPECT_EQ(h.L(t, ListId::kDiscard), Offs{2});
    EXPECT_EQ(h.Off(0, 4), on ? 0u : 32u);
    h.sys.RunDeferredWork();
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

// 6.1: an order-0 scan that finds only clusters waiting for discard runs the
// discard now and takes the discarded cluster (scan_swap_map_try_ssd_cluster).
TEST(Linux61_Knobs, SsdOrder0RunsPendingDiscards) {
  SystemOptions o = Options(4, 1, Linux61NoSlotCache());
  o.run_deferred_work_inline = false;
  Harness h(o);
  SwaponOptions d = Dev("a", 3 * 16);
  d.discard = DiscardMode::kPages;
  d.discard_supported = true;
  const int t = h.On(d);
  Folio* f = h.AllocNew(0, 4);
  ASSERT_EQ(f->swap().offset, 16u);
  EXPECT_EQ(h.Off(0, 4), 32u);
  h.FreeCacheOnly(*f);
  ASSERT_EQ(h.L(t, ListId::kDiscard), Offs{1});
  EXPECT_EQ(h.Off(0), 16u);
  EXPECT_TRUE(h.L(t, ListId::kDiscard).empty());
  h.sys.RunDeferredWork();
}

// A rotational device has no clusters in 6.1 either: a PMD folio gets no
// slots (reclaim splits it).
TEST(Linux61_Knobs, PmdFolioOnARotationalDeviceGetsNoSlots) {
  Harness h(Options(4, 1, Linux61NoSlotCache()));
  SwaponOptions d = Dev("hdd", 4 * 16);
  d.ssd = false;
  h.On(d);
  EXPECT_EQ(h.Off(0, 4), 0u);
}

// get_swap_page() of 6.1 knows order 0 and the PMD order only: an mTHP
// order is refused (not split: no 6.1 kernel makes such a folio).
TEST(Linux61_Knobs, MthpOrdersAreRefused) {
  for (bool on : {true, false}) {
    Policy p = Linux61NoSlotCache();
    p.mthp_swap = on;
    p.ssd_swap_map_scan = false;  // clusters that can hold order 2
    Harness h(Options(4, 1, p));
    h.On(Dev("a", 4 * 16));
    Folio& f = h.NewFolio(2);
    const Status st = h.Alloc(0, f);
    EXPECT_EQ(st.ok(), on) << st.ToString();
    if (!on) {
      EXPECT_EQ(st.code(), -EINVAL);
      EXPECT_NE(st.message().find("order 2"), std::string::npos) << st.message();
    }
    EXPECT_TRUE(h.Alloc(0, h.NewFolio(0)).ok());
    EXPECT_TRUE(h.Alloc(0, h.NewFolio(4)).ok());  // PMD order
  }
}

// The scan takes a cache-only slot back once swap is more than half full.
// 6.12 (TTRS_DIRECT) frees it at once and takes it; 6.1 (TTRS_ANYWAY)
// frees it through free_swap_slot() into the return buffer, where it stays
// cache-held, so the scan walks on, moving each cache-only slot into the
// buffer (freed 4 at a time), until it reaches an empty slot.
TEST(Linux61_Knobs, ScanReclaimGoesThroughTheReturnBuffer) {
  for (bool direct : {true, false}) {
    Policy p = Linux61();
    p.scan_reclaim_direct = direct;
    p.slot_cache_batch = 4;  // active above 20 free pages, off below 8
    Harness h(Options(4, 1, p));
    const int t = h.On(Dev("a", 4 * 16));
    std::vector<Folio*> fs;
    for (int i = 0; i < 48; ++i) fs.push_back(h.AllocNew(0));  // 16..63, cache-only
    ASSERT_EQ(fs[47]->swap().offset, 63u);
    ASSERT_TRUE(h.sys.vm_swap_full());
    ASSERT_TRUE(h.sys.SetScanBase(t, 0, 20).ok());
    Folio* g = h.AllocNew(0);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->swap().offset, direct ? 21u : 1u);
    EXPECT_EQ(h.Sl(t, 22).kind, direct ? SlotKind::kCached : SlotKind::kEmpty);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

}  // namespace
}  // namespace swaplab::alloc::test
