// SPDX-License-Identifier: MIT
// §5.1 swapon: device record, header, cluster setup (§1.7 rows 1-2),
// discard flags, priority, enable.
#include <gtest/gtest.h>

#include "alloc/test_util.h"

namespace swaplab::alloc::test {
namespace {

// §5.1 steps 4, 5, 9 with CLUSTER = 16 and a partial last cluster.
TEST(Swapon_5_1, ClusterSetupSmallClusters) {
  Harness h(Options(4));
  const int t = h.On(Dev("a", 100));
  ASSERT_EQ(t, 0);
  ASSERT_INVARIANTS(h.sys);
  const DeviceInfo d = h.Dv(t);
  EXPECT_EQ(d.max, 100u);
  EXPECT_EQ(d.pages, 99u);  // max − header
  EXPECT_EQ(d.inuse, 0u);
  EXPECT_EQ(d.nr_clusters, 7u);  // ceil(100 / 16)
  EXPECT_TRUE(d.writeok);
  EXPECT_TRUE(d.on_avail_list);
  EXPECT_EQ(d.free_clusters, 5u);
  EXPECT_EQ(d.nonfull_clusters, 2u);
  EXPECT_EQ(d.frag_clusters + d.full_clusters + d.discard_clusters + d.isolated_clusters, 0u);
  // Clusters with bad slots (header; offsets 100..111) go to nonfull[0] in
  // index order, all others to the free list in index order.
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 6}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3, 4, 5}));
  const ClusterInfo c0 = h.Cl(t, 0), c1 = h.Cl(t, 1), c6 = h.Cl(t, 6);
  EXPECT_EQ(c0.flag, ClusterFlag::kNonfull);
  EXPECT_EQ(c0.count, 1u);
  EXPECT_TRUE(c0.has_table);  // §1.5: clusters with bad slots get a table at swapon
  EXPECT_EQ(c0.order, 0);
  EXPECT_EQ(c6.flag, ClusterFlag::kNonfull);
  EXPECT_EQ(c6.count, 12u);  // [100, 112) are BAD
  EXPECT_TRUE(c6.has_table);
  EXPECT_EQ(c1.flag, ClusterFlag::kFree);
  EXPECT_EQ(c1.count, 0u);
  EXPECT_FALSE(c1.has_table);
  EXPECT_EQ(h.Sl(t, 0).kind, SlotKind::kBad);
  EXPECT_EQ(h.Sl(t, 1).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.Sl(t, 99).kind, SlotKind::kEmpty);
  EXPECT_EQ(h.sys.nr_swap_pages(), 99);
  EXPECT_EQ(h.sys.total_swap_pages(), 99);
}

// Same with the default CLUSTER = 512.
TEST(Swapon_5_1, ClusterSetupDefaultClusters) {
  SystemOptions o = Options(kDefaultClusterShift);
  Harness h(o);
  ASSERT_EQ(h.sys.cluster_size(), 512u);
  const int t = h.On(Dev("a", 2148));
  ASSERT_INVARIANTS(h.sys);
  const DeviceInfo d = h.Dv(t);
  EXPECT_EQ(d.nr_clusters, 5u);
  EXPECT_EQ(d.pages, 2147u);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 4}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 2, 3}));
  EXPECT_EQ(h.Cl(t, 4).count, 2560u - 2148u);
}

// §5.1 step 5: each header bad page is BAD, pages −= 1, its cluster has a
// table and starts on nonfull[0].
TEST(Swapon_5_1, BadPagesReduceUsablePages) {
  Harness h(Options(4));
  SwaponOptions o = Dev("a", 64);
  o.bad_pages = {40, 5};
  const int t = h.On(o);
  ASSERT_INVARIANTS(h.sys);
  const DeviceInfo d = h.Dv(t);
  EXPECT_EQ(d.max, 64u);
  EXPECT_EQ(d.pages, 61u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 61);
  EXPECT_EQ(h.sys.total_swap_pages(), 61);
  EXPECT_EQ(h.Sl(t, 5).kind, SlotKind::kBad);
  EXPECT_EQ(h.Sl(t, 40).kind, SlotKind::kBad);
  EXPECT_EQ(h.Cl(t, 0).count, 2u);
  EXPECT_EQ(h.Cl(t, 2).count, 1u);
  EXPECT_TRUE(h.Cl(t, 2).has_table);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 2}));
  EXPECT_EQ(h.L(t, ListId::kFree), (Offs{1, 3}));
}

