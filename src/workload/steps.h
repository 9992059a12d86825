// SPDX-License-Identifier: MIT
// The generator table's generic side. A generator of scenario steps is one
// alternative of Step (scenario.h) and one row, its StepRow, in steps.cc:
// its name in scenario files, the keys it reads and checks, how
// `--scale` / reproduce_scale shrink it, the pages it needs on the device,
// and how it runs and what it measures. Parsing by name, naming, scaling,
// the size check and running are generic over Step, so an alternative
// without a complete row does not compile.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/workload/scenario.h"
#include "swaplab/workload/scenario_runner.h"
#include "workload/scenario_reader.h"

namespace swaplab::workload {

// Metrics of one job, in the order produced.
struct Sample {
  std::vector<std::pair<std::string, double>> values;
  std::map<std::string, MetricKind> kinds;
  std::string image_io;  // device 0's engine when it is a real file (IoEngine::description)
  void Add(const std::string& name, double v, MetricKind k) {
    values.emplace_back(name, v);
    kinds[name] = k;
  }
};

// What a step runs on: one job (a variant's repetition) of a scenario.
struct StepRun {
  Workload& w;
  alloc::SwapSystem& sys;
  const Scenario& sc;
  const VariantSpec& v;
  int rep = 0;
  area::IoEngine* engine = nullptr;  // device 0's (image steps)
  int type0 = -1;                    // device 0's swap type
  bool structural = false;           // image steps skip page contents
  Sample* out = nullptr;             // the step's metrics
  // Image steps: the writer's placement goes here (JobPhase "after").
  std::vector<uint64_t>* image_stream = nullptr;
  std::vector<uint64_t>* image_map = nullptr;
};

// Parses the step at `path` by its "generator" name; `cpus` bounds its
// "cpus". -EINVAL "FILE: $.path: what was wrong".
Result<Step> ParseStep(const ScenarioReader& r, const nlohmann::json& j, const std::string& path,
                       int cpus);
// Pages the step leaves swapped out at most (the size check), and the key
// that states them (".region", ".size").
uint64_t PagesNeeded(const Step& s);
const char* PagesKey(const Step& s);
// Pages the step swaps out in all, roughly: its share of a job's length,
// for running the longest jobs first.
uint64_t WorkPages(const Step& s);
// v·f rounded to a multiple of `unit`, at least one unit.
uint64_t Scaled(uint64_t v, double f, uint64_t unit);
// Scales the step's sizes by f (ScaleScenario).
void ScaleStep(Step& s, double f);
// Runs the step; its metrics go to run.out.
Status RunStep(const Step& s, StepRun& run);

}  // namespace swaplab::workload
