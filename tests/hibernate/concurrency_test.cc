// SPDX-License-Identifier: MIT
// The compressed image path's threads under TSan (label `concurrency`,
// built by CI's tsan step): compressor workers plus the CRC thread on write
// (§7.2, §7.5), decompressor threads on read (§7.6), with 2 and 3 threads,
// every compressor; a write that fails in the middle must stop every thread
// and give back every slot (§4.6), a read that fails in the middle must stop
// them too. Small images on the in-memory engine: fast under sanitizers.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/compress.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::Inuse;
using testing::MakeRig;
using testing::Rig;

struct Case {
  Compressor c;
  unsigned threads;
};

class CompressedThreads : public ::testing::TestWithParam<Case> {
 protected:
  static SyntheticSnapshot Snap() {
    SnapshotOptions o;
    o.saveable_pages = 2600;  // several rounds of 2-3 units, map page 0 async
    o.zero_share = 0.1;
    o.compressible_share = 0.4;
    o.seed = 23;
    return *SyntheticSnapshot::Make(o);
  }
  WriterOptions Wopts() const {
    WriterOptions o;
    o.batch.mode = BatchMode::kPerRun;
    o.compress = GetParam().c;
    o.threads = GetParam().threads;
    return o;
  }
  ReaderOptions Ropts() const {
    ReaderOptions o;
    o.threads = GetParam().threads;
    o.read_ring_pages = 64;  // wraps many times
    return o;
  }
};

TEST_P(CompressedThreads, RoundTripThenFailuresInTheMiddle) {
  const auto s = Snap();
  uint64_t requests = 0, read_requests = 0;
  uint32_t crc = 0;
  {  // a clean round trip: every page back, CRCs agree
    Rig r = MakeRig(8192);
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    auto w = WriteImage(session, *r.engine, s, Wopts());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_GT(w->units, 2u * GetParam().threads);  // more than two rounds
    requests = r.engine->submitted();
    crc = w->crc32;
    const uint64_t before_read = r.engine->submitted();
    auto rd = ReadImage(*r.engine, 0, Ropts());
    ASSERT_TRUE(rd.ok()) << rd.status().ToString();
    EXPECT_EQ(rd->pages_verified, s.image_pages());
    EXPECT_EQ(rd->crc32, crc);
    EXPECT_EQ(rd->units, w->units);
    read_requests = r.engine->submitted() - before_read;
    ASSERT_GT(read_requests, 4u);
  }
  {  // the write fails in the middle: error out, no slot left, no image
    Rig r = MakeRig(8192);
    const uint64_t before = Inuse(r);
    r.engine->fail_request = requests / 2;
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    auto w = WriteImage(session, *r.engine, s, Wopts());
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), -EIO);
    EXPECT_EQ(Inuse(r), before);
    EXPECT_TRUE(r.sys->CheckInvariants().ok());
    EXPECT_FALSE(ReadImage(*r.engine, 0, Ropts()).ok());
  }
  {  // the read fails in the middle: an error, not a half-checked success
    Rig r = MakeRig(8192);
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    ASSERT_TRUE(WriteImage(session, *r.engine, s, Wopts()).ok());
    const uint64_t written = r.engine->submitted();
    r.engine->fail_request = written + read_requests / 2;
    auto rd = ReadImage(*r.engine, 0, Ropts());
    ASSERT_FALSE(rd.ok());
    EXPECT_EQ(rd.status().code(), -EIO) << rd.status().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(Compressors, CompressedThreads,
                         ::testing::Values(Case{Compressor::kLzo, 2}, Case{Compressor::kLzo, 3},
                                           Case{Compressor::kLz4, 2}, Case{Compressor::kLz4, 3}),
                         [](const auto& info) {
                           return std::string(Name(info.param.c)) + "_t" +
                                  std::to_string(info.param.threads);
                         });

// Seed 001: other users keep allocating while the image is
// written (the RFC names DAMON pageout and memcg high work). A
// free-clusters-sorted session takes whole free clusters while another CPU
// keeps swapping order-0 folios out and in; those are served from nonfull /
// frag clusters (the free list is claimed), the image is still one run and
// reads back whole, and no slot is lost or shared (CheckInvariants, inuse).
TEST(ImageSessionConcurrency, AnotherCpuAllocatesDuringTheWrite) {
  alloc::SystemOptions so;
  so.nr_cpus = 2;
  Rig r = MakeRig(8192, 0, {}, so);  // 16 clusters
  constexpr alloc::CpuId kOther = 1;
  // Aging on the other CPU: 3 clusters of order-0 folios, every other one
  // dropped, so nonfull clusters exist for it during the write.
  std::vector<std::unique_ptr<alloc::Folio>> aged;
  for (int i = 0; i < 1536; ++i) {
    aged.push_back(std::make_unique<alloc::Folio>());
    alloc::FolioLockGuard g(*aged.back());
    ASSERT_TRUE(r.sys->FolioAllocSwap(kOther, *aged.back()).ok());
  }
  for (size_t i = 0; i < aged.size(); i += 2) {
    alloc::FolioLockGuard g(*aged[i]);
    ASSERT_TRUE(r.sys->SwapCacheDelFolio(*aged[i]).ok());
  }
  const uint64_t inuse_aged = Inuse(r);

  // The other CPU: a ring of 256 folios swapped out and dropped again.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> placed{0};
  std::vector<alloc::Folio> ring(256);
  std::thread other([&] {
    for (size_t i = 0; !stop.load(std::memory_order_relaxed); i = (i + 1) % ring.size()) {
      alloc::FolioLockGuard g(ring[i]);
      if (ring[i].in_swap_cache())
        (void)r.sys->SwapCacheDelFolio(ring[i]);  // refused while suspended
      if (!ring[i].in_swap_cache() && r.sys->FolioAllocSwap(kOther, ring[i]).ok())
        placed.fetch_add(1, std::memory_order_relaxed);
    }
  });
  SnapshotOptions o;
  o.saveable_pages = 2600;
  o.seed = 5;
  const auto snap = *SyntheticSnapshot::Make(o);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.batch.mode = BatchMode::kPerRun;
  auto w = WriteImage(session, *r.engine, snap, wo);
  stop.store(true);
  other.join();
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->device_runs, 1u) << "the image left its claimed clusters";
  EXPECT_GT(placed.load(), 0u) << "the other CPU never allocated";
  EXPECT_TRUE(r.sys->CheckInvariants().ok()) << r.sys->CheckInvariants().ToString();
  auto rd = ReadImage(*r.engine, 0, ReaderOptions{});
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->pages_verified, snap.image_pages());
  // Every slot accounted for: free_all_swap_pages (§5.3) gives back the
  // image and its run's unused tail, the ring drops its folios, and the
  // aged folios are what is left.
  ASSERT_TRUE(session.FreeAll().ok());
  for (alloc::Folio& f : ring) {
    alloc::FolioLockGuard g(f);
    if (f.in_swap_cache()) {
      ASSERT_TRUE(r.sys->SwapCacheDelFolio(f).ok());
    }
  }
  EXPECT_EQ(Inuse(r), inuse_aged);
  EXPECT_TRUE(r.sys->CheckInvariants().ok()) << r.sys->CheckInvariants().ToString();
}

}  // namespace
}  // namespace swaplab::hibernate
