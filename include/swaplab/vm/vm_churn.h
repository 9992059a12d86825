// SPDX-License-Identifier: MIT
// Seed 003's experiment on a real kernel: a build-like load ("make -j96 in
// a memcg, 64k mTHP, 8G ZRAM") in a qemu guest, the kernel's own mTHP
// swap-out counters read at the end, and the same scenario, scaled to the
// guest, run through the model beside it.
//
// The guest (src/vm/guest/init.sh, mode churn) puts swap on zram (no
// discard: the device seed 003's change is for), enables the scenario's
// mTHP sizes, makes a memory cgroup with a small memory.max and runs the
// guest agent's `churn` (src/vm/guest/churn.c) in it: processes that write
// their memory in 4 KiB pages and mTHP folios, zap a share of it and are
// killed at random while more than the scenario's share of swap is in use.
// Reclaim of the memcg swaps their folios out; a 64 KiB folio that finds
// no free 64 KiB of swap is split (hugepages-64kB/stats/swpout_fallback).
#pragma once
#pragma GCC visibility push(default)
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/vm/qemu.h"
#include "swaplab/workload/generators.h"
#include "swaplab/workload/scenario.h"

namespace swaplab::vm {

// The agent's `churn` arguments (churn.c).
struct ChurnLoad {
  uint64_t processes = 0, concurrent = 0, growing = 0;
  uint64_t min_pages = 0, max_pages = 0;
  uint64_t zap_permille = 0;   // of each process's pages, zapped 4 KiB at a time
  uint64_t swapped_pages = 0;  // kill finished processes while more swap is in use
  uint64_t seed = 1;
  std::vector<workload::SizeWeight> mix;  // folio pages : weight
  std::string MixArg() const;             // "1:4/16:1"
};
// The load of a scenario's build-churn step. -EINVAL for a mix the agent
// cannot make (a folio size that is not a power of two up to 512 pages).
Result<ChurnLoad> ChurnLoadOf(const workload::ChurnSpec& s, uint64_t seed);

struct ChurnVmOptions {
  VmOptions vm;  // kernel, accel, memory, CPUs; vm.append is added to the command line
  ChurnLoad load;
  uint64_t zram_bytes = 256ull << 20;
  uint64_t memcg_bytes = 32ull << 20;    // the cgroup's memory.max
  std::vector<unsigned> mthp_kb = {64};  // sizes set to "always" (the rest "never")
  std::string keep_dir;                  // copy the console here
};

struct MthpStat {
  unsigned kb = 0;
  uint64_t swpout = 0, swpout_fallback = 0;
  // Faults that got a folio of this size, and those that fell back to a
  // smaller one (6.10 or later; -1 when the kernel does not say).
  int64_t anon_fault_alloc = -1, anon_fault_fallback = -1;
};
struct ChurnVmResult {
  std::string release, accel, accel_why;
  int prefer_nonfull = -1;  // the kernel's swapfile.prefer_nonfull, -1 none
  uint64_t processes = 0, pages = 0, zapped = 0, kills = 0, died = 0;
  uint64_t held = 0;            // jobs that waited to start: the growing ones would not fit
  uint64_t max_swap_used = 0;   // pages
  double guest_s = 0;           // the load's seconds, guest clock
  double boot_wall_s = 0;       // host seconds from qemu's start to its exit
  std::vector<MthpStat> stats;  // every hugepages-* size the kernel has
  uint64_t pswpout = 0, thp_swpout = 0, thp_swpout_fallback = 0;
  const MthpStat* Stat(unsigned kb) const;  // null if the kernel has no such size
};
// The agent's "swaplab-churn:" lines of a console; -EIO when the run did not
// finish ("done" or the counters missing).
Result<ChurnVmResult> ParseChurnConsole(const std::string& console);
// One boot running the load. -EINVAL for options the guest cannot run.
Result<ChurnVmResult> RunChurnInVm(const ChurnVmOptions& o,
                                   const volatile std::sig_atomic_t* interrupted);

// Seed 003's table on one kernel built with kernel-patches/nonfull-6.12
// (rfc-6.12 includes it): "Before" boots with swapfile.prefer_nonfull=0
// (6.12's order: the free list first), "After" with =1 (nonfull first on a
// device that does not discard). The model runs the same scaled scenario
// with linux-6.12 and linux-6.12 + kNonfullFirstSearchKnob.
struct NonfullColumn {
  std::string label;                     // the scenario's variant label
  std::string append;                    // kernel parameters
  std::vector<std::string> model_knobs;  // on the model's linux-6.12
};
std::vector<NonfullColumn> NonfullColumns(const workload::Scenario& sc);

struct NonfullTableOptions {
  VmOptions vm;                 // vm.kernel: the patched kernel (a built kernel's name)
  workload::Scenario scenario;  // scaled already (ScaleScenario)
  int runs = 3;                 // boots per column
  uint64_t memcg_bytes = 32ull << 20;
  std::string keep_dir;
};
inline constexpr int kMaxChurnRuns = 20;
// The share of seed 003's sizes a guest runs by default: 256 MiB of zram
// for the 8G table, 47 processes of the seed's sizes (8..56 MiB).
inline constexpr double kNonfullVmScale = 1.0 / 32;
struct NonfullTableReport {
  NonfullTableOptions options;
  ChurnLoad load;
  uint64_t zram_bytes = 0;
  std::vector<unsigned> mthp_kb;
  std::vector<NonfullColumn> columns;
  std::vector<std::vector<ChurnVmResult>> kernel;  // [column][run]
  // The model's medians: row ("64kB swpout", ...) -> column label -> value.
  std::map<std::string, std::map<std::string, double>> model;
  std::vector<std::string> rows;  // the scenario's rows, in order
};
// The rows of one kernel run, named as the scenario's ("64kB swpout",
// "64kB swpout_fallback", "64kB failure rate %", the same for each size).
std::map<std::string, double> KernelRows(const ChurnVmResult& r);
// Every column x run, then the model. -EINVAL for a scenario without one
// build-churn step and two variants, runs outside 1..kMaxChurnRuns or a
// kernel without swapfile.prefer_nonfull; the first error ends it.
// `done(k, n)` after the k-th of n boots (may be null).
Result<NonfullTableReport> RunNonfullTable(
    const NonfullTableOptions& o, const volatile std::sig_atomic_t* interrupted,
    const std::function<void(size_t, size_t)>& done = nullptr);

}  // namespace swaplab::vm
#pragma GCC visibility pop
