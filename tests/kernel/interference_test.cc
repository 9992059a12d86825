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

// Four clusters filled by CPU 0, then every fourth page of 600..1400 freed:
// no free cluster is left, so CPU 1's first page comes from the scan at
// its random base.
std::vector<TraceRecord> FullThenHoles(ModelReplay& m) {
  std::vector<TraceRecord> w{R("swapon dev=0 pages=2048 ssd=1 blkdev=1")};
  for (uint64_t f = 0; f < 2047; ++f) {
    w.push_back(Alloc(f, 0));
    EXPECT_TRUE(m.FeedTo(w, w.size()).ok());
    w.push_back(Expect(f, m.runner().SlotOf(f, 0).offset));
  }
  for (uint64_t f = 600; f < 1400; f += 4) w.push_back(R("free folio=" + std::to_string(f)));
  EXPECT_TRUE(m.FeedTo(w, w.size()).ok());
  return w;
}

// Where CPU 1's next page goes from `base` (nullopt: the model's own draw).
uint64_t PlacedFrom(const std::vector<TraceRecord>& prefix, std::optional<uint64_t> base) {
  ModelReplay m(Linux61NoCache(), 2);
  std::vector<TraceRecord> w = prefix;
  if (base) w.push_back(R("scan-base dev=0 cpu=1 offset=" + std::to_string(*base)));
  w.push_back(Alloc(5000, 1));
  EXPECT_TRUE(m.FeedTo(w, w.size()).ok());
  return m.runner().SlotOf(5000, 0).offset;
}

TEST(ScanBaseObserved, TheKernelsBaseIsReadOffItsPlacement) {
  ModelReplay build(Linux61NoCache(), 2);
  const std::vector<TraceRecord> prefix = FullThenHoles(build);
  const uint64_t own = PlacedFrom(prefix, std::nullopt);
  // A "kernel" that drew another base: the first hole after it.
  uint64_t kernel_slot = 0;
  for (uint64_t base : {700u, 1000u, 1300u}) {
    kernel_slot = PlacedFrom(prefix, base);
    if (kernel_slot != own) break;
  }
  ASSERT_NE(kernel_slot, own) << "every base tried lands where the model's own draw does";

  ForeignWatch watch(Linux61NoCache(), 2, 2);
  std::vector<TraceRecord> w = prefix;
  const size_t record_start = w.size();
  w.push_back(Alloc(5000, 1));
  w.push_back(Expect(5000, kernel_slot));
  ASSERT_TRUE(watch.model().FeedTo(w, w.size()).ok());
  const uint64_t wrong = watch.model().Mismatches();
  EXPECT_EQ(wrong, 1u) << "the model's own base already agrees: nothing to observe";

  auto sb = watch.ExplainScanBase(w, record_start, 0, 1, kernel_slot);
  ASSERT_TRUE(sb.ok()) << sb.status().ToString();
  EXPECT_EQ(sb->op, TraceOp::kScanBase);
  EXPECT_EQ(sb->cpu, 1);
  EXPECT_TRUE(sb->offset == kernel_slot - 1 || sb->offset == kernel_slot) << sb->offset;
  // The watch's model now has the base: no mismatch, and it is in step with
  // the written trace once the record is inserted.
  EXPECT_EQ(watch.model().Mismatches(), 0u);
  w.insert(w.begin() + static_cast<std::ptrdiff_t>(record_start), *sb);
  EXPECT_EQ(watch.model().fed(), w.size());
  // A replay of the written trace with it agrees.
  ModelReplay again(Linux61NoCache(), 2);
  ASSERT_TRUE(again.FeedTo(w, w.size()).ok());
  EXPECT_EQ(again.Mismatches(), 0u);
}

TEST(ScanBaseObserved, NothingToReadUnderAPolicyWithoutScanBases) {
  alloc::Policy p = *alloc::Policy::Preset("linux-6.12");
  ForeignWatch watch(p, 2, 2);
  std::vector<TraceRecord> w{R("swapon dev=0 pages=2048 ssd=1 blkdev=1"), Alloc(0, 0),
                             Expect(0, 700)};
  auto sb = watch.ExplainScanBase(w, 1, 0, 0, 700);
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().code(), -ESRCH);
}

// A placement no base can give (a slot in use) is not explained.
TEST(ScanBaseObserved, APlacementNoBaseGivesIsLeftAlone) {
  ModelReplay build(Linux61NoCache(), 2);
  std::vector<TraceRecord> w = FullThenHoles(build);
  const uint64_t used = build.runner().SlotOf(601, 0).offset;  // still held
  ForeignWatch watch(Linux61NoCache(), 2, 2);
  const size_t record_start = w.size();
  w.push_back(Alloc(5000, 1));
  w.push_back(Expect(5000, used));
  ASSERT_TRUE(watch.model().FeedTo(w, w.size()).ok());
  auto sb = watch.ExplainScanBase(w, record_start, 0, 1, used);
  EXPECT_FALSE(sb.ok());
  EXPECT_EQ(watch.model().Mismatches(), 1u) << "the watch's model was replaced anyway";
}

}  // namespace
}  // namespace swaplab::kernel
