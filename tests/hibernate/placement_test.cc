// SPDX-License-Identifier: MIT
// §10: placement on a fresh contiguous area, submission order (§4.5), and
// bio counts (§10.5) measured on the writer against the formulas.
#include <gtest/gtest.h>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::MakeRig;
using testing::Rig;

SyntheticSnapshot Snap(uint64_t saveable, double zero = 0, uint64_t seed = 7) {
  SnapshotOptions o;
  o.saveable_pages = saveable;
  o.zero_share = zero;
  o.compressible_share = 0.3;
  o.seed = seed;
  return *SyntheticSnapshot::Make(o);
}

Result<WriteReport> Write(Rig& r, SlotSourceKind k, const SyntheticSnapshot& s,
                          BatchOptions b = {}) {
  ImageSession session(*r.sys, r.type, k);
  WriterOptions o;
  o.batch = b;
  o.record_placement = true;
  return WriteImage(session, *r.engine, s, o);
}

class PlacementBySource : public ::testing::TestWithParam<SlotSourceKind> {};

TEST_P(PlacementBySource, FreshAreaMatchesWorkedExample) {
  for (uint64_t saveable : {1u, 300u, 508u, 509u, 510u, 1019u, 1200u, 1530u, 3000u}) {
    // base: the v7.1+ per-CPU hint keeps one slot after another (§10.1);
    // it starts at slot 1, in cluster 0 (on nonfull[0] because of the header).
    const bool base = GetParam() == SlotSourceKind::kBase;
    alloc::SystemOptions so;
    so.policy.hibernation_percpu_hint = base;
    Rig r = MakeRig(16384, GetParam() == SlotSourceKind::kReserve ? 2048 : 0, {}, so);
    ASSERT_GE(r.type, 0);
    const auto s = Snap(saveable);
    auto rep = Write(r, GetParam(), s);
    ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    const uint64_t T = s.image_pages(), S = rep->image;
    SCOPED_TRACE("T=" + std::to_string(T));
    EXPECT_EQ(S, base ? 1u : 512u);  // cluster 0 holds the header
    ASSERT_EQ(rep->stream_dblocks.size(), T);
    for (uint64_t p = 0; p < T; ++p)
      ASSERT_EQ(rep->stream_dblocks[p], StreamSlot(S, p)) << "p=" << p;
    ASSERT_EQ(rep->map_dblocks.size(), T / kMapEntries + 1);
    for (uint64_t j = 0; j < rep->map_dblocks.size(); ++j)
      EXPECT_EQ(rep->map_dblocks[j], MapSlot(S, j));
    EXPECT_EQ(rep->slots, SlotsUsed(T));
    EXPECT_EQ(rep->device_runs, 1u);
    EXPECT_EQ(rep->batch.bios, BiosPerRunFormula(T, 254));
    EXPECT_TRUE(r.sys->CheckInvariants().ok()) << r.sys->CheckInvariants().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(AllSources, PlacementBySource,
                         ::testing::Values(SlotSourceKind::kBase, SlotSourceKind::kFreeClusters,
                                           SlotSourceKind::kFreeClustersSorted,
                                           SlotSourceKind::kReserve, SlotSourceKind::kPmd),
                         [](const auto& info) {
                           std::string n = Name(info.param);
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Placement, ImageLargerThanReserveContinuesIntoClaimedClusters) {
  Rig r = MakeRig(16384, 1024);  // 2 clusters reserved
  const auto s = Snap(1530);     // U = 1538 slots > 1024
  auto rep = Write(r, SlotSourceKind::kReserve, s);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  EXPECT_EQ(rep->image, 512u);
  EXPECT_EQ(rep->device_runs, 1u);
  for (uint64_t p = 0; p < s.image_pages(); ++p)
    ASSERT_EQ(rep->stream_dblocks[p], StreamSlot(512, p));
}

TEST(SubmissionOrder, KernelOrderPerPage) {
  Rig r = MakeRig(16384);
  const auto s = Snap(1200);  // T = 1204, Q = 2, r = 182
  ASSERT_EQ(s.image_pages(), 1204u);
  auto rep = Write(r, SlotSourceKind::kFreeClustersSorted, s,
                   {BatchMode::kPerPage, CapacityMode::kExact, 0});
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  const uint64_t S = 512;
  std::vector<testing::LoggedRequest> want;
  auto w = [&](uint64_t b) { want.push_back({true, b, 1}); };
  w(S + 1);                                          // swsusp_info, sync
  for (uint64_t b = S + 2; b <= S + 511; ++b) w(b);  // stream pages 1..510
  w(S);                                              // map 0
  for (uint64_t b = S + 513; b <= S + 1023; ++b) w(b);
  w(S + 512);                                            // map 1
  for (uint64_t b = S + 1025; b <= S + 1206; ++b) w(b);  // last partial chunk
  want.push_back({false, 0, 1});                         // signature: read,
  want.push_back({true, 0, 1});                          // then write
  w(S + 1024);                                           // last map page, sync
  const auto& got = r.engine->log_;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].write, want[i].write) << i;
    ASSERT_EQ(got[i].page, want[i].page) << i;
    ASSERT_EQ(got[i].pages, want[i].pages) << i;
  }
  EXPECT_EQ(rep->batch.bios, BiosPerPageFormula(1204));
  EXPECT_EQ(rep->batch.bios, 1205u);
  EXPECT_EQ(rep->batch.sync_ios, 4u);
  // the plug merges contiguous single-page bios into few device requests
  EXPECT_LT(r.engine->stats().requests, 30u);
}

