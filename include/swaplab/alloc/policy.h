// Every allocator behaviour that changed between kernel versions, as data
// (allocator spec §10). A kernel version is a preset: a bundle of knobs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::alloc {

// One step of the per-device search after the per-CPU / sequential hint
// failed (allocator spec §2.4 and §10.2). A policy is an ordered list.
enum class SearchStep : uint8_t {
  kFreeIfDiscard,     // free list, one cluster, only on PAGE_DISCARD devices
  kFree,              // free list, one cluster (all devices)
  kFreeIfNotDiscard,  // free list, one cluster, only without PAGE_DISCARD
  kNonfull,           // nonfull[order], all clusters (order < PMD order)
  kReclaimFull,       // full-cluster reclaim of one cluster if vm_swap_full()
  kFragOne,           // frag[order], one cluster (order < PMD order)
  kFragAll,           // frag[order], rotating through the list (< v6.18)
  kSyncDiscardRestart,// discard device: run pending discards, restart (< Oct 2025)
  kStealHigher,       // order 0: frag[o] then nonfull[o], o = 1..PMD order
};
inline constexpr int kNumSearchSteps = 9;
std::string_view Name(SearchStep s);

struct Policy {
  std::string name = "custom";

  // Per-device search order (§2.4 today, §10.2 before v6.18).
  std::vector<SearchStep> search = {
      SearchStep::kFreeIfDiscard, SearchStep::kNonfull,  SearchStep::kFreeIfNotDiscard,
      SearchStep::kReclaimFull,   SearchStep::kFragOne,  SearchStep::kStealHigher};

  // §2.9: after an order-0 allocation failed everywhere, run pending
  // discards synchronously and retry (v6.18 and later). Older kernels
  // restart inside the device search instead (kSyncDiscardRestart).
  bool sync_discard_retry = true;

  // §10.1: the per-CPU swap slot cache (until v6.15): order-0 allocations
  // are served from a per-CPU batch of 64 slots refilled from one device.
  bool slot_cache = false;
  int slot_cache_batch = 64;

  // §10.1 last item: per-device per-CPU cluster hints (≤ v6.14) instead of
  // one global (device, offset) per CPU and order (v6.15+), which also acts
  // as a fast path ahead of device selection.
  bool percpu_hint_per_device = false;

  // §10.3: non-SSD devices use one sequential hint per device (seq_next)
  // and serialise allocation on it (v6.14+). Off: per-CPU hints for all.
  bool nonssd_global_cluster = true;

  // §10.3: devices without a priority share -1 and rotate (newer); off:
  // they get -2, -3, ... in swapon order and swapoff renumbers (≤ v6.18).
  bool default_prio_round_robin = false;

  // §10.3: hibernation slots try the per-CPU hint first (v7.1+); off: the
  // slow per-device path one slot at a time (v6.15-v7.0).
  bool hibernation_percpu_hint = false;

  // §1.4: hibernation slots are HIB entries freed by offset (2026 base of
  // seed 001); off: a SHADOW placeholder with count 1 (put + free + reclaim).
  bool hibernation_hib_entry = false;

  // §2.10, the order in which reclaim swaps out the pages of a large folio
  // it had to split. On (v6.15+): the split (__folio_split →
  // lru_add_split_folio) appends the tails to the reclaim list in page
  // order and shrink_folio_list takes folios from the list's end, so page 0
  // goes first, then pages 2^k−1 … 1 (measured on 6.18: docs/fidelity.md,
  // "Agreement with the running kernel"). Off (≤ v6.14, __split_huge_page
  // added the tails last-first): page order.
  bool split_tails_last_first = true;

  // §1.4 / U6: inline count capacity; 15 means 4 count bits.
  int count_max = 15;

  // Named presets: "linux-6.14", "linux-6.15", "linux-6.18", "mm-new".
  static Result<Policy> Preset(std::string_view name);
  static std::vector<std::string> PresetNames();
  // One line per knob, for report headers.
  std::string Describe() const;
  Status Validate() const;
};

}  // namespace swaplab::alloc
