// SPDX-License-Identifier: MIT
// §1.4, §4.8, §8: round trip, signature restore, torn and corrupted images.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "hibernate/hib_test_util.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::MakeRig;
using testing::Rig;

SyntheticSnapshot Snap(uint64_t saveable, uint64_t seed = 11) {
  SnapshotOptions o;
  o.saveable_pages = saveable;
  o.zero_share = 0.2;
  o.compressible_share = 0.4;
  o.seed = seed;
  return *SyntheticSnapshot::Make(o);
}

WriteReport WriteOk(Rig& r, SlotSourceKind k, const SyntheticSnapshot& s, BatchOptions b = {}) {
  ImageSession session(*r.sys, r.type, k);
  WriterOptions o;
  o.batch = b;
  auto rep = WriteImage(session, *r.engine, s, o);
  EXPECT_TRUE(rep.ok()) << rep.status().ToString();
  return rep.ok() ? *rep : WriteReport{};
}

ReaderOptions Opts(Rig& r, BatchOptions b = {}) {
  ReaderOptions o;
  o.batch = b;
  o.device_pages = r.pages;
  o.consume = true;  // as resume: these tests check the signature restore
  return o;
}

TEST(RoundTrip, ByteIdenticalForEverySourceAndMode) {
  for (auto k : {SlotSourceKind::kBase, SlotSourceKind::kFreeClusters,
                 SlotSourceKind::kFreeClustersSorted, SlotSourceKind::kPmd}) {
    for (auto m : {BatchMode::kPerPage, BatchMode::kPerRun}) {
      Rig r = MakeRig(16384);
      for (int i = 0; i < 900; ++i) (void)r.sys->AllocHibernationSlot(i % 4, r.type);  // scatter
      const auto s = Snap(3000);
      WriteOk(r, k, s, {m, CapacityMode::kExact, 0});
      // the reader rebuilds the snapshot from swsusp_info and checks every page
      auto rd = ReadImage(*r.engine, 0, Opts(r, {m, CapacityMode::kSlab, 0}));
      ASSERT_TRUE(rd.ok()) << Name(k) << " " << Name(m) << ": " << rd.status().ToString();
      EXPECT_EQ(rd->T, s.image_pages());
      EXPECT_EQ(rd->N, s.nr_copy_pages());
      EXPECT_EQ(rd->M, s.nr_meta_pages());
      EXPECT_EQ(rd->pages_verified, s.image_pages());
      EXPECT_EQ(rd->map_pages, s.image_pages() / kMapEntries + 1);
      EXPECT_EQ(rd->flags, kSfNocompressMode);
      // resume restored the swap signature first (§1.4 step 3)
      EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig));
    }
  }
}

TEST(RoundTrip, WithExplicitSnapshotAndSmallWindow) {
  Rig r = MakeRig(16384);
  const auto s = Snap(2000, 5);
  WriteOk(r, SlotSourceKind::kFreeClustersSorted, s);
  ReaderOptions o = Opts(r);
  o.expect = &s;
  o.window_pages = 100;
  auto rd = ReadImage(*r.engine, 0, o);
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->pages_verified, s.image_pages());
}

TEST(RoundTrip, ReadBiosPerRun) {
  // §8 with patch 8: M metadata bios, a 1-page probe, then bios of up to C
  // along each 511-page stretch, cut at every map slot.
  Rig r = MakeRig(16384);
  SnapshotOptions so;
  so.saveable_pages = 1200;
  so.zero_share = 0;
  const auto s = *SyntheticSnapshot::Make(so);  // T = 1204, M = 3
  WriteOk(r, SlotSourceKind::kFreeClustersSorted, s);
  auto rd = ReadImage(*r.engine, 0, Opts(r, {BatchMode::kPerRun, CapacityMode::kExact, 254}));
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  // stream 4..510 (507 pages: probe 1 + 254 + 252), 511..1021 (254+254+3), 1022..1203 (182)
  std::map<uint32_t, uint64_t> want{{1, 4}, {252, 1}, {254, 3}, {3, 1}, {182, 1}};
  EXPECT_EQ(rd->batch.bio_sizes, want);
  EXPECT_EQ(rd->batch.sync_ios, 2u + 3u + 1u);  // header read+write, 3 map pages, swsusp_info
}

