// SPDX-License-Identifier: MIT
// The knobs of the linux-6.12 preset (Debian's 6.12, the vm guest), one
// test each: with the knob the model does what 6.12's source does, without
// it what the later kernels do. The guest's own placements are checked in
// tests/vm/guest_traces_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

Policy Linux612() {
  Result<Policy> p = Policy::Preset("linux-6.12");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

// 6.12 without the slot cache (one slot per allocation call).
Policy Linux612NoSlotCache() {
  Policy p = Linux612();
  p.slot_cache = false;
  p.slot_cache_return = false;
  return p;
}

// setup_clusters(): columns SWAP_CLUSTER_COLS = 32 clusters apart for
// 512-slot clusters, from column 0; the header's cluster goes to nonfull[0].
TEST(Linux612_Knobs, InterleaveFreeClusters) {
  for (bool on : {true, false}) {
    Policy p = Linux612();
    p.interleave_free_clusters = on;
    Harness h(Options(9, 1, p));
    const int t = h.On(Dev("a", 48 * 512));  // 96 MiB: 48 clusters
    const Offs free = h.L(t, ListId::kFree);
    ASSERT_EQ(free.size(), 47u);
    EXPECT_EQ(h.L(t, ListId::kNonfull, 0), Offs{0});
    if (on) {
      EXPECT_EQ(Offs(free.begin(), free.begin() + 5), (Offs{32, 1, 33, 2, 34}));
      EXPECT_EQ(Offs(free.end() - 3, free.end()), (Offs{29, 30, 31}));
      // What the guest's 6.12 did on a fresh 96 MiB virtio disk.
      EXPECT_EQ(h.Off(0), 16384u);
    } else {
      EXPECT_EQ(Offs(free.begin(), free.begin() + 3), (Offs{1, 2, 3}));
      EXPECT_EQ(h.Off(0), 512u);
    }
  }
}

// The column count follows the cluster size: 16384 slots' worth of
// clusters (SWAP_ADDRESS_SPACE_PAGES), so 1024 columns of 16-slot clusters.
TEST(Linux612_Knobs, InterleaveColumnsFollowTheClusterSize) {
  Harness h(Options(4, 1, Linux612()));
  const int t = h.On(Dev("a", 2048 * 16));
  const Offs free = h.L(t, ListId::kFree);
  EXPECT_EQ(Offs(free.begin(), free.begin() + 4), (Offs{1024, 1, 1025, 2}));
}

// cluster_alloc_swap_entry() without isolation: a cluster taken from the
// free list goes to nonfull[order] at its first allocation (v6.14+: off
// every list while scanned, then frag by relocate_cluster()).
TEST(Linux612_Knobs, IsolateClustersListMoves) {
  for (bool isolate : {false, true}) {
    Policy p = Linux612NoSlotCache();
    p.isolate_clusters = isolate;
    Harness h(Options(4, 1, p));
    const int t = h.On(Dev("a", 4 * 16));
    EXPECT_EQ(h.Off(0), 16u);
    if (isolate) {
      EXPECT_EQ(h.L(t, ListId::kNonfull, 0), Offs{0});
      EXPECT_EQ(h.L(t, ListId::kFrag, 0), Offs{1});
    } else {
      EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 1}));
      EXPECT_TRUE(h.L(t, ListId::kFrag, 0).empty());
    }
  }
}

// 6.12 scans the CPU's next[order] wherever it points: when the cluster
// was freed meanwhile, from that offset (v6.14+ model: a FREE cluster is
// not scanned through the hint; the free list's head is taken).
TEST(Linux612_Knobs, IsolateClustersStaleHintKeepsItsOffset) {
  for (bool isolate : {false, true}) {
    Policy p = Linux612NoSlotCache();
    p.isolate_clusters = isolate;
    Harness h(Options(4, 1, p));
    h.On(Dev("a", 4 * 16));
    std::vector<Folio*> fs;
    for (int i = 0; i < 3; ++i) fs.push_back(h.AllocNew(0));
    ASSERT_EQ(fs[2]->swap().offset, 18u);
    for (Folio* f : fs) h.FreeCacheOnly(*f);  // cluster 1 is free again
    EXPECT_EQ(h.Off(0), isolate ? 32u : 19u);
  }
}

