// SPDX-License-Identifier: MIT
// Runs a scenario: for every variant and repetition, a fresh SwapSystem
// with the scenario's devices, the aging phase, then the measured phase,
// whose metrics are collected (the report layer prints them). Repetition r
// uses seed + r for every variant, so the variants age identically.
#pragma once
#pragma GCC visibility push(default)

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/workload/scenario.h"

namespace swaplab::workload {

// How a number was obtained (design.md: never mixed in one column).
enum class MetricKind { kCount, kModelledSeconds, kMeasuredSeconds, kMeasuredRate, kPercent };
const char* Name(MetricKind k);

struct VariantResult {
  std::string label;
  std::string policy;                                  // preset name
  alloc::Policy effective_policy;                      // with the scenario's knobs
  std::vector<std::string> order;                      // metric names, first seen first
  std::map<std::string, std::vector<double>> samples;  // one per repetition
  std::map<std::string, MetricKind> kinds;
  double Median(const std::string& metric) const;  // NaN if absent
};

struct ScenarioResult {
  const Scenario* scenario = nullptr;
  std::vector<VariantResult> variants;
  // Wall time of its jobs: the scenario's run from start to end when it
  // ran alone (RunScenario), the sum of its jobs' seconds when its jobs
  // shared threads with other scenarios' (RunScenarios).
  double wall_seconds = 0;
  // Image steps ran structurally (RunOptions::structural on a simulated
  // device): runs, bios and modelled seconds, no page data made or checked.
  bool structural_image = false;
  bool has_image = false;
  // The engine a real-file device's I/O went through, as the run opened it
  // (--io and its fallback), and whose seconds the image step reports:
  // "io_uring, O_DIRECT (seconds measured, wall)", "the simulated device's
  // time over posix, O_DIRECT (seconds modelled)", ...; empty for
  // simulated devices.
  std::string image_io;
};

// A point of a job the caller may look at (cluster maps): after the aging
// phase ("aging"), and right before and after each measured image step
// ("before", "after": the image's slots are still allocated then).
struct JobPhase {
  const Scenario* scenario = nullptr;
  const VariantSpec* variant = nullptr;
  int rep = 0;
  const char* phase = "";
  const alloc::SwapSystem* sys = nullptr;
  int type0 = -1;  // device 0's swap type
  // "after": where the writer put the image on device 0 (§4.2), the dblock
  // (= slot) of each stream page and map page; empty at the other phases.
  const std::vector<uint64_t>* image_stream = nullptr;
  const std::vector<uint64_t>* image_map = nullptr;
};

struct RunOptions {
  int jobs = 2;  // variants × repetitions run on this many threads (scenario.parallel)
  // Image steps on simulated devices run structurally (ImageSpec::structural):
  // full-size images without generating, copying or checking page data.
  // Real swap files always carry and check data.
  bool structural = false;
  // Progress lines (the caller shows them only on a TTY); called from
  // every thread that runs jobs, so it must be thread-safe.
  std::function<void(const std::string&)> progress;
  // Called on the job's thread at each JobPhase; it must only read.
  std::function<void(const JobPhase&)> observe;
  // The engine of device 0 when it is a real file ("backing": "file"):
  // --io (area/io_engine_factory.h). Simulated devices ignore it.
  area::EngineKind io = area::EngineKind::kAuto;
};

// Errors: the first generator or I/O error, with the variant and step.
Result<ScenarioResult> RunScenario(const Scenario& sc, const RunOptions& o);

}  // namespace swaplab::workload
#pragma GCC visibility pop