// §5.1 step 3/5: max is capped by the architecture maximum; a bad page in
// [1, last_page] but ≥ max is ignored (pages not reduced).
TEST(Swapon_5_1, BadPageBeyondArchMaxIsIgnored) {
  SystemOptions o = Options(4);
  o.max_swapfile_pages = 40;
  Harness h(o);
  SwaponOptions d = Dev("a", 64);
  d.bad_pages = {50, 7};
  const int t = h.On(d);
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Dv(t).max, 40u);
  EXPECT_EQ(h.Dv(t).pages, 38u);  // 40 − header − page 7
  EXPECT_EQ(h.Dv(t).nr_clusters, 3u);
  EXPECT_EQ(h.Cl(t, 2).count, 8u);  // [40, 48) BAD
}

// §8 C4 exception and §2.6: a cluster made only of bad slots sits on
// nonfull[0] with count == CLUSTER and moves to the full list the first
// time an allocator looks at it (count test fails, nothing scanned).
TEST(Swapon_5_1, AllBadClusterMovesToFullWhenScanned) {
  Harness h(Options(4));
  SwaponOptions o = Dev("a", 64);
  for (uint64_t b = 16; b < 32; ++b) o.bad_pages.push_back(b);
  const int t = h.On(o);
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.Dv(t).pages, 47u);
  EXPECT_EQ(h.Cl(t, 1).count, 16u);
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kNonfull);
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{0, 1}));
  // Cluster 0: offsets 1..15 (first from nonfull[0], rest fast path).
  for (uint64_t want = 1; want <= 15; ++want) ASSERT_EQ(h.Off(0), want);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{0}));
  EXPECT_EQ(h.L(t, ListId::kNonfull, 0), (Offs{1}));
  // Next: slow path, nonfull[0] = cluster 1 fails the count test → FULL;
  // then the free list gives cluster 2.
  EXPECT_EQ(h.Off(0), 32u);
  EXPECT_EQ(h.L(t, ListId::kFull), (Offs{0, 1}));
  EXPECT_EQ(h.Cl(t, 1).flag, ClusterFlag::kFull);
  EXPECT_TRUE(h.L(t, ListId::kNonfull, 0).empty());
}

// §5.1 step 1: lowest free type; a record is reused after swapoff.
TEST(Swapon_5_1, LowestFreeTypeAndReuse) {
  Harness h(Options(4));
  EXPECT_EQ(h.On(Dev("a", 32)), 0);
  EXPECT_EQ(h.On(Dev("b", 32)), 1);
  EXPECT_EQ(h.On(Dev("c", 32)), 2);
  ASSERT_TRUE(h.SwapOff(1).ok());
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(h.On(Dev("d", 32)), 1);
  EXPECT_EQ(h.Dv(1).name, "d");
}

// §5.1 step 1: MAX_SWAPFILES records; the next swapon is refused (EPERM).
TEST(Swapon_5_1, MaxSwapfiles) {
  Harness h(Options(4));
  for (int i = 0; i < kMaxSwapfiles; ++i) ASSERT_EQ(h.On(Dev("d" + std::to_string(i), 32)), i);
  const std::string before = Snapshot(h.sys);
  Result<int> r = h.sys.Swapon(Dev("one-too-many", 32));
  ASSERT_FALSE(r.ok());
  EXPECT_ERRNO(r.status(), -EPERM);
  ASSERT_INVARIANTS(h.sys);
  EXPECT_EQ(Snapshot(h.sys), before);
}

// §5.1 step 7: discard flags by mode and device support.
TEST(Swapon_5_1, DiscardFlags) {
  struct Case {
    DiscardMode mode;
    bool supported, page, area;
  };
  const Case cases[] = {
      {DiscardMode::kNone, true, false, false},  {DiscardMode::kOnce, true, false, true},
      {DiscardMode::kPages, true, true, false},  {DiscardMode::kBoth, true, true, true},
      {DiscardMode::kBoth, false, false, false},
  };
  Harness h(Options(4));
  int i = 0;
  for (const Case& c : cases) {
    SwaponOptions o = Dev("d" + std::to_string(i++), 48);
    o.discard = c.mode;
    o.discard_supported = c.supported;
    const int t = h.On(o);
    ASSERT_GE(t, 0);
    EXPECT_EQ(h.Dv(t).page_discard, c.page) << Name(c.mode) << " supported=" << c.supported;
    EXPECT_EQ(h.Dv(t).area_discard, c.area) << Name(c.mode) << " supported=" << c.supported;
  }
}