TEST(Reader, SecondReadFindsNoImage) {
  Rig r = MakeRig(16384);
  WriteOk(r, SlotSourceKind::kFreeClustersSorted, Snap(500));
  ASSERT_TRUE(ReadImage(*r.engine, 0, Opts(r)).ok());
  auto again = ReadImage(*r.engine, 0, Opts(r));
  EXPECT_EQ(again.status().code(), -EINVAL);
}

TEST(Reader, TornImageWithoutSignatureIsNeverAccepted) {
  // The write stopped before mark_swapfiles: every data page is there, the
  // signature is not.
  Rig r = MakeRig(16384);
  const auto s = Snap(1500);
  {
    // a write whose last data bio failed: all pages but one are on disk,
    // the signature never was
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    WriterOptions wo;
    wo.batch.mode = BatchMode::kPerPage;
    r.engine->fail_request = s.image_pages() - 2;
    EXPECT_FALSE(WriteImage(session, *r.engine, s, wo).ok());
    r.engine->fail_request = UINT64_MAX;
    EXPECT_EQ(ReadImage(*r.engine, 0, Opts(r)).status().code(), -EINVAL);
  }
  const WriteReport w = WriteOk(r, SlotSourceKind::kFreeClustersSorted, s);
  auto& p0 = r.engine->data_[0];
  for (const auto& sig : {kSwapSpace2Sig, kSwapSpaceV0Sig, std::array<char, 10>{}}) {
    std::memcpy(p0.data() + kHdrSig, sig.data(), 10);
    const auto copy = r.engine->data_;
    const size_t writes_before = r.engine->log_.size();
    auto rd = ReadImage(*r.engine, 0, Opts(r));
    EXPECT_EQ(rd.status().code(), -EINVAL);
    // nothing is written when there is no image
    for (size_t i = writes_before; i < r.engine->log_.size(); ++i)
      EXPECT_FALSE(r.engine->log_[i].write);
    EXPECT_EQ(r.engine->data_, copy);
  }
  // "S1SUSPEND" without its NUL byte is not the signature either
  std::memcpy(p0.data() + kHdrSig, "S1SUSPENDX", 10);
  EXPECT_EQ(ReadImage(*r.engine, 0, Opts(r)).status().code(), -EINVAL);
  (void)w;
}

TEST(Reader, OneFlippedByteInAnyImagePageIsDetected) {
  Rig r = MakeRig(8192);
  const auto s = Snap(700, 23);  // T ≈ 563: two map pages
  ASSERT_GE(s.image_pages(), kMapEntries);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.record_placement = true;
  auto w = WriteImage(session, *r.engine, s, wo);
  ASSERT_TRUE(w.ok());
  const auto pristine = r.engine->data_;
  std::vector<uint64_t> blocks = w->stream_dblocks;
  blocks.insert(blocks.end(), w->map_dblocks.begin(), w->map_dblocks.end());
  uint64_t x = 12345;
  for (uint64_t b : blocks) {
    for (int trial = 0; trial < 2; ++trial) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const size_t at = trial == 0 ? (b % 2 ? 0 : kPageSize - 1) : (x >> 33) % kPageSize;
      const int bit = static_cast<int>((x >> 20) & 7);
      r.engine->data_[b][at] ^= std::byte(1u << bit);
      ReaderOptions o = Opts(r);
      o.expect = &s;  // a flip in swaplab's tag would otherwise make it a foreign image
      auto rd = ReadImage(*r.engine, 0, o);
      EXPECT_FALSE(rd.ok()) << "dblock " << b << " byte " << at << " bit " << bit;
      r.engine->data_[b] = pristine.at(b);  // the reader rewrote page 0 only
      r.engine->data_[0] = pristine.at(0);
    }
  }
  // header overlay: the image pointer and orig_sig
  r.engine->data_ = pristine;
  r.engine->data_[0][kHdrImage] ^= std::byte{1};
  EXPECT_FALSE(ReadImage(*r.engine, 0, Opts(r)).ok());
  r.engine->data_ = pristine;
  r.engine->data_[0][kHdrOrigSig + 3] ^= std::byte{4};
  EXPECT_FALSE(ReadImage(*r.engine, 0, Opts(r)).ok());
  // and the pristine copy still reads
  r.engine->data_ = pristine;
  EXPECT_TRUE(ReadImage(*r.engine, 0, Opts(r)).ok());
}

