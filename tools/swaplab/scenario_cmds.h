// SPDX-License-Identifier: MIT
// `swaplab run SCENARIO.json` and `swaplab reproduce [NAME]`: scenarios
// (workload/scenario.h) printed by the report layer.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/area/io_engine_factory.h"
#include "swaplab/workload/host_cpu.h"
#include "swaplab/workload/scenario.h"

namespace swaplab::tools {

struct ScenarioCmdOptions {
  std::vector<std::string> files;  // run
  std::string name;                // reproduce: one group or scenario
  bool json = false, csv = false;
  std::string out_dir;            // reproduce: also write files here
  std::string progress = "auto";  // --progress always|never|auto (auto: stderr is a TTY)
  std::string html_dir;           // --html: also write DIR/index.html (tables, plots, cluster maps)
  double scale = 1.0;
  int jobs = 2;
  bool list = false;
  bool full = false;  // reproduce: the seeds' sizes with page data made and checked (slow)
  // reproduce: each scenario's reduced reproduce_scale, page data checked.
  bool check_data = false;
  // run: image steps on simulated devices carry no data (reproduce's default).
  bool structural = false;
  // "none" or "W,R,A" (µs per write bio, read bio, allocator call): the
  // host CPU prices of every scenario with an image on simulated devices.
  std::string host_cpu;
  std::vector<std::string> knobs;  // run: --knob NAME=VALUE, applied to every variant
  // reproduce --vm: seed 001's layouts on a real kernel in qemu.
  bool vm = false;
  double vm_scale = 1.0 / 64;
  bool vm_scale_set = false;  // --vm-scale given (seed 003's default differs)
  std::string accel = "auto";
  std::string vm_kernel;  // --vm --kernel NAME: seed 001's columns on a patched kernel
  int vm_runs = 3;
  area::EngineKind io = area::EngineKind::kAuto;  // --io: real-file devices' engine
};

CLI::App* AddRun(CLI::App& app, ScenarioCmdOptions& o);
CLI::App* AddReproduce(CLI::App& app, ScenarioCmdOptions& o);
int RunRun(const ScenarioCmdOptions& o);
int RunReproduce(const ScenarioCmdOptions& o);

// Shared by run and reproduce (scenario_cmds.cc): the scenarios scaled,
// run (workload::RunScenarios) and printed; the exit code.
int RunAll(std::vector<workload::Scenario>& scenarios, const ScenarioCmdOptions& o, bool reproduce);
// --host-cpu: the prices (none: the option is absent or wrong; the message
// is printed).
std::optional<std::optional<workload::HostCpuCost>> HostCpuOption(const ScenarioCmdOptions& o,
                                                                  const char* cmd);

}  // namespace swaplab::tools
