// SPDX-License-Identifier: MIT
// The trace's `cpus` record (docs/formats.md §5): the CPUs online where a
// trace was recorded (`kernel run` writes it first). A replay that is not
// given a CPU count takes the model's from it, so a written trace replays as
// the run compared it: the slot cache's thresholds of 6.12 and 6.1 scale
// with the CPUs (check_cache_active()).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "swaplab/workload/replay.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"
#include "workload/trace_text.h"

namespace swaplab::workload {
namespace {

using trace_text::First;

// A trace file that removes itself.
class TempTrace {
 public:
  explicit TempTrace(const std::string& body) {
    char p[] = "/tmp/swaplab-cpus-test-XXXXXX";
    const int fd = mkstemp(p);
    EXPECT_GE(fd, 0);
    path_ = p;
    const std::string text = "swaplab-trace 1\n" + body;
    EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
  }
  ~TempTrace() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TraceCpus, ParsesAndWritesBack) {
  auto r = First("cpus n=2  # kernel run's machine\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->op, TraceOp::kCpus);
  ASSERT_TRUE(r->n.has_value());
  EXPECT_EQ(*r->n, 2u);
  EXPECT_EQ(FormatRecord(*r), "cpus n=2");
}

TEST(TraceCpus, BadRecordsNameTheLine) {
  for (const char* bad :
       {"cpus\n", "cpus n=0\n", "cpus n=2 cpu=1\n", "cpus n=x\n", "cpus n=-2\n"}) {
    auto r = First(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), -EINVAL) << bad;
    EXPECT_EQ(r.status().message().rfind("t.trace:2: ", 0), 0u) << r.status().message();
  }
}

// The runner takes it only first, and only within the model's CPU limit.
TEST(TraceCpus, OnlyFirstAndWithinTheLimit) {
  auto apply_all = [](const std::string& body) {
    alloc::SwapSystem sys;
    TraceRunner runner(sys);
    return trace_text::ApplyText(runner, body);
  };
  EXPECT_TRUE(apply_all("cpus n=2\nswapon dev=0 pages=64\nalloc folio=0 order=0 cpu=1\n").ok());
  Status late = apply_all("swapon dev=0 pages=64\ncpus n=2\n");
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.message().find("t.trace:3:"), std::string::npos) << late.ToString();
  EXPECT_NE(late.message().find("before every other record"), std::string::npos);
  Status big = apply_all("cpus n=5000\n");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("1..1024"), std::string::npos) << big.ToString();
}

// 1024 slots under linux-6.12: with 2 CPUs the slot cache is active (more
// than 5 × 64 × 2 = 640 free) and the first swap-out takes a batch of 64;
// with 4 CPUs it is not (1023 < 1280) and takes one slot.
TEST(TraceCpus, ReplayTakesTheModelsCpusFromTheRecord) {
  const std::string body = "swapon dev=0 pages=1024\nalloc folio=0 order=0 cpu=0\n";
  TempTrace with(std::string("cpus n=2\n") + body), without(body);
  auto inuse = [](const std::string& path, int cpus) -> uint64_t {
    ReplayOptions o;
    o.trace = path;
    o.policy = *alloc::Policy::Preset("linux-6.12");
    o.cpus = cpus;
    auto r = Replay(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->devices.empty()) return 0;
    return r->devices[0].info.inuse;
  };
  EXPECT_EQ(inuse(with.path(), 0), 64u);    // the record's 2 CPUs
  EXPECT_EQ(inuse(with.path(), 4), 1u);     // the caller's count wins
  EXPECT_EQ(inuse(without.path(), 0), 1u);  // no record: 4 CPUs
  EXPECT_EQ(inuse(without.path(), 2), 64u);
  ReplayOptions o;
  o.trace = with.path();
  o.policy = *alloc::Policy::Preset("linux-6.12");
  auto r = Replay(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->options.cpus, 2);
}

// The replay loop (ReplayTrace) tells its observer after each record, on
// the model that record left, and stops where the observer says: the
// records after it are not read.
TEST(ReplayLoop, ObserverSeesEachRecordAndCanStop) {
  TempTrace t("cpus n=2\nswapon dev=0 pages=1024\nalloc folio=0 order=0 cpu=0\nbogus\n");
  struct Watch final : ReplayObserver {
    bool AfterRecord(const TraceRecord& rec, const ReplayState& state) override {
      lines.push_back(rec.line);
      inuse.push_back(state.sys->Device(0).ok() ? state.sys->Device(0)->inuse : 0);
      return state.records < 3;
    }
    std::vector<uint64_t> lines, inuse;
  } watch;
  ReplayOptions o;
  o.trace = t.path();
  o.policy = *alloc::Policy::Preset("linux-6.12");
  ReplayState state;
  ASSERT_TRUE(ReplayTrace(o, &state, &watch).ok());
  EXPECT_EQ(state.records, 3u);
  EXPECT_EQ(state.sys->options().nr_cpus, 2);  // the trace's cpus record
  EXPECT_EQ(watch.lines, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(watch.inuse, (std::vector<uint64_t>{0, 0, 64}));
}

// Without an observer the replay goes to the end; an error names the line
// and the count says how many records were applied before it.
TEST(ReplayLoop, ErrorCountsTheRecordsAppliedBefore) {
  TempTrace t("swapon dev=0 pages=1024\nalloc folio=0 order=0 cpu=0\nbogus\n");
  ReplayOptions o;
  o.trace = t.path();
  o.policy = *alloc::Policy::Preset("linux-6.12");
  ReplayState state;
  Status st = ReplayTrace(o, &state);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(":4: "), std::string::npos) << st.ToString();
  EXPECT_EQ(state.records, 2u);
}

}  // namespace
}  // namespace swaplab::workload