TEST(Reader, HardwareSignatureMismatchIsRefused) {
  Rig r = MakeRig(8192);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.hw_sig = 77;
  ASSERT_TRUE(WriteImage(session, *r.engine, Snap(300), wo).ok());
  ReaderOptions o = Opts(r);
  o.hw_sig = 78;
  EXPECT_EQ(ReadImage(*r.engine, 0, o).status().code(), -EINVAL);
  // the signature was restored anyway: the image is dropped for good
  EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig));
}

TEST(Reader, IoErrorIsReported) {
  Rig r = MakeRig(8192);
  WriteOk(r, SlotSourceKind::kFreeClustersSorted, Snap(1000));
  r.engine->fail_request = r.engine->submitted() + 8;  // some read after the chain
  auto rd = ReadImage(*r.engine, 0, Opts(r));
  EXPECT_EQ(rd.status().code(), -EIO);
}

// The frame ring (ReaderOptions::frame_pages): data pages land in a ring
// much smaller than a window, a frame read into again once its page is read
// and checked. An image of ~2400 data pages, windows of 700 (not a multiple
// of the ring) and a ring of 600 frames: every frame is used four times.
struct RingImage {
  Rig r = MakeRig(16384);
  SyntheticSnapshot s = Snap(3000, 31);
  WriteReport w;
  uint64_t first = 0;  // the first data page (after the metadata pages)
  RingImage() {
    for (int i = 0; i < 900; ++i) (void)r.sys->AllocHibernationSlot(i % 4, r.type);  // scatter
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClusters);
    WriterOptions wo;
    wo.record_placement = true;
    auto rep = WriteImage(session, *r.engine, s, wo);
    EXPECT_TRUE(rep.ok()) << rep.status().ToString();
    if (rep.ok()) w = *rep;
    first = s.nr_meta_pages() + 1;
  }
  ReaderOptions Opts(BatchOptions b = {}) {
    ReaderOptions o;
    o.batch = b;
    o.device_pages = r.pages;
    o.expect = &s;
    o.window_pages = 700;
    o.frame_pages = 600;
    return o;
  }
  // The index, among the requests a read with `o` submits, of the read
  // carrying stream page p: fail_request for a read error there.
  uint64_t FailAt(const ReaderOptions& o, uint64_t p) {
    const size_t from = r.engine->log_.size();
    EXPECT_TRUE(ReadImage(*r.engine, 0, o).ok());
    const uint64_t d = w.stream_dblocks.at(p);
    for (size_t i = from; i < r.engine->log_.size(); ++i) {
      const auto& q = r.engine->log_[i];
      if (!q.write && d >= q.page && d < q.page + q.pages) return r.engine->submitted() + i - from;
    }
    ADD_FAILURE() << "no read of stream page " << p;
    return UINT64_MAX;
  }
  void Flip(uint64_t p) { r.engine->data_.at(w.stream_dblocks.at(p))[100] ^= std::byte{8}; }
  std::string Where(uint64_t p) const {
    return "stream page " + std::to_string(p) + " (dblock " + std::to_string(w.stream_dblocks[p]) +
           ")";
  }
};

TEST(ReaderRing, ARingShortOfABioAndThePlugIsRefusedBeforeAnyRead) {
  RingImage im;
  const uint64_t sig = im.r.engine->submitted();
  ReaderOptions o = im.Opts();
  o.consume = true;
  RequestBatcher probe(*im.r.engine, o.batch);
  o.frame_pages = probe.max_unsubmitted();  // 511 by default
  EXPECT_EQ(ReadImage(*im.r.engine, 0, o).status().code(), -EINVAL);
  o.frame_pages = 3;  // smaller than one bio
  EXPECT_EQ(ReadImage(*im.r.engine, 0, o).status().code(), -EINVAL);
  EXPECT_EQ(im.r.engine->submitted(), sig);  // nothing read, the image still there
  o.frame_pages = probe.max_unsubmitted() + 1;
  auto rd = ReadImage(*im.r.engine, 0, o);
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->pages_verified, im.s.image_pages());
}

