// Named kernel versions as bundles of policy knobs (allocator spec §10).
#include "swaplab/alloc/policy.h"

#include <algorithm>
#include <charconv>
#include <optional>

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

// Search order before "prefer nonfull over free clusters" and "don't scan
// every fragment cluster" (Aug 2025, seed 003; allocator spec §10.2).
std::vector<SearchStep> FreeFirstSearch() {
  return {SearchStep::kFree,    SearchStep::kReclaimFull,        SearchStep::kNonfull,
          SearchStep::kFragAll, SearchStep::kSyncDiscardRestart, SearchStep::kStealHigher};
}

// linux-6.14: slot cache and per-device per-CPU clusters (before "remove
// swap slot cache", seed 004); swap_map with 0x3e as the largest plain
// count.
void SetLinux614(Policy* p) {
  p->search = FreeFirstSearch();
  p->sync_discard_retry = false;
  p->slot_cache = true;
  p->percpu_hint_per_device = true;
  p->split_tails_last_first = false;
  p->count_max = 63;
}

}  // namespace

Result<Policy> Policy::Preset(std::string_view name) {
  Policy p;  // defaults: the 2026 tree minus the knobs set below
  p.name = std::string(name);
  if (name == "linux-6.12" || name == "linux-6.1") {
    // Debian's 6.12 (the vm guest): linux-6.14 plus what 6.12 still had —
    // the interleaved free list of setup_clusters(), clusters scanned on
    // their lists (no isolation), the slot cache's return buffer, the
    // batch taken off nr_swap_pages ahead, and no clusters on rotational
    // devices (docs/fidelity.md, "Linux 6.12 in a guest").
    SetLinux614(&p);
    p.interleave_free_clusters = true;
    p.isolate_clusters = false;
    p.slot_cache_return = true;
    p.swap_pages_taken_ahead = true;
    p.rotational_swap_map_scan = true;
    if (name == "linux-6.1") {
      // Debian's 6.1 (bookworm's linux-image-amd64): 6.12 plus an SSD
      // served by scan_swap_map_slots()'s per-CPU cluster and per-CPU scan
      // base, the scan's reclaim through free_swap_slot(), and no mTHP
      // (docs/fidelity.md, "Linux 6.1").
      p.ssd_swap_map_scan = true;
      p.scan_reclaim_direct = false;
      p.mthp_swap = false;
    }
  } else if (name == "linux-6.14") {
    SetLinux614(&p);
  } else if (name == "linux-6.15") {
    // Global per-CPU cluster fast path (seed 004), still free-first.
    p.search = FreeFirstSearch();
    p.sync_discard_retry = false;
    p.count_max = 63;
  } else if (name == "linux-6.18") {
    // Nonfull before free, one frag cluster (seed 003); the order-0
    // synchronous discard retry; default priorities still -2, -3, ...
    // (checked on this machine's 6.18 kernel, docs/fidelity.md).
    p.count_max = 63;
  } else if (name == "mm-new") {
    // The 2026 tree of the spec: round robin among default priorities,
    // hibernation through the per-CPU hint, HIB entries, 4 count bits.
    p.default_prio_round_robin = true;
    p.hibernation_percpu_hint = true;
    p.hibernation_hib_entry = true;
    p.count_max = 15;
  } else {
    std::string names;
    for (const auto& n : PresetNames()) names += (names.empty() ? "" : ", ") + n;
    return Status(-EINVAL,
                  "unknown policy preset '" + std::string(name) + "' (known: " + names + ")");
  }
  return p;
}

std::vector<std::string> Policy::PresetNames() {
  return {"linux-6.1", "linux-6.12", "linux-6.14", "linux-6.15", "linux-6.18", "mm-new"};
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
