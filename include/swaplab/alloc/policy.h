// SPDX-License-Identifier: MIT
// Every allocator behaviour that changed between kernel versions, as data
// (allocator spec §10). A kernel version is a preset: a bundle of knobs.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::alloc {

// One step of the per-device search after the per-CPU / sequential hint
// failed (allocator spec §2.4 and §10.2). A policy is an ordered list.
enum class SearchStep : uint8_t {
  kFreeIfDiscard,       // free list, one cluster, only on PAGE_DISCARD devices
  kFree,                // free list, one cluster (all devices)
  kFreeIfNotDiscard,    // free list, one cluster, only without PAGE_DISCARD
  kNonfull,             // nonfull[order], all clusters (order < PMD order)
  kReclaimFull,         // full-cluster reclaim of one cluster if vm_swap_full()
  kFragOne,             // frag[order], one cluster (order < PMD order)
  kFragAll,             // frag[order], rotating through the list (< v6.18)
  kSyncDiscardRestart,  // discard device: run pending discards, restart (< Oct 2025)
  kStealHigher,         // order 0: frag[o] then nonfull[o], o = 1..PMD order
};
inline constexpr int kNumSearchSteps = 9;
std::string_view Name(SearchStep s);
// The step called `name` (Name's inverse), or nullopt.
std::optional<SearchStep> ParseSearchStep(std::string_view name);

// Every knob but the search order, one table: each row declares a field
// of Policy (with its default), and the same rows give Policy::Set, the
// knob list, Describe and Validate their names, ranges and docs, so a knob
// cannot be added to one and forgotten in another.
//   BOOL(name, default, doc)   INT(name, default, min, max, doc)
// The defaults are the 2026 tree's; presets change some (policy.cc).
// Notes on the rows:
// - split_tails_last_first (§2.10): the split (__folio_split ->
//   lru_add_split_folio) appends the tails to the reclaim list in page order
//   and shrink_folio_list takes folios from the list's end, so page 0 goes
//   first, then pages 2^k-1 ... 1 (measured on 6.18: docs/fidelity.md,
//   "Agreement with the running kernel"); <= v6.14's __split_huge_page
//   added the tails last-first: page order.
// - count_max (§1.4 / U6): 15 means 4 count bits; 63 the swap_map's 0x3e
//   as the largest plain count.
// - The five rows from interleave_free_clusters on are what Debian's 6.12
//   still had (the linux-6.12 preset, read from its mm/swapfile.c and
//   mm/swap_slots.c and checked slot for slot against it in the vm guest:
//   docs/fidelity.md, "Linux 6.12 in a guest"); every later preset leaves
//   them at their defaults.
// - The last three rows are what Debian's 6.1 has on top of 6.12's (the
//   linux-6.1 preset, read from its linux-source-6.1 6.1.192
//   mm/swapfile.c: docs/fidelity.md, "Linux 6.1").
#define SWAPLAB_POLICY_KNOBS(BOOL, INT)                                                             \
  BOOL(sync_discard_retry, true,                                                                    \
       "§2.9: an order-0 allocation that failed everywhere runs pending discards and retries "     \
       "(v6.18+); "                                                                                 \
       "off: the device search restarts inside (sync-discard-restart step)")                        \
  BOOL(slot_cache, false,                                                                           \
       "§10.1: per-CPU swap slot cache of order-0 slots refilled from one device (< v6.15)")        \
  INT(slot_cache_batch, 64, 1, 4096, "§10.1: slots the slot cache takes from a device per refill")  \
  BOOL(percpu_hint_per_device, false,                                                               \
       "§10.1: per-device per-CPU cluster hints (<= v6.14); off: one global (device, offset) per " \
       "CPU and "                                                                                   \
       "order, a fast path ahead of device selection (v6.15+)")                                     \
  BOOL(nonssd_global_cluster, true,                                                                 \
       "§10.3: non-SSD devices allocate from one sequential hint per device, serialised "          \
       "(v6.14+); off: "                                                                            \
       "per-CPU hints for all")                                                                     \
  BOOL(default_prio_round_robin, false,                                                             \
       "§10.3: devices without a priority share -1 and rotate (newer); off: -2, -3, ... in "       \
       "swapon order, "                                                                             \
       "swapoff renumbers (<= v6.18)")                                                              \
  BOOL(hibernation_percpu_hint, false,                                                              \
       "§10.3: hibernation slots try the per-CPU hint first (v7.1+); off: the per-device path "    \
       "one slot "                                                                                  \
       "at a time")                                                                                 \
  BOOL(hibernation_hib_entry, false,                                                                \
       "§1.4: hibernation slots are HIB entries freed by offset (seed 001's base); off: a SHADOW " \
       "placeholder with count 1")                                                                  \
  BOOL(split_tails_last_first, true,                                                                \
       "§2.10: reclaim swaps out a split large folio's pages 0, then 2^k-1 ... 1 (v6.15+); off: "  \
       "page order")                                                                                \
  INT(count_max, 15, 2, 255, "§1.4: inline swap count capacity (15: 4 bits; 63: swap_map's 0x3e)")  \
  BOOL(interleave_free_clusters, false,                                                             \
       "6.12 setup_clusters(): swapon builds the free list column by column, SWAP_CLUSTER_COLS "    \
       "clusters apart (max(64/24, 16384/cluster) rounded up: 32 for 512-slot clusters), from "     \
       "column 0 (cluster_next is 1); off: disk order")                                             \
  BOOL(isolate_clusters, true,                                                                      \
       "isolate_lock_cluster() + relocate_cluster() (v6.14+): a scanned cluster leaves its list "   \
       "and goes back by its count; off: 6.12 cluster_alloc_swap_entry() scans clusters where "     \
       "they are (a free one moves to nonfull[order] when first used, a nonfull one to frag, "      \
       "before its scan; the per-CPU next is scanned wherever it points)")                          \
  BOOL(slot_cache_return, false,                                                                    \
       "6.12 free_swap_slot(): order-0 frees wait in the freeing CPU's return buffer "              \
       "(slots_ret, slot_cache_batch entries) and are freed in one batch when it is full; large "   \
       "folios and the allocator's own reclaim (TTRS_DIRECT) free directly (< v6.14)")              \
  BOOL(swap_pages_taken_ahead, false,                                                               \
       "6.12 get_swap_pages(): nr_swap_pages is lowered by the whole request before the scan "      \
       "(request capped at nr_swap_pages / 2^order) and the shortfall given back after; "           \
       "get_swap_page_of_type() lowers it after its scan; off: lowered as each slot is taken")      \
  BOOL(rotational_swap_map_scan, false,                                                             \
       "6.12 scan_swap_map_slots(): a device without SWP_SOLIDSTATE has no clusters; order-0 "      \
       "slots come from cluster_next by the swap_map scan (cluster_nr, lowest_bit/highest_bit, "    \
       "LATENCY_LIMIT 256) and it never holds a large folio; off: clusters on every device")        \
  BOOL(ssd_swap_map_scan, false,                                                                    \
       "6.1 scan_swap_map_slots() with cluster_info: an SSD's order-0 slots come from the CPU's "   \
       "percpu_cluster (scan_swap_map_try_ssd_cluster(): the free list's head, scanned forward), "  \
       "then the swap_map scan from the CPU's scan base cluster_next_cpu (random at swapon, and "   \
       "set_cluster_next() jumps when it crosses 64 MiB); no nonfull/frag lists; a PMD folio "      \
       "takes the free list's head whole (swap_alloc_cluster()); off: the cluster allocator")       \
  BOOL(scan_reclaim_direct, true,                                                                   \
       "6.12 scan_swap_map_slots(): the scan takes a cache-only slot back with TTRS_DIRECT, "       \
       "freed at once; off: 6.1 __try_to_reclaim_swap(TTRS_ANYWAY) frees it through "               \
       "free_swap_slot() (into the return buffer under slot_cache_return)")                         \
  BOOL(mthp_swap, true,                                                                             \
       "folio_alloc_swap() takes every order up to the cluster's (mTHP swap-out, v6.10+); off: "    \
       "6.1 get_swap_page() knows order 0 and the PMD order only, other orders are refused "        \
       "(-EINVAL)")