TEST(ReaderRing, AnImageLargerThanTheRingReadsWithTheSameBiosAndWaits) {
  RingImage im;
  ASSERT_GT(im.s.image_pages() - im.first, 3 * 700u);  // a last window of another size
  for (auto m : {BatchMode::kPerPage, BatchMode::kPerRun}) {
    for (bool pipelined : {false, true}) {
      ReaderOptions o = im.Opts({m, CapacityMode::kSlab, 0});
      o.pipelined = pipelined;
      o.frame_pages = 1 << 20;  // a frame per page: none used twice
      auto whole = ReadImage(*im.r.engine, 0, o);
      ASSERT_TRUE(whole.ok()) << whole.status().ToString();
      for (uint64_t ring : {600u, 512u, 1500u}) {
        o.frame_pages = ring;
        auto rd = ReadImage(*im.r.engine, 0, o);
        ASSERT_TRUE(rd.ok()) << Name(m) << " ring " << ring << ": " << rd.status().ToString();
        EXPECT_EQ(rd->pages_verified, im.s.image_pages());
        EXPECT_EQ(rd->batch.bios, whole->batch.bios);
        EXPECT_EQ(rd->batch.bio_sizes, whole->batch.bio_sizes);
        EXPECT_EQ(rd->batch.pages, whole->batch.pages);
        EXPECT_EQ(rd->batch.drains, whole->batch.drains);
        EXPECT_EQ(rd->batch.partial_waits, whole->batch.partial_waits);
        EXPECT_EQ(rd->batch.sync_ios, whole->batch.sync_ios);
      }
    }
  }
}

TEST(ReaderRing, ACorruptPageInAReusedFrameIsNamed) {
  RingImage im;
  // window 0's page 650, window 2's 1650 and the last window's 2350 sit in
  // frames used before
  for (uint64_t at : {650u, 1650u, 2350u}) {
    const uint64_t p = im.first + at;
    ASSERT_LT(p, im.s.image_pages());
    im.Flip(p);
    auto rd = ReadImage(*im.r.engine, 0, im.Opts());
    EXPECT_EQ(rd.status().code(), -ENODATA);
    EXPECT_NE(rd.status().message().find(im.Where(p) + " differs"), std::string::npos)
        << rd.status().message();
    im.Flip(p);
  }
  EXPECT_TRUE(ReadImage(*im.r.engine, 0, im.Opts()).ok());
}

// As when each window was checked while the next was read: a window's read
// error comes before its pages' check errors, an earlier window's check
// error before a later window's read error.
TEST(ReaderRing, AReadErrorAndACheckErrorComeInWindowOrder) {
  RingImage im;
  struct Case {
    uint64_t bad_page, failed_read;  // data page indexes
    int code;
  };
  for (const Case& c : {Case{650, 1000, -ENODATA}, Case{100, 300, -EIO}, Case{1000, 1300, -EIO},
                        Case{1300, 1000, -EIO}, Case{100, 1500, -ENODATA}}) {
    const ReaderOptions o = im.Opts();
    im.r.engine->fail_request = im.FailAt(o, im.first + c.failed_read);
    im.Flip(im.first + c.bad_page);
    auto rd = ReadImage(*im.r.engine, 0, o);
    im.Flip(im.first + c.bad_page);
    im.r.engine->fail_request = UINT64_MAX;
    EXPECT_EQ(rd.status().code(), c.code) << "corrupt " << c.bad_page << ", read error "
                                          << c.failed_read << ": " << rd.status().ToString();
    if (c.code == -ENODATA) {
      EXPECT_NE(rd.status().message().find(im.Where(im.first + c.bad_page)), std::string::npos)
          << rd.status().message();
    }
  }
}

