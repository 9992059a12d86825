// SPDX-License-Identifier: MIT
// The image step in its two modes: a structural run (no page data made,
// copied or checked) must give the same runs, bios, bio sizes, map pages
// and modelled seconds as a data-carrying run of the same image on the
// same aged device; only the data-carrying run checks the pages.
#include "swaplab/workload/image_step.h"

#include <gtest/gtest.h>

#include "swaplab/workload/generators.h"

namespace swaplab::workload {
namespace {

struct Aged {
  explicit Aged(bool structural) {
    alloc::SystemOptions so;
    so.policy = *alloc::Policy::Preset("mm-new");
    so.nr_cpus = 4;
    sys = std::make_unique<alloc::SwapSystem>(so);
    alloc::SwaponOptions o;
    o.name = "d";
    o.pages = kPages;
    o.ssd = true;
    o.bdev = 0x800;
    type = *sys->Swapon(o);
    engine = MakeSimulatedSwapDevice(kPages, structural);
    // Every other 16 pages of the first half held: the image is cut into
    // many runs, so bio sizes vary.
    Workload w(*sys, 7);
    HolesSpec h;
    h.region_pages = kPages / 2;
    h.hole_pages = 16;
    EXPECT_TRUE(Holes(w, h).ok());
  }
  static constexpr uint64_t kPages = 16384;
  std::unique_ptr<alloc::SwapSystem> sys;
  std::unique_ptr<area::IoEngine> engine;
  int type = -1;
};

ImageResult RunImage(bool structural, hibernate::SlotSourceKind source, hibernate::BatchMode mode) {
  Aged d(structural);
  ImageSpec s;
  s.pages = 6000;  // 12 map pages, the last one partly filled
  s.source = source;
  s.batch.mode = mode;
  s.structural = structural;
  s.memory_budget_pages = 1024;  // low-memory drains happen (§6.1)
  auto r = WriteReadImage(*d.sys, d.type, *d.engine, s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ImageResult{};
}

class StructuralVsData
    : public ::testing::TestWithParam<std::pair<hibernate::SlotSourceKind, hibernate::BatchMode>> {
};

TEST_P(StructuralVsData, SameRunsBiosAndModelledSeconds) {
  const auto [source, mode] = GetParam();
  const ImageResult data = RunImage(false, source, mode);
  const ImageResult st = RunImage(true, source, mode);
  EXPECT_TRUE(data.data_checked);
  EXPECT_FALSE(st.data_checked);
  // The device is fragmented: base takes the holes (not a trivial layout);
  // sorted free clusters give one run.
  if (source == hibernate::SlotSourceKind::kBase) {
    EXPECT_GT(data.runs, 1u);
  }
  EXPECT_EQ(st.stream_pages, data.stream_pages);
  EXPECT_EQ(st.slots, data.slots);
  EXPECT_EQ(st.runs, data.runs);
  EXPECT_EQ(st.runs_alloc_order, data.runs_alloc_order);
  EXPECT_EQ(st.write_bios, data.write_bios);
  EXPECT_EQ(st.read_bios, data.read_bios);
  EXPECT_EQ(st.write_requests, data.write_requests);
  EXPECT_EQ(st.write_bio_sizes, data.write_bio_sizes);
  EXPECT_EQ(st.read_bio_sizes, data.read_bio_sizes);
  EXPECT_EQ(st.map_pages, data.map_pages);
  EXPECT_EQ(st.map_pages, 6000u / 511 + 1);
  EXPECT_EQ(st.fallback_slots, data.fallback_slots);
  EXPECT_GT(data.write_s, 0);
  EXPECT_DOUBLE_EQ(st.write_s, data.write_s);
  EXPECT_DOUBLE_EQ(st.read_s, data.read_s);
}

INSTANTIATE_TEST_SUITE_P(
    Sources, StructuralVsData,
    ::testing::Values(
        std::make_pair(hibernate::SlotSourceKind::kBase, hibernate::BatchMode::kPerPage),
        std::make_pair(hibernate::SlotSourceKind::kBase, hibernate::BatchMode::kPerRun),
        std::make_pair(hibernate::SlotSourceKind::kFreeClustersSorted,
                       hibernate::BatchMode::kPerRun)));

TEST(StructuralImage, NeedsAStructuralDevice) {
  Aged d(false);
  ImageSpec s;
  s.pages = 100;
  s.structural = true;
  auto r = WriteReadImage(*d.sys, d.type, *d.engine, s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("structural simulated device"), std::string::npos);
}

// A data-carrying run really checks: a structural device holds no page
// data, so reading its image with verification fails on the first data page.
TEST(StructuralImage, DataRunOnStructuralDeviceFailsVerification) {
  Aged d(true);
  ImageSpec s;
  s.pages = 2000;
  auto r = WriteReadImage(*d.sys, d.type, *d.engine, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), -ENODATA) << r.status().ToString();
}

}  // namespace
}  // namespace swaplab::workload