// free_swap_slot(): an order-0 free waits in the CPU's return buffer (64
// entries; the slot stays cache-held and in use) and the whole buffer is
// freed when a 65th comes.
TEST(Linux612_Knobs, SlotCacheReturnBuffer) {
  for (bool ret : {true, false}) {
    Policy p = Linux612();
    p.slot_cache_return = ret;
    Harness h(Options(9, 1, p));
    const int t = h.On(Dev("a", 4 * 512));
    std::vector<Folio*> fs;
    for (int i = 0; i < 70; ++i) fs.push_back(h.AllocNew(0));
    ASSERT_EQ(h.Dv(t).inuse, 128u);  // two refills of 64
    const uint64_t first = fs[0]->swap().offset;
    h.FreeCacheOnly(*fs[0]);
    if (ret) {
      EXPECT_EQ(h.Dv(t).inuse, 128u);
      EXPECT_EQ(h.Sl(t, first).kind, SlotKind::kCached);
      EXPECT_EQ(h.Sl(t, first).folio, nullptr);
    } else {
      EXPECT_EQ(h.Dv(t).inuse, 127u);
      EXPECT_EQ(h.Sl(t, first).kind, SlotKind::kEmpty);
    }
    for (int i = 1; i < 64; ++i) h.FreeCacheOnly(*fs[i]);
    EXPECT_EQ(h.Dv(t).inuse, ret ? 128u : 64u);
    h.FreeCacheOnly(*fs[64]);  // the buffer is full: its 64 go, this one waits
    EXPECT_EQ(h.Dv(t).inuse, ret ? 64u : 63u);
    EXPECT_EQ(h.Sl(t, first).kind, SlotKind::kEmpty);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

// free_swap_slot() takes this CPU's return buffer: frees that RunOn sends
// to two CPUs fill two buffers, and neither is full after 40 each; all 80
// on one CPU fill its buffer, and the 65th free empties it.
TEST(Linux612_Knobs, FreesWaitInTheBufferOfTheirCpu) {
  for (bool split : {true, false}) {
    Harness h(Options(9, 2, Linux612()));
    const int t = h.On(Dev("a", 4 * 512));
    std::vector<Folio*> fs;
    for (int i = 0; i < 100; ++i) fs.push_back(h.AllocNew(0));
    ASSERT_EQ(h.Dv(t).inuse, 128u);  // two refills of 64
    for (int i = 0; i < 80; ++i) {
      ASSERT_TRUE(h.sys.RunOn(split && i >= 40 ? 1 : 0).ok());
      h.FreeCacheOnly(*fs[i]);
    }
    EXPECT_EQ(h.Dv(t).inuse, split ? 128u : 64u) << (split ? "two CPUs" : "one CPU");
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
  Harness h(Options(9, 2, Linux612()));
  EXPECT_EQ(h.sys.RunOn(2).code(), -EINVAL);
  EXPECT_EQ(h.sys.RunOn(-1).code(), -EINVAL);
}

// get_swap_pages() takes the request off nr_swap_pages before the scan, so
// a scan at exactly half full already sees vm_swap_full() and takes a
// cache-only slot back (cluster_scan_range() / cluster_reclaim_range()).
TEST(Linux612_Knobs, SwapPagesTakenAhead) {
  for (bool ahead : {true, false}) {
    Policy p = Linux612NoSlotCache();
    p.swap_pages_taken_ahead = ahead;
    Harness h(Options(4, 1, p));
    SwaponOptions d = Dev("a", 4 * 16);
    for (uint64_t b = 1; b < 16; ++b) d.bad_pages.push_back(b);  // cluster 0: BAD only
    d.bad_pages.push_back(63);
    const int t = h.On(d);
    ASSERT_EQ(h.Dv(t).pages, 47u);
    // Fill it, every slot mapped (nothing for reclaim to take meanwhile).
    std::vector<Folio*> fs;
    for (int i = 0; i < 47; ++i) {
      fs.push_back(h.AllocNew(0));
      ASSERT_NE(fs.back(), nullptr);
      ASSERT_TRUE(h.Dup(*fs.back()).ok());
    }
    ASSERT_EQ(fs[0]->swap().offset, 16u);
    ASSERT_EQ(fs[46]->swap().offset, 62u);
    ASSERT_TRUE(h.Put(*fs[0]).ok());  // slot 16: in the swap cache only
    auto free_slot = [&](Folio* f) {
      ASSERT_TRUE(h.Put(*f).ok());
      h.FreeCacheOnly(*f);
    };
    free_slot(fs[15]);                               // 31: cluster 1 to nonfull first
    for (int i = 16; i < 31; ++i) free_slot(fs[i]);  // 32..46
    for (int i = 32; i < 40; ++i) free_slot(fs[i]);  // 48..55
    ASSERT_EQ(h.sys.nr_swap_pages(), 24);            // 2 * 24 >= 47: not full
    ASSERT_FALSE(h.sys.vm_swap_full());
    ASSERT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1, 2, 3}));
    // Taken ahead, the scan of cluster 1 sees 23 free pages of 47: full.
    EXPECT_EQ(h.Off(0), ahead ? 16u : 31u);
  }
}

// 6.12 gives clusters only to non-rotational devices; the others are served
// by scan_swap_map_slots()'s swap_map scan from cluster_next (1 at swapon)
// and never hold a large folio.
TEST(Linux612_Knobs, RotationalSwapMapScan) {
  for (bool scan : {true, false}) {
    Policy p = Linux612();
    p.rotational_swap_map_scan = scan;
    Harness h(Options(9, 1, p));
    SwaponOptions d = Dev("hdd", 4 * 512);
    d.ssd = false;
    const int t = h.On(d);
    EXPECT_EQ(h.Off(0), scan ? 1u : 512u);
    EXPECT_EQ(h.AllocNew(0, 2) != nullptr, !scan);
    EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
  }
}

// The swap_map scan: a run goes on while the next slot is free; when it
// meets a used one it looks a little further; once swap is full it wraps to
// lowest_bit and takes the freed slot.
TEST(Linux612_Knobs, RotationalSwapMapScanFindsTheHole) {
  Harness h(Options(4, 1, Linux612NoSlotCache()));
  SwaponOptions d = Dev("hdd", 2 * 16 + 1);
  d.ssd = false;
  const int t = h.On(d);
  std::vector<Folio*> fs;
  for (int i = 0; i < 32; ++i) fs.push_back(h.AllocNew(0));
  for (int i = 0; i < 32; ++i) ASSERT_EQ(fs[i]->swap().offset, static_cast<uint64_t>(i + 1));
  EXPECT_EQ(h.Off(0), 0u);  // full
  h.FreeCacheOnly(*fs[6]);  // slot 7
  EXPECT_EQ(h.Off(0), 7u);
  EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
}

}  // namespace
}  // namespace swaplab::alloc::test
