// SPDX-License-Identifier: MIT
// Bio counting like the kernel (hibernation spec §6.1, §6.5, §10.5): every
// submitted request is a bio; the plug merges contiguous same-direction
// requests of one batch into device requests of at most MaxPagesPerRequest.
#include <gtest/gtest.h>

#include "area/io/plug.h"
#include "area/io_test_util.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/io_engine_factory.h"

namespace swaplab::area {
namespace {

using testing::MakeFile;
using testing::Pages;
using testing::Requests;
using testing::ScratchDir;

TEST(DeviceLimitsTest, MaxPagesPerRequestIsTheSmallerLimit) {
  DeviceLimits l;  // virtio-blk defaults: 254 segments, 1280 KiB
  EXPECT_EQ(l.MaxPagesPerRequest(), 254u);
  l.max_segments = 126;
  EXPECT_EQ(l.MaxPagesPerRequest(), 126u);
  l.max_segments = 512;
  EXPECT_EQ(l.MaxPagesPerRequest(), 320u);  // 1280 KiB / 4 KiB
  l.max_sectors_kb = 2;
  EXPECT_EQ(l.MaxPagesPerRequest(), 1u);  // never 0
}

TEST(PlugTest, BackMergesContiguousRequestsUpToTheLimit) {
  Pages p(10);
  auto reqs = Requests(true, 100, p, 10, 1);
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 0, 4, true, &out);
  ASSERT_EQ(out.size(), 3u);  // 4 + 4 + 2
  EXPECT_EQ(out[0].page, 100u);
  EXPECT_EQ(out[1].page, 104u);
  EXPECT_EQ(out[2].bufs.size(), 2u);
  EXPECT_EQ(out[2].pieces.size(), 2u);
  EXPECT_EQ(out[1].bufs[0], p[4]);
}

TEST(PlugTest, DoesNotMergeAcrossAGapOrADirectionChange) {
  Pages p(4);
  std::vector<IoRequest> reqs = {{true, 0, {p[0]}, 0},
                                 {true, 1, {p[1]}, 1},
                                 {true, 3, {p[2]}, 2},    // gap
                                 {false, 4, {p[3]}, 3}};  // read after write
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 0, 254, true, &out);
  EXPECT_EQ(out.size(), 3u);
  out.clear();
  io::PlugBatch(reqs, 0, 254, false, &out);
  EXPECT_EQ(out.size(), 4u);
}

TEST(PlugTest, OnlyBackMergesIntoTheLastRequest) {
  Pages p(3);
  // Page 1 then page 0: contiguous, but the new bio would go in front.
  std::vector<IoRequest> reqs = {{true, 1, {p[0]}, 0}, {true, 0, {p[1]}, 1}};
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 0, 254, true, &out);
  EXPECT_EQ(out.size(), 2u);
}

TEST(PlugTest, ARequestThatDoesNotFitStartsANewDeviceRequest) {
  Pages p(300);
  // 200 + 100 > 254: no partial merge, as a bio is merged whole or not at all.
  std::vector<IoRequest> reqs = Requests(true, 0, p, 300, 200);
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 0, 254, true, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].bufs.size(), 200u);
  EXPECT_EQ(out[1].bufs.size(), 100u);
}

TEST(PlugTest, SplitPiecesCoverTheRequestInOrder) {
  Pages p(600);
  auto reqs = Requests(false, 0, p, 600, 600);
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 7, 254, true, &out);
  ASSERT_EQ(out.size(), 3u);
  uint32_t first = 0;
  for (const auto& d : out) {
    ASSERT_EQ(d.pieces.size(), 1u);
    EXPECT_EQ(d.pieces[0].req, 7u);
    EXPECT_EQ(d.pieces[0].first, first);
    EXPECT_EQ(d.page, first);
    first += d.pieces[0].pages;
  }
  EXPECT_EQ(first, 600u);
}

TEST(PlugTest, ARunContinuingASplitRemainderMergesIntoIt) {
  Pages p(400);
  // 300 pages split 254 + 46, then 100 contiguous pages join the 46.
  std::vector<IoRequest> reqs = Requests(true, 0, p, 400, 300);
  std::vector<io::DeviceRequest> out;
  io::PlugBatch(reqs, 0, 254, true, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].bufs.size(), 146u);
}

// requests == ceil(pages / max), bios == pages, on every engine.
struct CountCase {
  uint32_t max_segments;
  size_t pages;
};

class PlugCountTest : public ::testing::TestWithParam<CountCase> {};

void ExpectCounts(IoEngine& e, size_t pages, uint32_t max) {
  Pages p(pages);
  auto w = Requests(true, 0, p, pages, 1);
  ASSERT_TRUE(e.Submit(w).ok());
  std::vector<IoCompletion> done;
  Status s = e.Wait(&done);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(done.size(), pages);
  EXPECT_EQ(e.stats().bios, pages) << e.name();
  EXPECT_EQ(e.stats().requests, (pages + max - 1) / max) << e.name();
  EXPECT_EQ(e.stats().pages_written, pages) << e.name();
}

TEST_P(PlugCountTest, PerPageContiguousRequests) {
  const CountCase c = GetParam();
  EngineOptions o;
  o.limits.max_segments = c.max_segments;
  const uint32_t max = o.limits.MaxPagesPerRequest();
  SimModel m;
  m.pages = c.pages;
  auto sim = MakeSimulatedEngine(m, o);
  ExpectCounts(*sim, c.pages, max);
  ScratchDir dir;
  const std::string f = dir.File("area");
  ASSERT_TRUE(MakeFile(f, c.pages));
  for (EngineKind kind : {EngineKind::kAuto, EngineKind::kPosix, EngineKind::kSim}) {
    auto e = OpenEngine(kind, f, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ExpectCounts(**e, c.pages, max);
  }
}

INSTANTIATE_TEST_SUITE_P(Limits, PlugCountTest,
                         ::testing::Values(CountCase{254, 1}, CountCase{254, 254},
                                           CountCase{254, 255}, CountCase{254, 1204},
                                           CountCase{126, 1204}, CountCase{1, 10},
                                           CountCase{512, 1000}));

TEST(PlugCountTest, WithoutPlugMergingEveryBioIsARequest) {
  EngineOptions o;
  o.plug_merge = false;
  SimModel m;
  m.pages = 100;
  auto sim = MakeSimulatedEngine(m, o);
  Pages p(100);
  auto w = Requests(true, 0, p, 100, 1);
  ASSERT_TRUE(sim->Submit(w).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE(sim->Wait(&done).ok());
  EXPECT_EQ(sim->stats().bios, 100u);
  EXPECT_EQ(sim->stats().requests, 100u);
}

TEST(PlugCountTest, EachSubmitIsItsOwnPlug) {
  SimModel m;
  m.pages = 100;
  auto sim = MakeSimulatedEngine(m, {});
  Pages p(100);
  auto w = Requests(true, 0, p, 100, 1);
  for (size_t i = 0; i < 100; i += 10) ASSERT_TRUE(sim->Submit({w.data() + i, 10}).ok());
  std::vector<IoCompletion> done;
  ASSERT_TRUE(sim->Wait(&done).ok());
  EXPECT_EQ(sim->stats().bios, 100u);
  EXPECT_EQ(sim->stats().requests, 10u);
}

}  // namespace
}  // namespace swaplab::area