// §5.1 step 7 / §3.6: AREA_DISCARD discards the whole area but the header
// once at swapon.
TEST(Swapon_5_1, AreaDiscardAtSwapon) {
  Harness h(Options(4));
  RecordingSink sink;
  SwaponOptions o = Dev("a", 64);
  o.discard = DiscardMode::kOnce;
  o.discard_sink = &sink;
  const int t = h.On(o);
  ASSERT_GE(t, 0);
  EXPECT_EQ(sink.TotalPages(), 63u);
  for (const auto& c : sink.calls) {
    EXPECT_EQ(c.type, t);
    EXPECT_GE(c.first, 1u);
    EXPECT_LE(c.first + c.nr, 64u);
  }
}

// §5.1 steps 2, 6: SSD and BLKDEV flags follow the device.
TEST(Swapon_5_1, SsdAndBlockDeviceFlags) {
  Harness h(Options(4));
  SwaponOptions f = Dev("/swapfile", 32);
  f.blkdev = false;
  f.ssd = false;
  const int a = h.On(f);
  const int b = h.On(Dev("/dev/nvme0n1p2", 32));
  EXPECT_FALSE(h.Dv(a).ssd);
  EXPECT_FALSE(h.Dv(a).blkdev);
  EXPECT_TRUE(h.Dv(b).ssd);
  EXPECT_TRUE(h.Dv(b).blkdev);
}

// §5.1 step 8: given priority kept; default −1 shared; explicit priorities
// rank above the default ones (avail and active lists in priority order).
TEST(Swapon_5_1, PriorityGivenOrDefault) {
  Harness h(Options(4));
  const int a = h.On(Dev("a", 32));
  SwaponOptions ob = Dev("b", 32);
  ob.prio = 0;
  const int b = h.On(ob);
  const int c = h.On(Dev("c", 32));
  SwaponOptions od = Dev("d", 32);
  od.prio = 7;
  const int d = h.On(od);
  EXPECT_EQ(h.Dv(a).prio, -1);
  EXPECT_EQ(h.Dv(b).prio, 0);
  EXPECT_EQ(h.Dv(c).prio, -1);
  EXPECT_EQ(h.Dv(d).prio, 7);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{d, b, a, c}));
  EXPECT_EQ(h.sys.active_devices(), (std::vector<int>{d, b, a, c}));
}

// §5.1 step 9 / §8 G1: enabling adds pages to nr_swap_pages and
// total_swap_pages; §7 /proc/swaps shows Size and Used in KiB.
TEST(Swapon_5_1, EnableAddsCountersAndProcSwaps) {
  Harness h(Options(4));
  SwaponOptions o = Dev("/dev/zram0", 64);
  o.bad_pages = {3};
  h.On(o);
  SwaponOptions f = Dev("/swapfile", 48);
  f.blkdev = false;
  f.prio = 3;
  h.On(f);
  EXPECT_EQ(h.sys.total_swap_pages(), 62 + 47);
  EXPECT_EQ(h.sys.nr_swap_pages(), 62 + 47);
  ASSERT_NE(h.Off(0), 0u);  // goes to /swapfile (prio 3)
  const std::string ps = h.sys.ProcSwaps();
  EXPECT_NE(ps.find("Filename"), std::string::npos) << ps;
  std::istringstream in(ps);
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, type;
    uint64_t size = 0, used = 0;
    int prio = 0;
    ls >> name >> type >> size >> used >> prio;
    if (name == "/dev/zram0") {
      ++seen;
      EXPECT_EQ(type, "partition");
      EXPECT_EQ(size, 62u * 4);
      EXPECT_EQ(used, 0u);
      EXPECT_EQ(prio, -1);
    } else if (name == "/swapfile") {
      ++seen;
      EXPECT_EQ(type, "file");
      EXPECT_EQ(size, 47u * 4);
      EXPECT_EQ(used, 4u);
      EXPECT_EQ(prio, 3);
    }
  }
  EXPECT_EQ(seen, 2) << ps;
}

}  // namespace
}  // namespace swaplab::alloc::test
