// SPDX-License-Identifier: MIT
// One trace replayed on the model: the records applied to a fresh
// SwapSystem by a TraceRunner (design.md "The trace format"), with the
// system's counters, each device's cluster lists and the invariant check at
// the end. `swaplab replay` reports it; `kernel run` compares a kernel's
// placements (the trace it wrote back with `expect` lines) with it.
// ReplayTrace is the loop itself, for every caller that replays a trace:
// Replay, the cluster map of a trace (report/) and the model side of a vm
// run (vm/) watch it through a ReplayObserver.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::workload {

inline constexpr int kDefaultReplayCpus = 4;

struct ReplayOptions {
  std::string trace;
  alloc::Policy policy;
  // CPUs in the model; 0: the trace's `cpus` record (the machine it was
  // recorded on, `kernel run`), else kDefaultReplayCpus.
  int cpus = 0;
  int cluster_shift = alloc::kDefaultClusterShift;
  bool check = false;  // Replay: CheckInvariants after every record (slow)
  // SystemOptions::scan_base_seed: the model's random draws (linux-6.1).
  uint64_t scan_base_seed = 0;
  // TraceRunner::set_memory_limit: bytes the model may take (0: MemAvailable).
  uint64_t memory_limit = 0;
};

// A device of the trace at the end of the replay.
struct ReplayDevice {
  uint64_t dev = 0;  // the trace's dev=
  int type = -1;     // the model's swap type
  alloc::DeviceInfo info;
};

struct ReplayResult {
  ReplayOptions options;  // cpus: the model's, as resolved
  uint64_t cluster_size = 0;
  ReplaySummary summary;
  alloc::SwapCounters counters;
  std::vector<ReplayDevice> devices;  // in trace dev order
  std::string invariants;             // CheckInvariants() at the end
  bool invariants_ok = true;
  // With `check`: "FILE:LINE: invariant ... broken after 'RECORD'"; the
  // replay stopped at that record and the rest of the result is not filled.
  std::string check_failed;
};

// A replay under way and after it: the model, the runner that drives it and
// the records applied so far.
struct ReplayState {
  std::unique_ptr<alloc::SwapSystem> sys;
  std::unique_ptr<TraceRunner> runner;
  uint64_t records = 0;
};

// Watches a replay (ReplayTrace): told after each record is applied, with
// the model as that record left it.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  // `rec` was the state.records-th record. False stops the replay there:
  // the records after it are not read.
  virtual bool AfterRecord(const TraceRecord& rec, const ReplayState& state) = 0;
};

// The replay loop: checks o.policy, opens o.trace and reads its first record
// (a `cpus` record sizes the model when o.cpus is 0, else
// kDefaultReplayCpus), makes the system and its runner in *state
// (o.cluster_shift, o.scan_base_seed, o.memory_limit), then applies the
// records in order, telling `observer` (null: none) after each. o.check is
// Replay's. Errors: the trace cannot be read or a record applied
// (FILE:LINE: ...), invalid options; state->records then counts the
// records applied before.
Status ReplayTrace(const ReplayOptions& o, ReplayState* state, ReplayObserver* observer = nullptr);

// Runs every record of o.trace. A trace that cannot be read or applied
// (FILE:LINE: ...) and an invalid policy are errors.
Result<ReplayResult> Replay(const ReplayOptions& o);

// Contiguous slot runs per allocated folio; 0 without folios.
double RunsPerFolio(const ReplaySummary& s);
// agree / expected; 1 without expect lines.
double Agreement(const ReplaySummary& s);

}  // namespace swaplab::workload
#pragma GCC visibility pop
