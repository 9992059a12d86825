// Named kernel versions as bundles of policy knobs (allocator spec §10).
#include "swaplab/alloc/policy.h"

#include <sstream>

namespace swaplab::alloc {

std::string_view Name(SearchStep s) {
  switch (s) {
    case SearchStep::kFreeIfDiscard: return "free-if-discard";
    case SearchStep::kFree: return "free";
    case SearchStep::kFreeIfNotDiscard: return "free-if-not-discard";
    case SearchStep::kNonfull: return "nonfull";
    case SearchStep::kReclaimFull: return "reclaim-full";
    case SearchStep::kFragOne: return "frag-one";
    case SearchStep::kFragAll: return "frag-all";
    case SearchStep::kSyncDiscardRestart: return "sync-discard-restart";
    case SearchStep::kStealHigher: return "steal-higher";
  }
  return "?";
}

namespace {

// Search order before "prefer nonfull over free clusters" and "don't scan
// every fragment cluster" (Aug 2025, seed 003; allocator spec §10.2).
std::vector<SearchStep> FreeFirstSearch() {
  return {SearchStep::kFree, SearchStep::kReclaimFull, SearchStep::kNonfull,
          SearchStep::kFragAll, SearchStep::kSyncDiscardRestart, SearchStep::kStealHigher};
}

}  // namespace

Result<Policy> Policy::Preset(std::string_view name) {
  Policy p;  // defaults: the 2026 tree minus the knobs set below
  p.name = std::string(name);
  if (name == "linux-6.14") {
    // Slot cache and per-device per-CPU clusters (before "remove swap slot
    // cache", seed 004); swap_map with 0x3e as the largest plain count.
    p.search = FreeFirstSearch();
    p.sync_discard_retry = false;
    p.slot_cache = true;
    p.percpu_hint_per_device = true;
    p.split_tails_last_first = false;
    p.count_max = 63;
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
    return Status(-EINVAL, "unknown policy preset '" + std::string(name) + "' (known: " + names + ")");
  }
  return p;
}

std::vector<std::string> Policy::PresetNames() {
  return {"linux-6.14", "linux-6.15", "linux-6.18", "mm-new"};
}

Status Policy::Validate() const {
  if (search.empty()) return Status(-EINVAL, "policy " + name + ": empty search order");
  if (count_max < 2 || count_max > 255)
    return Status(-EINVAL, "policy " + name + ": count_max " + std::to_string(count_max) +
                               " is outside 2..255");
  if (slot_cache_batch < 1 || slot_cache_batch > 4096)
    return Status(-EINVAL, "policy " + name + ": slot_cache_batch " +
                               std::to_string(slot_cache_batch) + " is outside 1..4096");
  if (slot_cache && !percpu_hint_per_device)
    return Status(-EINVAL, "policy " + name + ": the slot cache needs per-device per-CPU hints");
  return Status::Ok();
}

std::string Policy::Describe() const {
  std::ostringstream o;
  o << "policy " << name << ": search=";
  for (size_t i = 0; i < search.size(); ++i) o << (i ? "," : "") << Name(search[i]);
  o << " sync_discard_retry=" << sync_discard_retry << " slot_cache=" << slot_cache
    << " percpu_hint_per_device=" << percpu_hint_per_device
    << " nonssd_global_cluster=" << nonssd_global_cluster
    << " default_prio_round_robin=" << default_prio_round_robin
    << " hibernation_percpu_hint=" << hibernation_percpu_hint
    << " hibernation_hib_entry=" << hibernation_hib_entry
    << " split_tails_last_first=" << split_tails_last_first << " count_max=" << count_max;
  return o.str();
}

}  // namespace swaplab::alloc
