// SPDX-License-Identifier: MIT
// Named kernel versions as bundles of policy knobs (allocator spec §10).
#include "swaplab/alloc/policy.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "swaplab/alloc/preset_knobs.h"
#include "swaplab/alloc/printable.h"

namespace swaplab::alloc {

std::string_view Name(SearchStep s) {
  switch (s) {
    case SearchStep::kFreeIfDiscard:
      return "free-if-discard";
    case SearchStep::kFree:
      return "free";
    case SearchStep::kFreeIfNotDiscard:
      return "free-if-not-discard";
    case SearchStep::kNonfull:
      return "nonfull";
    case SearchStep::kReclaimFull:
      return "reclaim-full";
    case SearchStep::kFragOne:
      return "frag-one";
    case SearchStep::kFragAll:
      return "frag-all";
    case SearchStep::kSyncDiscardRestart:
      return "sync-discard-restart";
    case SearchStep::kStealHigher:
      return "steal-higher";
  }
  return "?";
}

std::optional<SearchStep> ParseSearchStep(std::string_view name) {
  for (int i = 0; i < kNumSearchSteps; ++i)
    if (Name(static_cast<SearchStep>(i)) == name) return static_cast<SearchStep>(i);
  return std::nullopt;
}

namespace {

// The presets (allocator spec §10): each is a base preset ("" for the
// knobs' defaults, the 2026 tree) and the knobs it changes, applied in
// order with Policy::SetAssignment. PresetNames, --policy's help, the man
// page, the bash completion, README's and scenarios/README.md's preset
// lists are made from this table (`swaplab --presets-markdown`; the
// docs_presets and install_man_completion tests check them). Adding a
// preset is adding a row: docs/library.md "Adding a preset".
const PresetInfo kPresets[] = {
    {"linux-6.1", "linux-6.12", "ssd_swap_map_scan=1 scan_reclaim_direct=0 mthp_swap=0",
     "6.1 (Debian 12's linux-image-amd64)",
     "linux-source-6.1: mm/swapfile.c scan_swap_map_slots(), scan_swap_map_try_ssd_cluster(); "
     "docs/fidelity.md \"Linux 6.1\"",
     "Debian 12's 6.1 (read from its source; agrees with the 6.1 guest slot for slot on "
     "every calibration trace 6.1 can run, 28 rows, the kernel's random scan bases read off "
     "its placements by `kernel run`, docs/fidelity.md): `linux-6.12` plus SSDs served by "
     "the swap_map scan with per-CPU clusters taken from the free list's head and per-CPU "
     "random scan bases, PMD folios taking a free cluster whole (`ssd_swap_map_scan`; the "
     "bases are drawn from `SystemOptions::scan_base_seed`, and a trace's `scan-base` record "
     "sets one), the scan's reclaim freeing through the return buffer (`scan_reclaim_direct` "
     "off), and no mTHP: orders between 0 and the PMD order are refused (`mthp_swap` off)"},
    {"linux-6.12", "linux-6.14",
     "interleave_free_clusters=1 isolate_clusters=0 slot_cache_return=1 "
     "swap_pages_taken_ahead=1 rotational_swap_map_scan=1",
     "6.12 (Debian 13's linux-image-amd64, the vm guest)",
     "linux-source-6.12: mm/swapfile.c setup_clusters(), cluster_alloc_swap_entry(), "
     "mm/swap_slots.c; docs/fidelity.md \"Linux 6.12 in a guest\"",
     "Debian's 6.12 (the `vm` guest's kernel, checked slot for slot against it: 100% on all "
     "44 calibration rows and on seed 001's hibernation layouts): `linux-6.14` plus the free "
     "list interleaved at swapon (`interleave_free_clusters`), clusters scanned where they "
     "are on their lists (`isolate_clusters` off), the slot cache's 64-entry return buffer "
     "on free (`slot_cache_return`), allocation requests taken off `nr_swap_pages` ahead "
     "(`swap_pages_taken_ahead`), and no clusters on rotational devices, whose slots come "
     "from the old swap_map scan (`rotational_swap_map_scan`)"},
    {"linux-6.14", "",
     "search=free,reclaim-full,nonfull,frag-all,sync-discard-restart,steal-higher "
     "sync_discard_retry=0 slot_cache=1 percpu_hint_per_device=1 split_tails_last_first=0 "
     "count_max=63",
     "6.14",
     "mm/swapfile.c and mm/swap_slots.c of v6.14; seeds 003 and 004 (the trees before them)",
     "per-CPU swap slot cache (64-slot batches), per-device per-CPU clusters, free clusters "
     "before nonfull, every frag cluster scanned, synchronous discard inside the search, "
     "split pages swapped out in page order"},
    {"linux-6.15", "",
     "search=free,reclaim-full,nonfull,frag-all,sync-discard-restart,steal-higher "
     "sync_discard_retry=0 count_max=63",
     "6.15 (6.16 and 6.17 not checked)",
     "seed 004 (\"remove swap slot cache\", merged for 6.15); split order measured on 6.18",
     "slot cache removed: one global per-CPU (device, offset) fast path; the pages of a "
     "split large folio go out page 0 first, then last-first (`split_tails_last_first`, "
     "measured on 6.18); otherwise as 6.14"},
    {"linux-6.18", "", "count_max=63", "6.18 (this project's machines)",
     "seed 003 (\"prefer nonfull over free clusters\"); checked slot for slot against the "
     "machine's 6.18 (docs/fidelity.md)",
     "nonfull before free on non-discard devices, one frag cluster, order-0 synchronous "
     "discard retry; default priorities -2, -3, … (as this machine's 6.18 kernel shows)"},
    {"mm-new", "",
     "default_prio_round_robin=1 hibernation_percpu_hint=1 hibernation_hib_entry=1 count_max=15",
     "the mm-new tree of 2026 (7.1 onwards)", "the allocator spec (../shared/spec); seed 001",
     "the 2026 tree of the spec: default priorities share -1 and rotate, hibernation slots "
     "through the per-CPU cluster, HIB slot entries, 4 count bits"},
};

}  // namespace

std::span<const PresetInfo> Policy::Presets() { return kPresets; }

std::vector<std::string_view> PresetKnobAssignments(const PresetInfo& preset) {
  std::vector<std::string_view> assignments;
  for (std::string_view rest = preset.knobs; !rest.empty();) {
    const size_t end = std::min(rest.find(' '), rest.size());
    if (end > 0) assignments.push_back(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return assignments;
}

Result<Policy> Policy::Preset(std::string_view name) {
  const auto row = std::find_if(std::begin(kPresets), std::end(kPresets),
                                [&](const PresetInfo& p) { return p.name == name; });
  if (row == std::end(kPresets)) {
    std::string names;
    for (const auto& n : PresetNames()) names += (names.empty() ? "" : ", ") + n;
    return Status(-EINVAL,
                  "unknown policy preset '" + std::string(name) + "' (known: " + names + ")");
  }
  Policy p;  // defaults: the 2026 tree
  if (!row->base.empty()) {
    auto base = Preset(row->base);
    if (!base.ok()) return base.status();
    p = *base;
  }
  for (std::string_view assignment : PresetKnobAssignments(*row)) {
    if (Status st = p.SetAssignment(assignment); !st.ok())
      return Status(-EINVAL, "preset " + std::string(name) + ": " + st.message());
  }
  p.name = std::string(name);
  return p;
}

std::vector<std::string> Policy::PresetNames() {
  std::vector<std::string> names;
  for (const PresetInfo& p : kPresets) names.emplace_back(p.name);
  return names;
}

const std::vector<PolicyKnobInfo>& Policy::Knobs() {
  static const std::vector<PolicyKnobInfo> k = [] {
    std::vector<PolicyKnobInfo> v;
    v.push_back(
        {"search", "steps", 0, 0,
         "§2.4 / §10.2: the per-device search order after the per-CPU hint failed (steps: "
         "free-if-discard, free, free-if-not-discard, nonfull, reclaim-full, frag-one, frag-all, "
         "sync-discard-restart, steal-higher)"});
#define SWAPLAB_BOOL_ROW(n, d, doc) v.push_back({#n, "bool", 0, 1, doc});
#define SWAPLAB_INT_ROW(n, d, lo, hi, doc) v.push_back({#n, "int", lo, hi, doc});
    SWAPLAB_POLICY_KNOBS(SWAPLAB_BOOL_ROW, SWAPLAB_INT_ROW)
#undef SWAPLAB_BOOL_ROW
#undef SWAPLAB_INT_ROW
    return v;
  }();
  return k;
}

namespace {

// Values in messages are cut and escaped: they come from command lines and files.
std::string Shown(std::string_view v) { return Printable(v, kMaxTokenInMessage); }

std::optional<bool> ParseBool(std::string_view v) {
  if (v == "true" || v == "1" || v == "on") return true;
  if (v == "false" || v == "0" || v == "off") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInt(std::string_view v) {
  int64_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) return std::nullopt;
  return x;
}

}  // namespace

Status Policy::Set(std::string_view knob, std::string_view value) {
  auto bad = [&](const std::string& why) {
    return Status(-EINVAL, "knob " + Shown(knob) + "=" + Shown(value) + ": " + why);
  };
  if (knob == "search") {
    std::vector<SearchStep> steps;
    size_t pos = 0;
    while (pos <= value.size()) {
      const size_t end = std::min(value.find(',', pos), value.size());
      const std::string_view step = value.substr(pos, end - pos);
      const auto s = ParseSearchStep(step);
      if (!s) return bad("unknown search step '" + Shown(step) + "'");
      steps.push_back(*s);
      pos = end + 1;
    }
    if (steps.empty()) return bad("an empty search order");
    search = std::move(steps);
    return Status::Ok();
  }
#define SWAPLAB_BOOL_SET(n, d, doc)               \
  if (knob == #n) {                               \
    const auto b = ParseBool(value);              \
    if (!b) return bad("expected true or false"); \
    n = *b;                                       \
    return Status::Ok();                          \
  }
#define SWAPLAB_INT_SET(n, d, lo, hi, doc)                                                \
  if (knob == #n) {                                                                       \
    const auto x = ParseInt(value);                                                       \
    if (!x || *x < (lo) || *x > (hi)) return bad("expected an integer in " #lo ".." #hi); \
    n = static_cast<int>(*x);                                                             \
    return Status::Ok();                                                                  \
  }
  SWAPLAB_POLICY_KNOBS(SWAPLAB_BOOL_SET, SWAPLAB_INT_SET)
#undef SWAPLAB_BOOL_SET
#undef SWAPLAB_INT_SET
  std::string names;
  for (const auto& k : Knobs()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return Status(-EINVAL, "unknown knob '" + Shown(knob) + "' (knobs: " + names + ")");
}

Status Policy::SetAssignment(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Status(-EINVAL, "knob '" + Shown(assignment) + "': expected NAME=VALUE");
  return Set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

std::vector<std::pair<std::string, std::string>> Policy::KnobValues() const {
  std::vector<std::pair<std::string, std::string>> v;
  std::string steps;
  for (size_t i = 0; i < search.size(); ++i) steps += (i ? "," : "") + std::string(Name(search[i]));
  v.emplace_back("search", steps);
#define SWAPLAB_BOOL_VALUE(n, d, doc) v.emplace_back(#n, n ? "true" : "false");
#define SWAPLAB_INT_VALUE(n, d, lo, hi, doc) v.emplace_back(#n, std::to_string(n));
  SWAPLAB_POLICY_KNOBS(SWAPLAB_BOOL_VALUE, SWAPLAB_INT_VALUE)
#undef SWAPLAB_BOOL_VALUE
#undef SWAPLAB_INT_VALUE
  return v;
}

Status Policy::Validate() const {
  if (search.empty()) return Status(-EINVAL, "policy " + name + ": empty search order");
#define SWAPLAB_BOOL_CHECK(n, d, doc)
#define SWAPLAB_INT_CHECK(n, d, lo, hi, doc)                                    \
  if (n < (lo) || n > (hi))                                                     \
    return Status(-EINVAL, "policy " + name + ": " #n " " + std::to_string(n) + \
                               " is outside " #lo ".." #hi);
  SWAPLAB_POLICY_KNOBS(SWAPLAB_BOOL_CHECK, SWAPLAB_INT_CHECK)
#undef SWAPLAB_BOOL_CHECK
#undef SWAPLAB_INT_CHECK
  if (slot_cache && !percpu_hint_per_device)
    return Status(-EINVAL, "policy " + name + ": the slot cache needs per-device per-CPU hints");
  if (slot_cache_return && !slot_cache)
    return Status(-EINVAL, "policy " + name + ": slot_cache_return needs the slot cache");
  if (!isolate_clusters && !percpu_hint_per_device)
    return Status(-EINVAL,
                  "policy " + name + ": isolate_clusters=false needs per-device per-CPU hints");
  return Status::Ok();
}

std::string Policy::Describe() const {
  std::string s = "policy " + name + ":";
  for (const auto& [k, v] : KnobValues()) s += " " + k + "=" + v;
  return s;
}

}  // namespace swaplab::alloc
