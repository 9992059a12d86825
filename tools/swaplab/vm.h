// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "scenario_cmds.h"
#include "swaplab/area/io_engine_factory.h"
#include "swaplab/vm/qemu.h"
#include "swaplab/workload/host_cpu.h"
#include "swaplab/workload/scenario.h"
#include "vm_kernel.h"

namespace swaplab::tools {

struct VmCmdOptions {
  std::string layout = "fresh";
  std::string swap = "128M";
  std::string image = "64M";
  std::string compress = "lzo";
  bool resume = false;
  bool json = false;
  std::string kernel, modules, append, accel = "auto", keep, policy{vm::kGuestPreset}, agent;
  int mem_mib = 384, smp = 1, timeout_s = 300;
  bool rotational = false;
  uint64_t seed = 1;
  std::string progress = "auto";                  // --progress always|never|auto
  std::vector<std::string> knobs;                 // --knob NAME=VALUE
  std::string model_source = "base";              // --model-source: the model's image slot source
  area::EngineKind io = area::EngineKind::kAuto;  // --io: reads the guest's image off its disk
  // vm run
  std::string run_trace, run_device = "loop-ssd", run_out, run_policy;
  int run_reruns = 0, run_smp = 2;
  bool run_annotate = false;
  bool run_floor = false;
  VmKernelOptions kernel_build;  // vm kernel build | list
};

struct VmCommands {
  CLI::App* vm = nullptr;
  CLI::App* hibernate = nullptr;
  CLI::App* run = nullptr;
  VmKernelCommands kernel;
};

VmCommands AddVm(CLI::App& app, VmCmdOptions& o);
int RunVm(const VmCommands& c, const VmCmdOptions& o);
// `reproduce --vm`: seed 001's two layouts at o.vm_scale, the guest's
// image read off its disk with the engine o.io names (cpu: the prices
// added to the model's seconds, or nullptr). o: reproduce's options.
int RunReproduceVm(const ScenarioCmdOptions& o, const workload::HostCpuCost* cpu);
// `reproduce --vm --kernel NAME`: seed 001's columns, each a boot of the
// patched kernel o.vm_kernel with its parameters, o.vm_runs times per cell
// (cpu: the prices of the model's "+ host CPU" rows, or nullptr).
int RunReproduceVmColumns(const ScenarioCmdOptions& o, const workload::HostCpuCost* cpu);
// `reproduce NAME --vm --kernel NAME`: seed 003's scenario `sc` at
// o.vm_scale when given (else kNonfullVmScale) on the patched kernel,
// prefer_nonfull=0 vs 1; o.out_dir: also report.txt and report.json there.
int RunReproduceVmNonfull(const workload::Scenario& sc, const ScenarioCmdOptions& o);

}  // namespace swaplab::tools
