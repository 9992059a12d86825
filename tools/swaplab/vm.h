#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "swaplab/workload/host_cpu.h"

namespace swaplab::tools {

struct VmCmdOptions {
  std::string layout = "fresh";
  std::string swap = "128M";
  std::string image = "64M";
  std::string compress = "lzo";
  bool resume = false;
  bool json = false;
  std::string kernel, modules, append, accel = "auto", keep, policy = "linux-6.12", agent;
  int mem_mib = 384, smp = 1, timeout_s = 300;
  bool rotational = false;
  uint64_t seed = 1;
  std::string progress = "auto";   // --progress always|never|auto
  std::vector<std::string> knobs;  // --knob NAME=VALUE
  // vm run
  std::string run_trace, run_device = "loop-ssd", run_out, run_policy;
  int run_reruns = 0, run_smp = 2;
  bool run_annotate = false;
};

struct VmCommands {
  CLI::App* vm = nullptr;
  CLI::App* hibernate = nullptr;
  CLI::App* run = nullptr;
};

VmCommands AddVm(CLI::App& app, VmCmdOptions& o);
int RunVm(const VmCommands& c, const VmCmdOptions& o);
// `reproduce --vm`: seed 001's two layouts at `scale` (cpu: the prices
// added to the model's seconds, or nullptr; progress: --progress).
int RunReproduceVm(double scale, const std::string& accel, const workload::HostCpuCost* cpu,
                   bool json, const std::string& progress);

}  // namespace swaplab::tools
