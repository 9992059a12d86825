// SPDX-License-Identifier: MIT
// §10 policies: presets as bundles of knobs, and the behaviour each knob
// switches (free-first search, old default priorities, slot cache).
#include <gtest/gtest.h>

#include <algorithm>

#include "alloc/test_util.h"
#include "swaplab/alloc/preset_knobs.h"

namespace swaplab::alloc::test {
namespace {

Policy MustPreset(const char* name) {
  Result<Policy> p = Policy::Preset(name);
  EXPECT_TRUE(p.ok()) << name << ": " << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

using S = SearchStep;

TEST(Policy_10, PresetNames) {
  const std::vector<std::string> names = Policy::PresetNames();
  for (const char* n : {"linux-6.12", "linux-6.14", "linux-6.15", "linux-6.18", "mm-new"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    const Policy p = MustPreset(n);
    EXPECT_TRUE(p.Validate().ok()) << n;
    EXPECT_FALSE(p.Describe().empty());
  }
  Result<Policy> bad = Policy::Preset("linux-0.01");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.status().message().empty());
}

// The presets table: every row builds, names a base that is a row, says
// what it stands for and where it was read; a preset's knobs differ from
// its base's only in the knobs its row sets; PresetNames is the table's.
TEST(Policy_10, EachPresetIsOneRowOfItsBasePlusItsKnobs) {
  std::vector<std::string> rows;
  for (const PresetInfo& row : Policy::Presets()) {
    SCOPED_TRACE(std::string(row.name));
    rows.emplace_back(row.name);
    EXPECT_FALSE(row.kernels.empty());
    EXPECT_FALSE(row.source.empty());
    EXPECT_FALSE(row.summary.empty());
    const Policy p = MustPreset(std::string(row.name).c_str());
    EXPECT_EQ(p.name, row.name);
    Policy base;
    if (!row.base.empty()) base = MustPreset(std::string(row.base).c_str());
    std::vector<std::string> set;  // the knob names the row sets
    for (std::string_view a : PresetKnobAssignments(row))
      set.emplace_back(a.substr(0, a.find('=')));
    const auto got = p.KnobValues(), from = base.KnobValues();
    ASSERT_EQ(got.size(), from.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const bool listed = std::find(set.begin(), set.end(), got[i].first) != set.end();
      if (!listed) {
        EXPECT_EQ(got[i].second, from[i].second) << got[i].first << " changed unlisted";
      }
    }
  }
  EXPECT_EQ(rows, Policy::PresetNames());
}

// A row's knob string splits at spaces into its assignments, in order;
// runs of spaces and spaces at either end give no empty assignment.
TEST(Policy_10, PresetKnobAssignmentsSplitTheRowsKnobs) {
  const PresetInfo row{"p", "", "  count_max=63  search=free,nonfull slot_cache=1 ", "", "", ""};
  const std::vector<std::string_view> want = {"count_max=63", "search=free,nonfull",
                                              "slot_cache=1"};
  EXPECT_EQ(PresetKnobAssignments(row), want);
  EXPECT_TRUE(PresetKnobAssignments(PresetInfo{"q", "", "", "", "", ""}).empty());
}

// The knob table: every knob is listed once, set by name, read back by
// name with the same text, described; a wrong name or value changes
// nothing and names itself.
TEST(Policy_10, KnobsByName) {
  const auto& knobs = Policy::Knobs();
  ASSERT_FALSE(knobs.empty());
  EXPECT_EQ(knobs.front().name, "search");
  std::vector<std::string> names;
  for (const auto& k : knobs) {
    EXPECT_FALSE(k.doc.empty()) << k.name;
    names.emplace_back(k.name);
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
      << "a knob listed twice";
  // The knobs the issue found unreachable from scenarios are in the table.
  for (const char* n :
       {"split_tails_last_first", "default_prio_round_robin", "count_max", "slot_cache_batch"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;

  Policy p = MustPreset("linux-6.18");
  const auto before = p.KnobValues();
  ASSERT_EQ(before.size(), knobs.size());
  for (size_t i = 0; i < knobs.size(); ++i) EXPECT_EQ(before[i].first, knobs[i].name);
  // Each knob set to another value shows it; set back, the policy is as before.
  for (const auto& k : knobs) {
    std::string other;
    if (k.type == "bool")
      other = p.KnobValues()[&k - &knobs[0]].second == "true" ? "false" : "true";
    if (k.type == "int") other = std::to_string(k.min);
    if (k.type == "steps") other = "free,nonfull";
    const std::string was = p.KnobValues()[&k - &knobs[0]].second;
    ASSERT_TRUE(p.Set(k.name, other).ok()) << k.name;
    EXPECT_EQ(p.KnobValues()[&k - &knobs[0]].second, other) << k.name;
    ASSERT_TRUE(p.SetAssignment(std::string(k.name) + "=" + was).ok()) << k.name;
  }
  EXPECT_EQ(p.KnobValues(), before);
  ASSERT_TRUE(p.Set("count_max", "63").ok());
  EXPECT_EQ(p.count_max, 63);
  ASSERT_TRUE(p.Set("split_tails_last_first", "off").ok());
  EXPECT_FALSE(p.split_tails_last_first);
  ASSERT_TRUE(p.Set("search", "nonfull,free,steal-higher").ok());
  EXPECT_EQ(p.search, (std::vector<S>{S::kNonfull, S::kFree, S::kStealHigher}));
  EXPECT_NE(p.Describe().find("count_max=63"), std::string::npos) << p.Describe();
  EXPECT_NE(p.Describe().find("search=nonfull,free,steal-higher"), std::string::npos)
      << p.Describe();

  const auto after = p.KnobValues();
  struct Bad {
    const char* knob;
    const char* value;
    const char* says;
  };
  for (const Bad& b :
       {Bad{"count_max", "256", "2..255"}, Bad{"count_max", "1", "2..255"},
        Bad{"count_max", "15x", "integer"}, Bad{"slot_cache", "yes", "true or false"},
        Bad{"search", "free,,nonfull", "unknown search step"}, Bad{"search", "", "unknown"},
        Bad{"no_such_knob", "1", "unknown knob 'no_such_knob'"}}) {
    const Status st = p.Set(b.knob, b.value);
    ASSERT_FALSE(st.ok()) << b.knob << "=" << b.value;
    EXPECT_EQ(st.code(), -EINVAL);
    EXPECT_NE(st.message().find(b.says), std::string::npos) << st.message();
    EXPECT_EQ(p.KnobValues(), after) << "a refused value changed the policy";
  }
  EXPECT_FALSE(p.SetAssignment("count_max").ok());
  EXPECT_FALSE(p.SetAssignment("=3").ok());
  // Terminal escapes in a bad name are not echoed.
  const Status esc = p.Set("\x1b[31mred", "1");
  EXPECT_EQ(esc.message().find('\x1b'), std::string::npos);
}

// §10.2: before "prefer nonfull" (≈v6.18) the free list came first for
// every device, frag clusters rotated (kFragAll), and discard devices
// restarted the search after a synchronous discard.
TEST(Policy_10_2, OldSearchOrder) {
  const std::vector<S> old = {S::kFree,    S::kReclaimFull,        S::kNonfull,
                              S::kFragAll, S::kSyncDiscardRestart, S::kStealHigher};
  EXPECT_EQ(MustPreset("linux-6.12").search, old);
  EXPECT_EQ(MustPreset("linux-6.14").search, old);
  EXPECT_EQ(MustPreset("linux-6.15").search, old);
  EXPECT_FALSE(MustPreset("linux-6.15").sync_discard_retry);
}

// §2.4: the current search order (v6.18 and the mm tree).
TEST(Policy_2_4, CurrentSearchOrder) {
  const std::vector<S> now = {S::kFreeIfDiscard, S::kNonfull, S::kFreeIfNotDiscard,
                              S::kReclaimFull,   S::kFragOne, S::kStealHigher};
  EXPECT_EQ(MustPreset("linux-6.18").search, now);
  EXPECT_EQ(MustPreset("mm-new").search, now);
  EXPECT_TRUE(MustPreset("linux-6.18").sync_discard_retry);
  EXPECT_TRUE(MustPreset("mm-new").sync_discard_retry);
}

// §10.1 / §10.3: slot cache and per-device hints until v6.14; one global
// hint from v6.15; round-robin default priority and the hibernation fast
// path only in the newest tree.
TEST(Policy_10_3, KnobsPerRelease) {
  const Policy p614 = MustPreset("linux-6.14"), p615 = MustPreset("linux-6.15");
  const Policy mm = MustPreset("mm-new");
  EXPECT_TRUE(p614.slot_cache);
  EXPECT_TRUE(p614.percpu_hint_per_device);
  EXPECT_FALSE(p615.slot_cache);
  EXPECT_FALSE(p615.percpu_hint_per_device);
  EXPECT_FALSE(mm.slot_cache);
  EXPECT_FALSE(mm.percpu_hint_per_device);
  EXPECT_TRUE(p614.nonssd_global_cluster);
  EXPECT_FALSE(p614.default_prio_round_robin);
  EXPECT_FALSE(p615.default_prio_round_robin);
  EXPECT_TRUE(mm.default_prio_round_robin);
  EXPECT_FALSE(p615.hibernation_percpu_hint);
  EXPECT_TRUE(mm.hibernation_percpu_hint);
  EXPECT_EQ(mm.count_max, 15);
}

// linux-6.12 is linux-6.14 plus the five knobs 6.12 still had; no later
// preset has any of them.
TEST(Policy_10_3, Linux612IsLinux614PlusItsKnobs) {
  Policy p = MustPreset("linux-6.12");
  EXPECT_TRUE(p.interleave_free_clusters);
  EXPECT_FALSE(p.isolate_clusters);
  EXPECT_TRUE(p.slot_cache_return);
  EXPECT_TRUE(p.swap_pages_taken_ahead);
  EXPECT_TRUE(p.rotational_swap_map_scan);
  for (const char* k :
       {"interleave_free_clusters=false", "isolate_clusters=true", "slot_cache_return=false",
        "swap_pages_taken_ahead=false", "rotational_swap_map_scan=false"})
    ASSERT_TRUE(p.SetAssignment(k).ok()) << k;
  p.name = "linux-6.14";
  EXPECT_EQ(p.KnobValues(), MustPreset("linux-6.14").KnobValues());
  for (const char* n : {"linux-6.14", "linux-6.15", "linux-6.18", "mm-new"}) {
    const Policy q = MustPreset(n);
    EXPECT_FALSE(q.interleave_free_clusters || !q.isolate_clusters || q.slot_cache_return ||
                 q.swap_pages_taken_ahead || q.rotational_swap_map_scan)
        << n;
  }
  // The return buffer belongs to the slot cache; 6.12's in-place search to
  // per-device hints.
  Policy bad = MustPreset("linux-6.12");
  bad.slot_cache = false;
  EXPECT_FALSE(bad.Validate().ok());
  bad = MustPreset("linux-6.18");
  bad.isolate_clusters = false;
  EXPECT_FALSE(bad.Validate().ok());
}

// §10.2 behaviour: on a fresh non-discard device the old order takes a free
// cluster (offset CLUSTER) where the current one takes cluster 0 (offset 1).
TEST(Policy_10_2, FirstOrder0SlotOldVsNew) {
  for (const char* n : {"linux-6.15", "linux-6.18"}) {
    Harness h(Options(kDefaultClusterShift, 1, MustPreset(n)));
    h.On(Dev("a", 2048));
    EXPECT_EQ(h.Off(0), std::string(n) == "linux-6.15" ? 512u : 1u) << n;
  }
}

// §10.3: without round robin, devices without priority get −2, −3, … and
// swapoff renumbers the lower ones.
TEST(Policy_10_3, OldDefaultPriorities) {
  Policy p = PrimaryPolicy();
  p.default_prio_round_robin = false;
  Harness h(Options(4, 1, p));
  const int a = h.On(Dev("a", 32)), b = h.On(Dev("b", 32)), c = h.On(Dev("c", 32));
  EXPECT_EQ(h.Dv(a).prio, -2);
  EXPECT_EQ(h.Dv(b).prio, -3);
  EXPECT_EQ(h.Dv(c).prio, -4);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{a, b, c}));
  EXPECT_EQ(h.Ent(0).type, a);
  EXPECT_EQ(h.sys.avail_devices(), (std::vector<int>{a, b, c}));  // nothing to rotate
  ASSERT_TRUE(h.SwapOff(b).ok());
  EXPECT_EQ(h.Dv(c).prio, -3);
  EXPECT_EQ(h.Dv(a).prio, -2);
  const int d = h.On(Dev("d", 32));
  EXPECT_EQ(h.Dv(d).prio, -4);
}

// §10.1: the slot cache refills 64 order-0 slots from one device at once;
// they count as in use (held by the cache, no folio) until handed out.
TEST(Policy_10_1, SlotCacheRefillsABatch) {
  Harness h(Options(kDefaultClusterShift, 1, MustPreset("linux-6.14")));
  const int t = h.On(Dev("a", 2048));
  ASSERT_GT(h.sys.nr_swap_pages(), 5 * 64 * 1);  // cache active (§10.1 step 1)
  Folio* f = h.AllocNew(0);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->swap().offset, 512u);  // free list first (§10.2)
  EXPECT_EQ(h.Dv(t).inuse, 64u);
  EXPECT_EQ(h.sys.nr_swap_pages(), 2047 - 64);
  EXPECT_EQ(h.sys.counters().slot_cache_refills, 1u);
  const SlotInfo held = h.Sl(t, 575);
  EXPECT_EQ(held.kind, SlotKind::kCached);
  EXPECT_EQ(held.folio, nullptr);
  EXPECT_EQ(h.Sl(t, 576).kind, SlotKind::kEmpty);
  const uint64_t hits = h.sys.counters().slot_cache_hits;
  EXPECT_EQ(h.Off(0), 513u);
  EXPECT_EQ(h.sys.counters().slot_cache_hits, hits + 1);
  EXPECT_EQ(h.sys.counters().slot_cache_refills, 1u);
  EXPECT_EQ(h.Dv(t).inuse, 64u);
  // Swapoff drains the cache (§10.1): nothing stays referenced.
  EXPECT_TRUE(h.SwapOff(t, h.DropAll()).ok());
}

}  // namespace
}  // namespace swaplab::alloc::test