// A ReaderScratch kept from read to read (threads, ring, unit buffers, the
// snapshot's noise table) gives the reports of reads that make their own,
// whatever the compressor, the ring size (remade when it changes) and the
// seed (a table is shared only with a snapshot of the same seed).
TEST(ReaderScratch, ReadsSharingOneReportWhatReadsWithoutOneReport) {
  ReaderScratch scratch(2);
  for (Compressor c : {Compressor::kNone, Compressor::kLzo, Compressor::kLz4}) {
    for (uint64_t seed : {3, 3, 4}) {
      for (uint64_t ring : {kCmpPages, 4 * kCmpPages}) {
        Rig r = MakeRig(8192);
        const auto s = Snap(1500, seed);
        ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
        WriterOptions wo;
        wo.compress = c;
        ASSERT_TRUE(WriteImage(session, *r.engine, s, wo).ok());
        ReaderOptions o;
        o.device_pages = r.pages;
        o.read_ring_pages = ring;
        o.window_pages = 64;
        o.threads = 2;
        auto alone = ReadImage(*r.engine, 0, o);
        o.scratch = &scratch;
        auto shared = ReadImage(*r.engine, 0, o);
        ASSERT_TRUE(alone.ok()) << alone.status().ToString();
        ASSERT_TRUE(shared.ok()) << Name(c) << " seed " << seed << ": "
                                 << shared.status().ToString();
        EXPECT_EQ(shared->pages_verified, s.image_pages());
        EXPECT_EQ(shared->pages_verified, alone->pages_verified);
        EXPECT_EQ(shared->units, alone->units);
        EXPECT_EQ(shared->crc32, alone->crc32);
        EXPECT_EQ(shared->ring_pages, alone->ring_pages);
        EXPECT_EQ(shared->batch.bios, alone->batch.bios);
      }
    }
  }
}

TEST(Snapshot, ANoiseTableIsSharedOnlyWithTheSameSeed) {
  auto a = Snap(400, 7), b = Snap(400, 7), c = Snap(400, 8);
  AlignedPage want, got;
  b.ShareNoise(a.noise());
  EXPECT_EQ(b.noise(), a.noise());
  const auto before = c.noise();
  c.ShareNoise(a.noise());  // another seed: its own table stays
  EXPECT_EQ(c.noise(), before);
  const auto fresh = Snap(400, 8);
  for (uint64_t p = 0; p < c.image_pages(); ++p) {
    fresh.StreamPage(p, want.data());
    c.StreamPage(p, got.data());
    ASSERT_EQ(std::memcmp(want.data(), got.data(), kPageSize), 0) << "page " << p;
  }
}

TEST(Snapshot, CountsAndMetadataLayout) {
  SnapshotOptions o;
  o.saveable_pages = 1024;
  o.zero_share = 0.25;
  auto s = *SyntheticSnapshot::Make(o);
  EXPECT_EQ(s.nr_meta_pages(), 2u);
  EXPECT_EQ(s.nr_copy_pages() + s.nr_zero_pages(), 1024u);
  EXPECT_GT(s.nr_zero_pages(), 150u);
  AlignedPage p;
  s.StreamPage(0, p.data());
  EXPECT_EQ(LoadU64(p.data() + kInfoPages), s.image_pages());
  EXPECT_EQ(LoadU64(p.data() + kInfoImagePages), s.nr_copy_pages());
  EXPECT_EQ(LoadU64(p.data() + kInfoSize), s.image_pages() * kPageSize);
  // list ends exactly at a page boundary: no terminator
  s.StreamPage(2, p.data());
  EXPECT_NE(LoadU64(p.data() + 8 * 511), ~uint64_t{0});
  o.saveable_pages = 1000;
  auto t = *SyntheticSnapshot::Make(o);
  t.StreamPage(2, p.data());
  EXPECT_EQ(LoadU64(p.data() + 8 * (1000 - 512)), ~uint64_t{0});
  uint64_t prev = 0;
  for (uint64_t i = 0; i < 1000 - 512; ++i) {
    const uint64_t pfn = LoadU64(p.data() + 8 * i) & ~(uint64_t{1} << 63);
    EXPECT_GT(pfn, prev);
    prev = pfn;
  }
  EXPECT_FALSE(SyntheticSnapshot::Make({0, 0, 0, 1, 1}).ok());
  EXPECT_FALSE(SyntheticSnapshot::Make({10, 0.7, 0.7, 1, 1}).ok());
}

}  // namespace
}  // namespace swaplab::hibernate