struct BioCase {
  uint32_t P;
  CapacityMode cap;
  uint32_t C;
};

TEST(BioCount, PerRunMatchesFormulaForEveryCapacity) {
  for (BioCase c :
       {BioCase{126, CapacityMode::kExact, 126}, BioCase{128, CapacityMode::kExact, 128},
        BioCase{254, CapacityMode::kExact, 254}, BioCase{256, CapacityMode::kExact, 256},
        BioCase{126, CapacityMode::kSlab, 128}, BioCase{254, CapacityMode::kSlab, 256},
        BioCase{3, CapacityMode::kExact, 3}, BioCase{1, CapacityMode::kExact, 1}}) {
    for (uint64_t saveable : {1u, 2u, 300u, 509u, 510u, 1019u, 1200u, 1530u, 4000u}) {
      Rig r = MakeRig(16384);
      const auto s = Snap(saveable);
      auto rep = Write(r, SlotSourceKind::kFreeClustersSorted, s, {BatchMode::kPerRun, c.cap, c.P});
      ASSERT_TRUE(rep.ok()) << rep.status().ToString();
      const uint64_t T = s.image_pages();
      EXPECT_EQ(rep->batch.bios, BiosPerRunFormula(T, c.C))
          << "T=" << T << " P=" << c.P << " " << Name(c.cap);
      EXPECT_EQ(rep->batch.pages, BiosPerPageFormula(T)) << "T=" << T;
      uint64_t n = 0;
      for (auto [size, count] : rep->batch.bio_sizes) {
        EXPECT_LE(size, c.C);
        n += count;
      }
      EXPECT_EQ(n, rep->batch.bios);
    }
  }
}

TEST(BioCount, MiddleChunkSizesForP254) {
  Rig r = MakeRig(16384);
  const auto s = Snap(1200);  // T = 1204
  auto rep = Write(r, SlotSourceKind::kFreeClustersSorted, s,
                   {BatchMode::kPerRun, CapacityMode::kExact, 254});
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->batch.bios, 12u);  // §10.5 small instance
  // chunk 0: 1,254,254,1 + map 1; chunk 1: 1,254,254,2 + map 1; tail: 1,181
  std::map<uint32_t, uint64_t> want{{1, 6}, {2, 1}, {181, 1}, {254, 4}};
  EXPECT_EQ(rep->batch.bio_sizes, want);
}

TEST(BioCount, PerPageIsTMinusOnePlusQ) {
  for (uint64_t saveable : {1u, 509u, 1200u, 3000u}) {
    Rig r = MakeRig(16384);
    const auto s = Snap(saveable);
    auto rep = Write(r, SlotSourceKind::kBase, s, {BatchMode::kPerPage, CapacityMode::kExact, 0});
    ASSERT_TRUE(rep.ok());
    EXPECT_EQ(rep->batch.bios, BiosPerPageFormula(s.image_pages()));
    EXPECT_EQ(rep->batch.bio_sizes.size(), 1u);
  }
}

}  // namespace
}  // namespace swaplab::hibernate

namespace swaplab::hibernate {
namespace {

TEST(MemoryBudget, DrainsOncePerMapPageWhenCopiesPileUp) {
  Rig r = MakeRig(16384);
  const auto s = Snap(4000);  // T ≈ 4009: 7 full map pages
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions o;
  o.memory_budget_pages = 1024;  // reqd 512: drain after every map page
  o.record_placement = true;
  auto rep = WriteImage(session, *r.engine, s, o);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  // after map 0: 511 copies, 513 free > 512, no drain; after map 1..Q-1:
  // free ≤ half of the last measure, drain; plus the final drain
  const uint64_t Q = s.image_pages() / kMapEntries;
  EXPECT_EQ(rep->batch.drains, (Q - 1) + 1);
  // placement is unchanged; only bios are cut at the drains
  for (uint64_t p = 0; p < s.image_pages(); ++p)
    ASSERT_EQ(rep->stream_dblocks[p], StreamSlot(512, p));
  auto rd = ReadImage(*r.engine, 0, {});
  EXPECT_TRUE(rd.ok()) << rd.status().ToString();
}

}  // namespace
}  // namespace swaplab::hibernate
