// SPDX-License-Identifier: MIT
// The simulated device: checksum and in-memory read-back, discard, and the
// cost model (docs/performance.md).
#include <gtest/gtest.h>

#include <cmath>

#include "area/io_test_util.h"
#include "swaplab/area/io_engine.h"

namespace swaplab::area {
namespace {

using testing::kPg;
using testing::Pages;
using testing::Requests;

Status RunBatch(IoEngine& e, std::vector<IoRequest> reqs, std::vector<IoCompletion>* done) {
  if (Status s = e.Submit(reqs); !s.ok()) return s;
  return e.Wait(done);
}

TEST(SimEngineTest, ChecksumReadBackNamesEveryWrittenPage) {
  SimModel m;
  m.pages = 64;
  auto e = MakeSimulatedEngine(m, {});
  std::mt19937_64 rng(1);
  Pages src(40), back(64);
  src.Fill(rng);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(true, 10, src, 40, 3), &done).ok());
  ASSERT_TRUE(RunBatch(*e, Requests(false, 0, back, 64, 7), &done).ok());
  std::vector<std::byte> zero(kPg);
  for (uint64_t page = 0; page < 64; ++page) {
    if (page < 10 || page >= 50) {
      EXPECT_EQ(std::memcmp(back[page], zero.data(), kPg), 0) << page;
      continue;
    }
    uint64_t rec[3];
    std::memcpy(rec, back[page], sizeof rec);
    EXPECT_EQ(rec[0], kSimChecksumPageMagic);
    EXPECT_EQ(rec[1], page);
    EXPECT_EQ(rec[2], SimPageChecksum(src[page - 10])) << page;
    EXPECT_EQ(std::memcmp(back[page] + 24, zero.data(), kPg - 24), 0);
  }
}

TEST(SimEngineTest, ChecksumsDifferForDifferentPages) {
  Pages p(2);
  p.Zero();
  const uint64_t a = SimPageChecksum(p[0]);
  p[1][4095] = std::byte{1};
  EXPECT_NE(a, SimPageChecksum(p[1]));
  EXPECT_NE(a, 0u);
}

TEST(SimEngineTest, UnboundedDeviceKeepsChecksumsInAMap) {
  SimModel m;  // pages = 0: no bound
  auto e = MakeSimulatedEngine(m, {});
  std::mt19937_64 rng(2);
  Pages src(1), back(1);
  src.Fill(rng);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, {IoRequest{true, 1ULL << 40, {src[0]}, 0}}, &done).ok());
  ASSERT_TRUE(RunBatch(*e, {IoRequest{false, 1ULL << 40, {back[0]}, 0}}, &done).ok());
  uint64_t rec[3];
  std::memcpy(rec, back[0], sizeof rec);
  EXPECT_EQ(rec[2], SimPageChecksum(src[0]));
}

TEST(SimEngineTest, StoreDataIsAnInMemoryDevice) {
  SimModel m;
  m.pages = 32;
  m.store_data = true;
  auto e = MakeSimulatedEngine(m, {});
  std::mt19937_64 rng(3);
  Pages src(32), back(32);
  src.Fill(rng);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(true, 0, src, 32, 5), &done).ok());
  ASSERT_TRUE(RunBatch(*e, Requests(false, 0, back, 32, 32), &done).ok());
  for (size_t i = 0; i < 32; ++i) EXPECT_TRUE(src.PageEquals(i, back, i)) << i;
}

TEST(SimEngineTest, DiscardForgetsPagesWhenTheDeviceDiscards) {
  SimModel m;
  m.pages = 8;
  m.store_data = true;
  EngineOptions o;
  auto plain = MakeSimulatedEngine(m, o);
  EXPECT_EQ(plain->Discard(0, 1).code(), -EOPNOTSUPP);
  o.limits.discard = true;
  auto e = MakeSimulatedEngine(m, o);
  std::mt19937_64 rng(4);
  Pages src(8), back(8);
  src.Fill(rng);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(true, 0, src, 8, 8), &done).ok());
  ASSERT_TRUE(e->Discard(2, 3).ok());
  EXPECT_EQ(e->Discard(6, 3).code(), -EINVAL);
  ASSERT_TRUE(RunBatch(*e, Requests(false, 0, back, 8, 8), &done).ok());
  std::vector<std::byte> zero(kPg);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(std::memcmp(back[i], (i >= 2 && i < 5) ? zero.data() : src[i], kPg), 0) << i;
}

TEST(SimEngineTest, OutOfRangeRequestIsRefused) {
  SimModel m;
  m.pages = 8;
  auto e = MakeSimulatedEngine(m, {});
  Pages p(2);
  std::vector<IoCompletion> done;
  EXPECT_EQ(RunBatch(*e, {IoRequest{true, 7, {p[0], p[1]}, 0}}, &done).code(), -EINVAL);
  EXPECT_TRUE(done.empty());
}