namespace swaplab::hibernate {
namespace {

TEST(Unmark, RestoresSignatureAndSlotsGoBack) {
  Rig r = MakeRig(8192);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  ASSERT_TRUE(WriteImage(session, *r.engine, Snap(800), {}).ok());
  EXPECT_TRUE(HasSignature(r.engine->data_[0], kSuspendSig));
  ASSERT_TRUE(UnmarkImage(*r.engine, 0).ok());
  EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig));
  EXPECT_TRUE(session.FreeAll().ok());
  EXPECT_EQ(testing::Inuse(r), 0u);
  EXPECT_TRUE(r.sys->CheckInvariants().ok());
  EXPECT_EQ(UnmarkImage(*r.engine, 0).code(), -ENODEV);
  EXPECT_EQ(ReadImage(*r.engine, 0, {}).status().code(), -EINVAL);
}

}  // namespace
}  // namespace swaplab::hibernate

namespace swaplab::hibernate {
namespace {

TEST(SwapFile, ExtentsMapSlotsToBlocksAndTheImageReadsBack) {
  Rig r;
  r.sys = std::make_unique<alloc::SwapSystem>();
  alloc::SwaponOptions so;
  so.name = "swapfile";
  so.pages = 8192;
  so.blkdev = false;
  so.bdev = 1;
  so.first_block = 10000;
  so.extents = {{0, 1024, 10000}, {1024, 7168, 2000}};
  auto t = r.sys->Swapon(so);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  r.type = *t;
  r.pages = 20000;
  r.engine = std::make_unique<testing::MemEngine>(20000);
  testing::FormatArea(*r.engine, 8192);
  r.engine->data_[10000] = r.engine->data_[0];  // page 0 of the file is block 10000
  r.engine->data_.erase(0);
  const auto s = Snap(1000);  // U > 512: crosses from slot 1023 to 1024
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.record_placement = true;
  auto w = WriteImage(session, *r.engine, s, wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->resume_block, 10000u);
  EXPECT_EQ(w->image, 10512u);
  EXPECT_EQ(w->device_runs, 2u);  // the extent boundary splits the run
  EXPECT_TRUE(HasSignature(r.engine->data_[10000], kSuspendSig));
  auto rd = ReadImage(*r.engine, 10000, Opts(r));
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  EXPECT_EQ(rd->pages_verified, s.image_pages());
  EXPECT_TRUE(HasSignature(r.engine->data_[10000], kSwapSpace2Sig));
}

// A snapshot built in memory before the write (the kernel's case, §3.2)
// gives the same stream pages and writes the same image, byte for byte, as
// one generated while writing.
TEST(Snapshot, MaterializedWritesTheSameImage) {
  const auto gen = Snap(1300, 5);
  auto mat = Snap(1300, 5);
  EXPECT_FALSE(mat.materialized());
  EXPECT_EQ(mat.PageInMemory(1), nullptr);
  ASSERT_TRUE(mat.Materialize().ok());
  ASSERT_TRUE(mat.materialized());
  AlignedPage a, b;
  for (uint64_t p = 0; p < gen.image_pages(); ++p) {
    gen.StreamPage(p, a.data());
    mat.StreamPage(p, b.data());
    ASSERT_EQ(std::memcmp(a.data(), b.data(), kPageSize), 0) << "stream page " << p;
    ASSERT_EQ(std::memcmp(a.data(), mat.PageInMemory(p), kPageSize), 0) << "stream page " << p;
  }
  for (BatchMode m : {BatchMode::kPerPage, BatchMode::kPerRun}) {
    Rig r1 = MakeRig(4096), r2 = MakeRig(4096);
    BatchOptions bo;
    bo.mode = m;
    WriteOk(r1, SlotSourceKind::kFreeClustersSorted, gen, bo);
    WriteOk(r2, SlotSourceKind::kFreeClustersSorted, mat, bo);
    ASSERT_EQ(r1.engine->data_.size(), r2.engine->data_.size());
    for (const auto& [pg, bytes] : r1.engine->data_) {
      auto it = r2.engine->data_.find(pg);
      ASSERT_NE(it, r2.engine->data_.end()) << "page " << pg;
      EXPECT_EQ(bytes, it->second) << "page " << pg;
    }
    auto rd = ReadImage(*r2.engine, 0, Opts(r2, bo));
    ASSERT_TRUE(rd.ok()) << rd.status().ToString();
    EXPECT_EQ(rd->pages_verified, gen.image_pages());
  }
}

}  // namespace
}  // namespace swaplab::hibernate
