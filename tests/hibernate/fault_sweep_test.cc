// SPDX-License-Identifier: MIT
// Faults and crashes at every request of a small image write and read
//: each single request failing with EIO, ENOSPC or a short
// completion leaves no slot allocated, inuse as before, the area a plain
// swap area and the invariants clean; a read never writes (read-only) and
// never accepts a page it did not get; a crash after any number of requests
// leaves either a plain swap area or a complete image that reads back —
// never a half image that is accepted (§4.3: the header goes out before the
// last map page, so that window is swept too).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "hibernate/hib_test_util.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/hibernate/image_writer.h"

namespace swaplab::hibernate {
namespace {

using testing::Inuse;
using testing::MakeRig;
using testing::MemEngine;
using testing::Rig;

SyntheticSnapshot Snap(uint64_t saveable) {
  SnapshotOptions o;
  o.saveable_pages = saveable;
  o.zero_share = 0.1;
  o.compressible_share = 0.5;
  o.seed = 9;
  return *SyntheticSnapshot::Make(o);
}

struct Fault {
  const char* name;
  int error;
  bool short_completion;
};
constexpr Fault kFaults[] = {{"EIO", -EIO, false}, {"ENOSPC", -ENOSPC, false}, {"short", 0, true}};

// The rig's MemEngine behind the fault-injecting wrapper; the rig keeps
// owning it.
class Borrowed : public area::IoEngine {
 public:
  explicit Borrowed(area::IoEngine& e) : e_(e) {}
  std::string name() const override { return e_.name(); }
  bool modelled() const override { return e_.modelled(); }
  Status Submit(std::span<area::IoRequest> b) override { return e_.Submit(b); }
  Status Wait(std::vector<area::IoCompletion>* d) override { return e_.Wait(d); }
  Status Discard(uint64_t p, uint64_t n) override { return e_.Discard(p, n); }
  area::IoStats stats() const override { return e_.stats(); }
  const area::DeviceLimits& limits() const override { return e_.limits(); }