// One row of the table, for listing and checking knobs by name.
struct PolicyKnobInfo {
  std::string_view name;
  std::string_view type;     // "bool", "int" or "steps" (the search order)
  int64_t min = 0, max = 0;  // int knobs
  std::string_view doc;
};

// One named preset (Policy::Presets): a kernel version or a proposal as a
// base preset and the knobs it changes.
struct PresetInfo {
  std::string_view name;
  std::string_view base;     // the preset it starts from; "": the knobs' defaults
  std::string_view knobs;    // "NAME=VALUE ..." set on the base, in order
  std::string_view kernels;  // the releases it stands for
  std::string_view source;   // where its behaviour was read or measured
  std::string_view summary;  // what it bundles (README's preset table)
};

struct Policy {
  std::string name = "custom";

  // Per-device search order (§2.4 today, §10.2 before v6.18); the knob
  // "search", steps by Name(SearchStep) joined with commas.
  std::vector<SearchStep> search = {SearchStep::kFreeIfDiscard,    SearchStep::kNonfull,
                                    SearchStep::kFreeIfNotDiscard, SearchStep::kReclaimFull,
                                    SearchStep::kFragOne,          SearchStep::kStealHigher};

#define SWAPLAB_POLICY_BOOL_FIELD(n, d, doc) bool n = d;
#define SWAPLAB_POLICY_INT_FIELD(n, d, lo, hi, doc) int n = d;
  SWAPLAB_POLICY_KNOBS(SWAPLAB_POLICY_BOOL_FIELD, SWAPLAB_POLICY_INT_FIELD)
#undef SWAPLAB_POLICY_BOOL_FIELD
#undef SWAPLAB_POLICY_INT_FIELD

  // Named presets: kernel versions, one row each of Presets().
  static Result<Policy> Preset(std::string_view name);
  static std::vector<std::string> PresetNames();
  static std::span<const PresetInfo> Presets();
  // Every knob, "search" first, then the table's rows in order.
  static const std::vector<PolicyKnobInfo>& Knobs();
  // Sets knob `knob` from text: bools true/false/1/0/on/off, ints in the
  // knob's range, search as comma-separated step names. -EINVAL naming the
  // knob and the value when either is wrong; the policy is unchanged then.
  // Cross-knob rules are Validate's.
  Status Set(std::string_view knob, std::string_view value);
  // "NAME=VALUE" (a command line's --knob).
  Status SetAssignment(std::string_view assignment);
  // Every knob's value as Set reads it, in Knobs() order.
  std::vector<std::pair<std::string, std::string>> KnobValues() const;
  // "policy NAME: knob=value ..." for report headers.
  std::string Describe() const;
  Status Validate() const;
};

// The preset used where none is named: the running kernel of this project's
// machines (6.18), which the kernel calibration compares with.
inline constexpr std::string_view kDefaultPreset = "linux-6.18";
// The preset of hibernation work (`image write`, scenarios without a
// "policy"): the tree the 2026 RFC series (seed 001) applies to, whose
// swap table its sources build on.
inline constexpr std::string_view kRfcBasePreset = "mm-new";

}  // namespace swaplab::alloc
#pragma GCC visibility pop