// The cost model, checked against its closed forms.
SimModel Model() {
  SimModel m;
  m.pages = 1 << 20;
  m.request_overhead_us = 30;
  m.request_serial_us = 10;
  m.write_mib_s = 500;
  m.read_mib_s = 1000;
  m.queue_depth = 32;
  m.store_checksums = false;
  return m;
}

double Xfer_us(double bytes, double mib_s) { return bytes / (mib_s * 1048576.0) * 1e6; }

TEST(SimCostTest, DepthOneCostsOverheadPlusServicePerRequest) {
  EngineOptions o;
  o.queue_depth = 1;
  o.plug_merge = false;
  auto e = MakeSimulatedEngine(Model(), o);
  Pages p(100);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(true, 0, p, 100, 1), &done).ok());
  const double want_us = 100 * (30 + 10 + Xfer_us(kPg, 500));
  EXPECT_NEAR(e->stats().modelled_ns / 1e3, want_us, 1.0);
}

TEST(SimCostTest, DeepQueueIsBoundByTheServiceTime) {
  EngineOptions o;
  o.queue_depth = 32;
  o.plug_merge = false;
  auto e = MakeSimulatedEngine(Model(), o);
  Pages p(1000);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(false, 0, p, 1000, 1), &done).ok());
  // The first request waits for its overhead; then the channel is never idle.
  const double service = 10 + Xfer_us(kPg, 1000);
  EXPECT_NEAR(e->stats().modelled_ns / 1e3, 30 + 1000 * service, 1.0);
}

TEST(SimCostTest, ShallowQueueIsBoundByLatency) {
  SimModel m = Model();
  m.request_serial_us = 1;
  EngineOptions o;
  o.queue_depth = 2;
  o.plug_merge = false;
  auto e = MakeSimulatedEngine(m, o);
  Pages p(100);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*e, Requests(false, 0, p, 100, 1), &done).ok());
  // Two requests overlap: 50 rounds of overhead + the two services.
  const double service = 1 + Xfer_us(kPg, 1000);
  const double t = e->stats().modelled_ns / 1e3;
  EXPECT_GT(t, 50 * (30 + service) - 1);
  EXPECT_LT(t, 50 * (30 + 2 * service) + 1);
}

TEST(SimCostTest, MergedRequestsPayTheOverheadOnce) {
  EngineOptions merged, split;
  split.plug_merge = false;
  merged.queue_depth = split.queue_depth = 1;
  auto a = MakeSimulatedEngine(Model(), merged);
  auto b = MakeSimulatedEngine(Model(), split);
  Pages p(254);
  std::vector<IoCompletion> done;
  ASSERT_TRUE(RunBatch(*a, Requests(true, 0, p, 254, 1), &done).ok());
  ASSERT_TRUE(RunBatch(*b, Requests(true, 0, p, 254, 1), &done).ok());
  EXPECT_NEAR(a->stats().modelled_ns / 1e3, 30 + 10 + Xfer_us(254.0 * kPg, 500), 1.0);
  EXPECT_NEAR(b->stats().modelled_ns / 1e3, 254 * (30 + 10 + Xfer_us(kPg, 500)), 1.0);
}

TEST(SimCostTest, RotationalDeviceChargesHeadTravel) {
  SimModel m = Model();
  m.rotational = true;
  m.seek_ms_per_gib = 8;
  EngineOptions o;
  o.queue_depth = 1;
  auto e = MakeSimulatedEngine(m, o);
  Pages p(1);
  std::vector<IoCompletion> done;
  // Head at 0 → page 131072 (512 MiB): 4 ms of travel.
  ASSERT_TRUE(RunBatch(*e, {IoRequest{false, 131072, {p[0]}, 0}}, &done).ok());
  const double base = 30 + 10 + Xfer_us(kPg, 1000);
  EXPECT_NEAR(e->stats().modelled_ns / 1e3, base + 4000, 1.0);
  // The next page follows the head: no travel.
  ASSERT_TRUE(RunBatch(*e, {IoRequest{false, 131073, {p[0]}, 1}}, &done).ok());
  EXPECT_NEAR(e->stats().modelled_ns / 1e3, 2 * base + 4000, 1.0);
}

TEST(SimCostTest, TimeAccumulatesAcrossWaits) {
  EngineOptions o;
  o.queue_depth = 1;
  auto e = MakeSimulatedEngine(Model(), o);
  Pages p(1);
  std::vector<IoCompletion> done;
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(RunBatch(*e, {IoRequest{true, static_cast<uint64_t>(i), {p[0]}, 0}}, &done).ok());
  EXPECT_NEAR(e->stats().modelled_ns / 1e3, 10 * (30 + 10 + Xfer_us(kPg, 500)), 1.0);
}

}  // namespace
}  // namespace swaplab::area
