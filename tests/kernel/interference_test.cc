// SPDX-License-Identifier: MIT
// kernel run's lockstep model (src/kernel/interference.h) on written
// traces built here: no root, no swap. The kernel's random scan base of
// 6.1 read off a placement (ForeignWatch::ExplainScanBase).
#include "kernel/interference.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "workload/trace_text.h"

namespace swaplab::kernel {
namespace {

using workload::TraceOp;
using workload::TraceRecord;

alloc::Policy Linux61NoCache() {
  alloc::Policy p = *alloc::Policy::Preset("linux-6.1");
  p.slot_cache = false;  // one slot per alloc, straight from the scan
  p.slot_cache_return = false;
  return p;
}

// One record from its text (the trace format's own parser).
TraceRecord R(const std::string& line) {
  auto r = workload::trace_text::First(line + "\n");
  EXPECT_TRUE(r.ok()) << line << ": " << r.status().ToString();
  return r.ok() ? *r : TraceRecord{};
}

TraceRecord Alloc(uint64_t folio, int cpu) {
  return R("alloc folio=" + std::to_string(folio) + " order=0 cpu=" + std::to_string(cpu));
}

TraceRecord Expect(uint64_t folio, uint64_t offset) {
  return R("expect folio=" + std::to_string(folio) + " dev=0 offset=" + std::to_string(offset));
}

// Four clusters filled by CPU 0, then two of every three slots of
// 1000..1999 freed: no free cluster is left, so CPU 1's first page comes
// from the scan at its random base; 667 free slots turn 6.1's slot cache on
// again (above 5 × 64 × 2), so that page comes with a batch whose size
// depends on how far the scan walked to it.
std::vector<TraceRecord> FullThenHoles(const alloc::Policy& p) {
  ModelReplay m(p, 2);
  std::vector<TraceRecord> w{R("swapon dev=0 pages=2048 ssd=1 blkdev=1")};
  for (uint64_t f = 0; f < 2047; ++f) {
    w.push_back(Alloc(f, 0));
    EXPECT_TRUE(m.FeedTo(w, w.size()).ok());
    if (m.runner().SlotOf(f, 0).valid()) w.push_back(Expect(f, m.runner().SlotOf(f, 0).offset));
  }
  // By slot (the free list is interleaved: folio numbers do not follow the
  // slots): two of every three slots of 1000..1999.
  std::vector<TraceRecord> frees;
  for (const auto& r : w)
    if (r.op == TraceOp::kExpect && r.offset >= 1000 && r.offset < 2000 && r.offset % 3 != 0)
      frees.push_back(R("free folio=" + std::to_string(*r.folio)));
  w.insert(w.end(), frees.begin(), frees.end());
  return w;
}

// A "kernel" that drew `base` for CPU 1 (the model with a scan-base
// record): CPU 1's next `n` pages, as the written trace's alloc and expect
// records, and its slots in use after the first of them.
struct KernelRun {
  std::vector<TraceRecord> records;  // alloc, expect, alloc, expect, ...
  uint64_t used_after_first = 0;
};
KernelRun Cpu1From(const alloc::Policy& p, const std::vector<TraceRecord>& prefix,
                   std::optional<uint64_t> base, int n) {
  ModelReplay m(p, 2);
  std::vector<TraceRecord> w = prefix;
  if (base) w.push_back(R("scan-base dev=0 cpu=1 offset=" + std::to_string(*base)));
  KernelRun k;
  for (int i = 0; i < n; ++i) {
    const uint64_t f = 5000 + static_cast<uint64_t>(i);
    w.push_back(Alloc(f, 1));
    EXPECT_TRUE(m.FeedTo(w, w.size()).ok());
    w.push_back(Expect(f, m.runner().SlotOf(f, 0).offset));
    k.records.push_back(w[w.size() - 2]);
    k.records.push_back(w.back());
    if (i == 0) k.used_after_first = m.InUse(0);
  }
  return k;
}

// kernel run's watch meeting CPU 1's first page as `kernel` placed it
// (after `prefix`): the written trace so far and the base it reads off.
struct Observed {
  std::vector<TraceRecord> written;
  size_t record_start = 0;
  Result<TraceRecord> base = Status(-ESRCH, "not tried");
};
Observed Observe(ForeignWatch& watch, const std::vector<TraceRecord>& prefix,
                 const KernelRun& kernel) {
  Observed o;
  o.written = prefix;
  o.record_start = o.written.size();
  o.written.push_back(kernel.records[0]);
  o.written.push_back(kernel.records[1]);
  EXPECT_TRUE(watch.model().FeedTo(o.written, o.written.size()).ok());
  EXPECT_EQ(watch.model().Mismatches(), 1u) << "the model's own base already agrees";
  o.base = watch.ExplainScanBase(o.written, o.record_start, 0, 1, kernel.records[1].offset,
                                 [&](uint64_t) { return kernel.used_after_first; });
  return o;
}

// The kernel drew `base`; kernel run's watch (the model's own draw) reads it
// off CPU 1's first page and the count after it; with the record written,
// every later page of CPU 1 agrees too.
void ReadOff(uint64_t base) {
  const alloc::Policy p = *alloc::Policy::Preset("linux-6.1");
  const std::vector<TraceRecord> prefix = FullThenHoles(p);
  const KernelRun kernel = Cpu1From(p, prefix, base, 80);
  const KernelRun own = Cpu1From(p, prefix, std::nullopt, 1);
  ASSERT_NE(kernel.records[1].offset, own.records[1].offset)
      << "the model's own draw lands where base " << base << " does";

  ForeignWatch watch(p, 2);
  Observed o = Observe(watch, prefix, kernel);
  std::vector<TraceRecord>& w = o.written;
  const size_t record_start = o.record_start;
  const auto& sb = o.base;
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  EXPECT_EQ(sb->op, TraceOp::kScanBase);
  EXPECT_EQ(sb->cpu, 1);
  EXPECT_EQ(watch.model().Mismatches(), 0u);
  EXPECT_EQ(watch.model().InUse(0), kernel.used_after_first);
  w.insert(w.begin() + static_cast<std::ptrdiff_t>(record_start), *sb);
  EXPECT_EQ(watch.model().fed(), w.size());
  // The rest of CPU 1's pages, replayed with the observed base.
  w.insert(w.end(), kernel.records.begin() + 2, kernel.records.end());
  ModelReplay again(p, 2);
  ASSERT_TRUE(again.FeedTo(w, w.size()).ok());
  EXPECT_EQ(again.Mismatches(), 0u) << "base " << base << " read as " << sb->offset;
}

// A base among the holes: the scan walks a step or two to the next one.
TEST(ScanBaseObserved, ABaseAmongTheHolesIsReadOffThePage) { ReadOff(1500); }

// A base far below the holes: the scan walks more than LATENCY_LIMIT steps,
// and then stops after one slot, so the slot cache's batch is one slot —
// the count after the record tells it from a base next to the page.
TEST(ScanBaseObserved, ABaseFarBelowIsToldByTheBatchItGave) { ReadOff(300); }

// A base 200 steps below: the latency count left when the scan reaches the
// page cuts the batch short, which none of the four candidates gives. The
// first page's base is still written (the page agrees; the batch may not).
TEST(ScanBaseObserved, ABaseNoCandidateMatchesStillPlacesThePage) {
  const alloc::Policy p = *alloc::Policy::Preset("linux-6.1");
  const std::vector<TraceRecord> prefix = FullThenHoles(p);
  const KernelRun kernel = Cpu1From(p, prefix, 800, 1);
  ForeignWatch watch(p, 2);
  const Observed o = Observe(watch, prefix, kernel);
  const auto& sb = o.base;
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  EXPECT_EQ(sb->offset, kernel.records[1].offset - 1);
  EXPECT_EQ(watch.model().Mismatches(), 0u);
  EXPECT_NE(watch.model().InUse(0), kernel.used_after_first)
      << "a candidate gave the kernel's batch: the case this test is for is gone";
}

TEST(ScanBaseObserved, NothingToReadUnderAPolicyWithoutScanBases) {
  alloc::Policy p = *alloc::Policy::Preset("linux-6.12");
  ForeignWatch watch(p, 2);
  std::vector<TraceRecord> w{R("swapon dev=0 pages=2048 ssd=1 blkdev=1"), Alloc(0, 0),
                             Expect(0, 700)};
  auto sb = watch.ExplainScanBase(w, 1, 0, 0, 700, [](uint64_t) { return uint64_t{1}; });
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().code(), -ESRCH);
}

// A placement no base can give (a slot in use) is not explained.
TEST(ScanBaseObserved, APlacementNoBaseGivesIsLeftAlone) {
  const alloc::Policy p = Linux61NoCache();
  std::vector<TraceRecord> w = FullThenHoles(p);
  const uint64_t held = 1200;  // a multiple of 3: not freed
  ForeignWatch watch(p, 2);
  const size_t record_start = w.size();
  w.push_back(Alloc(5000, 1));
  w.push_back(Expect(5000, held));
  ASSERT_TRUE(watch.model().FeedTo(w, w.size()).ok());
  auto sb = watch.ExplainScanBase(w, record_start, 0, 1, held,
                                  [&](uint64_t d) { return watch.model().InUse(d); });
  EXPECT_FALSE(sb.ok());
  EXPECT_EQ(watch.model().Mismatches(), 1u) << "the watch's model was replaced anyway";
}

}  // namespace
}  // namespace swaplab::kernel