 private:
  area::IoEngine& e_;
};

std::unique_ptr<area::IoEngine> Faulty(MemEngine& m, uint64_t i, const Fault& f) {
  return area::MakeFaultInjectingEngine(std::make_unique<Borrowed>(m),
                                        {i, f.error, f.short_completion});
}

void ExpectClean(Rig& r, uint64_t inuse_before, const std::string& where) {
  EXPECT_EQ(Inuse(r), inuse_before) << where;
  const auto inv = r.sys->CheckInvariants();
  EXPECT_TRUE(inv.ok()) << where << ": " << inv.ToString();
  EXPECT_TRUE(HasSignature(r.engine->data_[0], kSwapSpace2Sig)) << where;
}

// The requests a clean write of `s` issues on a fresh rig.
uint64_t WriteRequests(const SyntheticSnapshot& s, Compressor c) {
  Rig r = MakeRig(8192);
  ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
  WriterOptions wo;
  wo.compress = c;
  return WriteImage(session, *r.engine, s, wo).ok() ? r.engine->submitted() : 0;
}

TEST(FaultSweep, EveryWriteRequestFailingLeavesNoSlot) {
  for (Compressor c : {Compressor::kNone, Compressor::kLzo}) {
    const auto s = Snap(1200);  // two map pages
    const uint64_t total = WriteRequests(s, c);
    ASSERT_GT(total, 4u);
    for (const Fault& f : kFaults) {
      for (uint64_t i = 0; i < total; ++i) {
        const std::string where = std::string(Name(c)) + " " + f.name + " at request " +
                                  std::to_string(i) + " of " + std::to_string(total);
        Rig r = MakeRig(8192);
        const uint64_t before = Inuse(r);
        auto engine = Faulty(*r.engine, i, f);
        ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
        WriterOptions wo;
        wo.compress = c;
        auto rep = WriteImage(session, *engine, s, wo);
        if (i + 1 == total) {  // the last map page: its error is ignored (§12 U9)
          EXPECT_TRUE(rep.ok()) << where << ": " << rep.status().ToString();
          continue;
        }
        ASSERT_FALSE(rep.ok()) << where;
        ExpectClean(r, before, where);
        if (HasFailure()) return;
      }
    }
  }
}

TEST(FaultSweep, EveryReadRequestFailingIsReportedAndWritesNothing) {
  for (Compressor c : {Compressor::kNone, Compressor::kLzo, Compressor::kLz4}) {
    Rig r = MakeRig(8192);
    const auto s = Snap(1200);
    ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
    WriterOptions wo;
    wo.compress = c;
    ASSERT_TRUE(WriteImage(session, *r.engine, s, wo).ok());
    const auto image = r.engine->data_;
    ReaderOptions ro;
    ro.device_pages = r.pages;
    ro.threads = 1;
    // The kernel's reads: every request matters, none is skipped. Pipelined
    // (`image read` by default): a failed guess of the map chain's
    // lookahead may be harmless (the page asked for is read again alone),
    // so a read may succeed, but only with everything a clean read reports.
    for (bool pipelined : {false, true}) {
      ro.pipelined = pipelined;
      const uint64_t start = r.engine->submitted();
      auto clean = ReadImage(*r.engine, 0, ro);
      ASSERT_TRUE(clean.ok()) << clean.status().ToString();
      const uint64_t total = r.engine->submitted() - start;
      uint64_t failed = 0, tried = 0;
      for (const Fault& f : kFaults) {
        for (uint64_t i = 0; i < total; ++i, ++tried) {
          const std::string where = std::string(Name(c)) + (pipelined ? " pipelined " : " ") +
                                    f.name + " at read request " + std::to_string(i);
          const size_t logged = r.engine->log_.size();
          auto engine = Faulty(*r.engine, i, f);
          auto rd = ReadImage(*engine, 0, ro);
          if (!rd.ok()) {
            ++failed;
          } else {
            ASSERT_TRUE(pipelined) << where << ": read succeeded";
            EXPECT_EQ(rd->T, clean->T) << where;
            EXPECT_EQ(rd->units, clean->units) << where;
            EXPECT_EQ(rd->crc32, clean->crc32) << where;
            EXPECT_EQ(rd->pfns, clean->pfns) << where;
          }
          for (size_t k = logged; k < r.engine->log_.size(); ++k)
            ASSERT_FALSE(r.engine->log_[k].write) << where;
          ASSERT_EQ(r.engine->data_, image) << where;
        }
      }
      EXPECT_GT(failed, pipelined ? 0u : tried - 1);
    }
    ro.pipelined = false;
    // with --consume the signature write is one more request that can
    // fail; one that never reached the disk leaves the image in place
    ro.consume = true;
    r.engine->fail_request = r.engine->submitted() + 1;
    EXPECT_EQ(ReadImage(*r.engine, 0, ro).status().code(), -EIO);
    EXPECT_TRUE(HasSignature(r.engine->data_[0], kSuspendSig));
    r.engine->fail_request = UINT64_MAX;
  }
}

TEST(CrashSweep, AfterEveryRequestThereIsNoImageOrAWholeOne) {
  for (Compressor c : {Compressor::kNone, Compressor::kLzo}) {
    const auto s = Snap(1200);
    const uint64_t total = WriteRequests(s, c);
    ASSERT_GT(total, 4u);
    uint64_t whole = 0, none = 0;
    for (uint64_t n = 0; n <= total; ++n) {
      Rig r = MakeRig(8192);
      // an older image's pages where the new one goes: a torn chain then
      // meets stale map pages, not zeros
      for (uint64_t d = 1; d < 3000; ++d) r.engine->data_[d].fill(std::byte(d & 0xff));
      r.engine->crash_after = n;
      ImageSession session(*r.sys, r.type, SlotSourceKind::kFreeClustersSorted);
      WriterOptions wo;
      wo.compress = c;
      (void)WriteImage(session, *r.engine, s, wo);
      r.engine->crash_after = UINT64_MAX;
      ReaderOptions ro;
      ro.device_pages = r.pages;
      ro.expect = &s;
      auto rd = ReadImage(*r.engine, 0, ro);
      const std::string where = std::string(Name(c)) + ": crash after " + std::to_string(n) +
                                " of " + std::to_string(total);
      if (rd.ok()) {
        ++whole;
        EXPECT_EQ(rd->pages_verified, s.image_pages()) << where;  // every page there
      } else {
        ++none;
        // no image accepted: page 0 still says SWAPSPACE2, or the chain /
        // stream is refused
        if (!HasSignature(r.engine->data_[0], kSwapSpace2Sig)) {
          EXPECT_TRUE(HasSignature(r.engine->data_[0], kSuspendSig)) << where;
        }
      }
    }
    // The header is the second-to-last request: only the crash after the
    // last map page (and after everything) leaves a whole image.
    EXPECT_EQ(whole, 1u) << Name(c);
    EXPECT_EQ(none, total) << Name(c);
  }
}

}  // namespace
}  // namespace swaplab::hibernate
