// SPDX-License-Identifier: MIT
// Seed 001's layouts by name (layouts.h): the device state `image write
// --layout NAME` builds is the one the scenario of the same name, seed and
// scale ages its device to, cluster by cluster, list by list, slot by slot.
#include "swaplab/workload/layouts.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace swaplab::workload {
namespace {

using alloc::ListId;

// Every fact of a device's state the allocator exposes: the clusters
// (flag, order, count), each list in order, each slot (kind, count).
struct DeviceState {
  std::vector<std::tuple<int, int, uint32_t>> clusters;
  std::vector<std::vector<uint64_t>> lists;
  std::vector<std::pair<int, uint32_t>> slots;
  bool operator==(const DeviceState&) const = default;
};

DeviceState StateOf(const alloc::SwapSystem& sys, int type) {
  DeviceState s;
  const auto d = sys.Device(type);
  EXPECT_TRUE(d.ok());
  for (uint64_t c = 0; c < d->nr_clusters; ++c) {
    const auto ci = sys.Cluster(type, c);
    s.clusters.emplace_back(static_cast<int>(ci->flag), ci->order, ci->count);
  }
  for (ListId l :
       {ListId::kFree, ListId::kNonfull, ListId::kFrag, ListId::kFull, ListId::kDiscard}) {
    for (int o = 0; o < alloc::kMaxOrders; ++o) {
      auto list = sys.List(type, l, o);
      s.lists.push_back(list.ok() ? *list : std::vector<uint64_t>{});
    }
  }
  for (uint64_t off = 0; off < d->max; ++off) {
    const auto si = sys.Slot(alloc::SwapEntry{type, off});
    s.slots.emplace_back(static_cast<int>(si->kind), si->count);
  }
  return s;
}

// The scenario's side, set up as its runner sets up repetition 0 of its
// first variant: its policy, CPUs and device 0, then its aging phase.
DeviceState ScenarioState(const Scenario& sc) {
  alloc::SystemOptions so;
  so.policy = sc.variants[0].policy;
  so.nr_cpus = sc.cpus;
  alloc::SwapSystem sys(so);
  alloc::SwaponOptions o;
  o.name = sc.devices[0].name;
  o.pages = sc.devices[0].pages;
  o.ssd = sc.devices[0].ssd;
  o.blkdev = sc.devices[0].blkdev;
  o.bdev = 0x800;
  const int type = *sys.Swapon(o);
  Workload w(sys, sc.seed);
  for (const Step& s : sc.aging) {
    if (auto* f = std::get_if<FillFreeSpec>(&s)) {
      EXPECT_TRUE(FillFree(w, *f).ok());
    } else {
      EXPECT_TRUE(std::holds_alternative<HolesSpec>(s));
      EXPECT_TRUE(Holes(w, std::get<HolesSpec>(s)).ok());
    }
  }
  return StateOf(sys, type);
}

// `image write`'s side: one CPU, the area's header-derived options.
DeviceState ImageWriteState(RfcLayout l, uint64_t pages, uint64_t seed, std::optional<double> scale,
                            LayoutReport* rep) {
  alloc::SystemOptions so;
  so.policy = *alloc::Policy::Preset("mm-new");  // image write's default
  so.nr_cpus = 1;
  alloc::SwapSystem sys(so);
  alloc::SwaponOptions o;
  o.name = "area";
  o.pages = pages;
  o.ssd = true;
  o.blkdev = true;
  const int type = *sys.Swapon(o);
  auto r = ApplyRfcLayout(sys, type, l, seed, scale);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) *rep = *r;
  EXPECT_TRUE(sys.CheckInvariants().ok());
  return StateOf(sys, type);
}

struct Case {
  RfcLayout layout;
  double scale;
};
class LayoutsAsScenarios : public ::testing::TestWithParam<Case> {};

TEST_P(LayoutsAsScenarios, SameNameSeedAndScaleSameDeviceState) {
  const Case c = GetParam();
  auto sc = LayoutScenario(c.layout, c.scale);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->variants[0].policy.name, "mm-new");
  const DeviceState want = ScenarioState(*sc);
  LayoutReport rep;
  const DeviceState got = ImageWriteState(c.layout, sc->devices[0].pages, sc->seed, c.scale, &rep);
  EXPECT_TRUE(got == want);
  EXPECT_GT(rep.pages_swapped_out, 0u);
  // Another seed: another state for the shuffled free list.
  if (c.layout == RfcLayout::kShuffled) {
    LayoutReport other;
    EXPECT_FALSE(ImageWriteState(c.layout, sc->devices[0].pages, sc->seed + 1, c.scale, &other) ==
                 want);
  }
}

INSTANTIATE_TEST_SUITE_P(Seed001, LayoutsAsScenarios,
                         ::testing::Values(Case{RfcLayout::kShuffled, 0.02},
                                           Case{RfcLayout::kShuffled, 0.1},
                                           Case{RfcLayout::kHoles, 0.02},
                                           Case{RfcLayout::kHoles, 0.1}),
                         [](const auto& info) {
                           return std::string(Name(info.param.layout)) + "_" +
                                  std::to_string(static_cast<int>(info.param.scale * 100));
                         });

TEST(Layouts, ScaleFitsTheDeviceAndFreshDoesNothing) {
  // Without a scale, the scenario's device is made as large as the area:
  // at the scenario's own size, its own aging.
  auto full = LayoutScenario(RfcLayout::kShuffled);
  ASSERT_TRUE(full.ok());
  EXPECT_DOUBLE_EQ(*LayoutScale(RfcLayout::kShuffled, full->devices[0].pages), 1.0);
  EXPECT_DOUBLE_EQ(*LayoutScale(RfcLayout::kShuffled, full->devices[0].pages / 4), 0.25);
  LayoutReport rep;
  const auto s =
      ImageWriteState(RfcLayout::kShuffled, full->devices[0].pages / 8, 1, std::nullopt, &rep);
  EXPECT_EQ(
      rep.pages_swapped_out,
      std::get<FillFreeSpec>(LayoutScenario(RfcLayout::kShuffled, 0.125)->aging[0]).region_pages);
  EXPECT_EQ(rep.pages_left, 0u);
  LayoutReport fresh;
  ImageWriteState(RfcLayout::kFresh, 4096, 1, std::nullopt, &fresh);
  EXPECT_EQ(fresh.pages_swapped_out, 0u);
  EXPECT_EQ(ParseRfcLayout("holes").value(), RfcLayout::kHoles);
  EXPECT_EQ(ParseRfcLayout("zigzag").status().code(), -EINVAL);
  EXPECT_FALSE(LayoutScenario(RfcLayout::kFresh).ok());
}

}  // namespace
}  // namespace swaplab::workload
