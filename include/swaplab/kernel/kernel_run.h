// SPDX-License-Identifier: MIT
// `swaplab kernel run`: runs a trace against the running kernel's swap and
// records where the kernel put every page. The trace is written
// back with `expect` lines, so `swaplab replay` of it with the matching
// preset measures the model's agreement with the kernel.
#pragma once
#pragma GCC visibility push(default)

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/kernel/kernel_area.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::kernel {

struct RunOptions {
  std::string trace;
  DeviceKind device = DeviceKind::kLoopSsd;
  std::optional<uint64_t> size_pages;           // overrides every swapon's pages=
  std::string out;                              // the trace with expect lines ("" = none)
  int prio = 10000;                             // swapon priority when the trace has no prio=
  uint64_t max_area_bytes = uint64_t{4} << 30;  // bound on Σ area sizes
  int timeout_s = 300;                          // bound on the run's wall time
  int writeback_timeout_ms = 5000;
  bool annotate_inuse = false;  // a "# kernel inuse N" comment after each record (debugging)
  // Consecutive order-0 allocs of one CPU paged out by one MADV_PAGEOUT
  // while the swap areas stay under half full (Runner::PageoutTogether);
  // off: one call per folio. The kernel places them the same either way.
  bool pageout_runs = true;
  // After the records: the trace's swapped-out pages, as many fresh ones,
  // faulted in and paged out by one MADV_PAGEOUT on a fresh area of the
  // run's kind (highest priority), timed: the kernel's own cost of the
  // run's swap-outs (RunReport::floor_seconds), as bench/pageout_floor.c;
  // then the same pages as many mappings as the run had folios (each its
  // own VMA), paged out in as many calls as the run made
  // (RunReport::floor_calls_seconds).
  bool floor = false;
  // Records applied so far, of all; called after each record (read-only).
  std::function<void(uint64_t done, uint64_t total)> progress = nullptr;
  // The model run in lockstep to see slots taken outside the trace
  // (interference); unset: the preset of the running kernel's version
  // (alloc::PresetForRelease of uname's release). Only a preset that models
  // this kernel counts its slots as it does: with any other (no preset for
  // this version, or watch_models_kernel false) differences are reported
  // as the model's, never explained as `foreign` records nor made again.
  std::optional<alloc::Policy> watch_policy;
  bool watch_models_kernel = true;  // with watch_policy: it is this kernel's preset
  bool account_foreign = true;      // off: interference is reported, never written as `foreign`
  // RunTraceAccounted: runs made again when one had interference it could
  // not account for (at most this many more).
  int reruns = 4;
  // Called after each record with its trace line, before the run looks for
  // interference (tests: another process swaps out at a chosen point).
  std::function<void(uint64_t line)> after_record = nullptr;
};

// Slots in use on a run's area that the trace's pages do not explain: some
// other process's pages swapped out into it (slots > 0) or such slots given
// back (slots < 0), seen after the record at `line`.
struct Interference {
  uint64_t line = 0;  // trace line of the record after which it was seen
  uint64_t dev = 0;
  int64_t slots = 0;
  // Written into the output trace as `foreign` records (the model replays
  // them), with the CPU and place the model's slots say.
  bool accounted = false;
  int cpu = -1;
  bool before_record = false;  // the slots were taken before the record's own pages
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // (first offset, slots), accounted
  uint64_t content_other = 0;  // slots holding bytes that are neither the trace's nor zero
  std::string how;             // accounted: how it was placed; not: why not
};

// Something the kernel did that the trace did not ask for. Reported, never
// mixed into the placements.
struct Anomaly {
  uint64_t line = 0;  // trace line
  uint64_t folio = 0;
  std::string what;
};

struct AreaReport {
  uint64_t dev = 0;
  std::string path;
  DeviceKind kind = DeviceKind::kFile;
  uint64_t pages = 0;
  int prio = 0;
  bool ssd = false, blkdev = false;
  int swap_type = -1;  // the kernel's type
  std::string note;
};

struct RunReport {
  std::vector<AreaReport> areas;
  uint64_t records = 0, folios = 0;
  uint64_t pages_swapped = 0;      // pages that got a slot at their alloc
  uint64_t pages_not_swapped = 0;  // pages the kernel kept in memory
  uint64_t expect_lines = 0;
  uint64_t pswpout = 0;  // /proc/vmstat delta
  // /proc/vmstat pgdeactivate over the records (system-wide, before the
  // final drop): active anon/file folios the kernel's own LRU balancing
  // moved to the inactive list. Not 0 when reclaim met folios of the run:
  // before the swap-in locking fix, exactly the runs of `mixed` on zram
  // whose placements departed (docs/fidelity.md).
  uint64_t lru_deactivated = 0;
  std::map<int, uint64_t> swpout, swpout_fallback;  // mTHP stats deltas, by order
  std::map<int, uint64_t> folios_by_order;          // trace allocs by order
  std::vector<Anomaly> anomalies;                   // the first 50
  uint64_t anomalies_total = 0;
  uint64_t unexplained_slots = 0;     // slots in use at the end that no trace page holds
  uint64_t worker_pages_swapped = 0;  // the worker's own pages on swap at the end
  uint64_t drop_cache_global = 0;     // `drop-cache folio=F` run as a global drop
  uint64_t uncached_at_pageout = 0;   // folios the kernel freed from the swap cache at write-out
  // MADV_PAGEOUT calls for the allocs (fewer than folios: RunOptions::pageout_runs).
  uint64_t pageout_calls = 0;
  // Round trips to the worker for the records: a batch of allocs or of
  // frees is one (Runner::Step); fewer than the records that do something.
  uint64_t steps = 0;
  // RunOptions::floor: seconds of the faults and the one page-out, and the
  // pages it sent to swap (0 and 0 without it); and of the same pages as
  // `floor_folios` mappings (folios) in `floor_calls` calls (pageout_calls),
  // when there was more than one folio.
  double floor_seconds = 0;
  uint64_t floor_pages_swapped = 0;
  uint64_t floor_folios = 0, floor_calls = 0;
  double floor_calls_seconds = 0;
  uint64_t floor_calls_pages_swapped = 0;
  uint64_t swapin_bypassed_cache = 0;  // `cache` records whose swap-in freed the slots
  uint64_t swapin_extra_pages = 0;  // pages swapped in beyond those asked for (whole large folios)
  std::vector<Interference> interference;  // the first 50
  uint64_t interference_total = 0;         // points where it was seen
  uint64_t foreign_slots = 0;              // slots written as `foreign` records
  uint64_t interference_unaccounted = 0;   // points not written as `foreign` records
  // `scan-base` records written: the kernel's random per-CPU scan bases
  // (6.1's cluster_next_cpu) read off the placements of the allocs they
  // decided (ForeignWatch::ExplainScanBase).
  uint64_t scan_bases = 0;
  // Other swap activity on the machine seen before the first record (a
  // DAMON pageout scheme, pswpout moving): said once, before the run.
  std::vector<std::string> warnings;
  std::string watch_policy;  // the lockstep model's preset
  bool watch_exact = true;   // it models this kernel (else: differences only reported)
  int runs = 1;              // RunTraceAccounted: runs made
  std::vector<std::string> rerun_reasons;  // why each earlier run was not kept
  double seconds = 0;
  double records_seconds = 0;  // of which the records (no setup, no cleanup): records / this = rate
};

// Runs the trace. Root only; refuses while leftovers of an earlier run exist
// (CheckNoLeftovers). Everything created is removed and every changed
// setting restored before returning, also on error or when `*interrupted`
// becomes non-zero (checked between records).
Result<RunReport> RunTrace(const RunOptions& o, const volatile std::sig_atomic_t* interrupted);
// RunTrace, made again (at most o.reruns times) while a run saw
// interference it could not account for; the report says how many runs
// and why. A run whose interference was all accounted is kept.
Result<RunReport> RunTraceAccounted(const RunOptions& o,
                                    const volatile std::sig_atomic_t* interrupted);

// The model's side: the written trace replayed with `policy`
// (workload::Replay).
struct ModelComparison {
  workload::ReplaySummary summary;
  std::map<int, uint64_t> swpout, swpout_fallback;  // by order (model counters)
  uint64_t pswpout = 0;
};
// cpus 0: the trace's `cpus` record (the CPUs of the machine that ran it).
Result<ModelComparison> CompareWithModel(const std::string& trace_with_expect,
                                         const std::string& policy, int cpus = 0);
Result<ModelComparison> CompareWithModel(const std::string& trace_with_expect,
                                         const alloc::Policy& policy, int cpus = 0);

// swpout_fallback / (swpout + swpout_fallback) of one order, 0 when none.
double FallbackRate(const std::map<int, uint64_t>& swpout, const std::map<int, uint64_t>& fallback,
                    int order);

// `swaplab kernel run`: the trace on the running kernel (RunTrace), the
// trace it wrote back (o.out, or a temporary file removed after) replayed
// in the model with `policy`, both sides together.
struct KernelComparison {
  std::string trace;
  std::string device;  // as the user named it
  std::string out;     // the user's --out ("" = none)
  alloc::Policy policy;
  RunReport kernel;
  ModelComparison model;
  // Not empty when the model could not replay the written trace: the
  // kernel side is filled, the model side is not.
  std::string model_error;
};
Result<KernelComparison> RunAndCompare(const RunOptions& o, const std::string& device_name,
                                       const alloc::Policy& policy,
                                       const volatile std::sig_atomic_t* interrupted);

}  // namespace swaplab::kernel
#pragma GCC visibility pop
