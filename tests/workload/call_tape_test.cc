// SPDX-License-Identifier: MIT
// The call tape: what a TraceRunner asks of the allocator, made again on a
// fresh system (include/swaplab/workload/call_tape.h).
#include "swaplab/workload/call_tape.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"
#include "workload/trace_text.h"

namespace swaplab::workload {
namespace {

using alloc::SwapEntry;
using alloc::SwapSystem;
using alloc::SystemOptions;

SystemOptions Small(std::string_view preset = alloc::kDefaultPreset) {
  SystemOptions so;
  so.policy = alloc::Policy::Preset(preset).value();
  so.nr_cpus = 4;
  so.cluster_shift = 4;  // 16-slot clusters: a small device fills and reclaims
  return so;
}

// A random trace over two small devices with every record kind a runner
// turns into allocator calls: allocs of orders 0-3 until the devices are
// full, frees of page ranges, swap-ins, dups, drops of one folio and of
// all, foreign slots and their release, a scan base, storage suspended
// and resumed, a swapoff with a swapon after it, and scan bases where the
// policy has them (scan_base: 6.1's). Made while `runner`
// applies it (a record names only folios the runner still has); returns
// the trace's text.
std::string RandomTrace(uint64_t seed, int records, TraceRunner& runner, bool scan_base) {
  std::mt19937_64 rnd(seed);
  auto below = [&](uint64_t n) { return rnd() % n; };
  // Orders 0-3 where the policy swaps out mTHPs; order 0 only where it
  // does not (6.1).
  const int max_order = scan_base ? 0 : 3;
  std::string t;
  auto apply = [&](const std::string& line) {
    t += line + "\n";
    auto rec = trace_text::First(line + "\n");
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    const Status st = runner.Apply(*rec, "t.trace");
    ASSERT_TRUE(st.ok()) << line << ": " << st.ToString();
  };
  apply("swapon dev=0 pages=400 ssd=1");
  apply("swapon dev=1 pages=200 prio=3");
  std::vector<std::pair<uint64_t, int>> live;  // folio id, order
  uint64_t next = 0, foreign_at = 1;
  std::vector<uint64_t> foreign;
  for (int i = 0; i < records; ++i) {
    std::erase_if(live, [&](const auto& l) { return !runner.Live(l.first); });
    const uint64_t r = below(100);
    if (r < 45 || live.empty()) {
      const int order = static_cast<int>(below(4) == 0 ? below(max_order + 1) : 0);
      apply("alloc folio=" + std::to_string(next) + " order=" + std::to_string(order) +
            " cpu=" + std::to_string(below(4)));
      live.emplace_back(next++, order);
      continue;
    }
    const auto [id, order] = live[below(live.size())];
    const std::string f = " folio=" + std::to_string(id);
    const std::string all = " page=0 n=" + std::to_string(1u << order);
    if (r < 70) {
      apply("free" + f + " page=" + std::to_string(below(1u << order)) + " n=1");
    } else if (r < 80) {
      apply("cache" + f + all);
    } else if (r < 84) {
      apply("dup" + f);
    } else if (r < 89) {
      apply("drop-cache" + f);
    } else if (r < 91) {
      apply("drop-cache");
    } else if (r < 93 && foreign_at < 90) {
      const size_t held = runner.foreign_slots();
      apply("foreign dev=0 offset=" + std::to_string(300 + foreign_at) + " cpu=1");
      if (runner.foreign_slots() > held) foreign.push_back(300 + foreign_at);
      ++foreign_at;
    } else if (r < 95 && !foreign.empty()) {
      apply("foreign-free dev=0 offset=" + std::to_string(foreign.back()));
      foreign.pop_back();
    } else if (r < 96 && runner.Live(id) && scan_base) {
      apply("scan-base dev=0 cpu=2 offset=" + std::to_string(1 + below(390)));
    } else if (r < 98) {
      apply("suspend-storage");
      apply("drop-cache");
      apply("resume-storage");
    } else {
      apply("free" + f + all);
    }
  }
  apply("swapoff dev=1");
  apply("swapon dev=1 pages=100");
  apply("alloc folio=" + std::to_string(next) + " order=0 cpu=0");
  return t;
}

// Every slot of every device: its kind and count.
std::string SlotDump(const SwapSystem& sys) {
  std::string out = sys.ProcSwaps();
  for (int type : sys.active_devices()) {
    auto d = sys.Device(type);
    if (!d.ok()) continue;
    for (uint64_t off = 0; off < d->max; ++off) {
      auto s = sys.Slot(SwapEntry{type, off});
      out +=
          s.ok() ? std::to_string(static_cast<int>(s->kind)) + ":" + std::to_string(s->count) : "?";
      out += off % 64 == 63 ? '\n' : ' ';
    }
  }
  return out;
}

struct Recorded {
  CallTape tape;
  std::string trace;  // its text
  std::string slots;  // the recording system's SlotDump at the end
};

Recorded Record(uint64_t seed, int records, const SystemOptions& so = Small()) {
  Recorded rec;
  SwapSystem sys(so);
  TraceRunner runner(sys);
  runner.set_tape(&rec.tape);
  rec.trace = RandomTrace(seed, records, runner, so.policy.ssd_swap_map_scan);
  rec.slots = SlotDump(sys);
  return rec;
}

TEST(CallTape, ReplayedOnAFreshSystemItAnswersAsRecordedAndLeavesTheSameSlots) {
  for (const std::string_view preset :
       {alloc::kDefaultPreset, std::string_view("linux-6.12"), std::string_view("linux-6.1")}) {
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      SCOPED_TRACE(std::string(preset) + " seed " + std::to_string(seed));
      const Recorded rec = Record(seed, 1500, Small(preset));
      ASSERT_GT(rec.tape.calls().size(), 1500u);
      SwapSystem again(Small(preset));
      CallReplay replay(rec.tape, again);
      const Status st = replay.Run();
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(SlotDump(again), rec.slots);
      EXPECT_TRUE(again.CheckInvariants().ok());
      // Unchecked (the benchmark's timed loop), the same calls leave the same slots.
      SwapSystem unchecked(Small(preset));
      CallReplay fast(rec.tape, unchecked);
      ASSERT_TRUE(fast.Run(/*check=*/false).ok());
      EXPECT_EQ(SlotDump(unchecked), rec.slots);
    }
  }
}

TEST(CallTape, EveryKindOfCallIsOnTheTape) {
  const Recorded rec = Record(7, 3000, Small("linux-6.1"));
  std::vector<int> seen(static_cast<int>(CallOp::kFolioState) + 1);
  for (const TapeCall& c : rec.tape.calls()) ++seen[static_cast<int>(c.op)];
  for (size_t op = 0; op < seen.size(); ++op) EXPECT_GT(seen[op], 0) << "op " << op;
}

TEST(CallTape, RecordingDoesNotChangeWhatTheRunnerDoes) {
  const Recorded rec = Record(3, 2000);
  SwapSystem without(Small());
  TraceRunner b(without);
  const Status st = trace_text::ApplyText(b, rec.trace);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(SlotDump(without), rec.slots);
}

// A tape made again on a system that answers differently (another
// cluster size) stops at the first call whose answer differs, and says
// which call and both answers.
TEST(CallTape, ADifferentAnswerIsReportedWithTheCall) {
  const Recorded rec = Record(5, 500);
  SystemOptions other = Small();
  other.cluster_shift = 5;
  SwapSystem again(other);
  CallReplay replay(rec.tape, again);
  const Status st = replay.Run();
  ASSERT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("call "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("where the recording run answered"), std::string::npos)
      << st.message();
}

TEST(CallTape, AFolioOrSwaponNotOnTheTapeIsAnErrorNotACrash) {
  CallTape folio;
  folio.Add({.op = CallOp::kSwapOut, .folio = 3});
  SwapSystem sys(Small());
  Status st = CallReplay(folio, sys).Run();
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("folio 3 is not on the tape"), std::string::npos) << st.message();

  CallTape swapon;
  swapon.Add({.op = CallOp::kSwapon, .n = 2});
  st = CallReplay(swapon, sys).Run();
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("swapon 2 is not on the tape"), std::string::npos) << st.message();

  CallTape split;
  alloc::Folio f;
  (void)split.Number(f);
  split.Add({.op = CallOp::kSwapOut, .folio = 0, .n = 0, .split = 4});
  st = CallReplay(split, sys).Run();
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_NE(st.message().find("split pages outside the tape"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace swaplab::workload
