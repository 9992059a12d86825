// The compressed image path's threads under TSan (label `concurrency`,
// built by CI's tsan step): compressor workers plus the CRC thread on write
// (§7.2, §7.5), decompressor threads on read (§7.6), with 2 and 3 threads,
// every compressor; a write that fails in the middle must stop every thread
// and give back every slot (§4.6), a read that fails in the middle must stop
// them too. Small images on the in-memory engine: fast under sanitizers.
#include <gtest/gtest.h>

#include <string>

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
                           return std::string(Name(info.param.c)) + "_t" + std::to_string(info.param.threads);
                         });

}  // namespace
}  // namespace swaplab::hibernate
