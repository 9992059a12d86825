// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"

namespace swaplab::tools {

struct ReplayOptions {
  std::string trace;
  std::string policy{alloc::kDefaultPreset};
  std::vector<std::string> knobs;  // --knob NAME=VALUE
  int cpus = 0;                    // 0: the trace's `cpus` record, else 4
  int cluster_shift = 9;
  bool json = false;
  bool csv = false;
  bool check = false;  // CheckInvariants after every record
  uint64_t scan_base_seed = 0;
  std::string memory_limit;  // --memory-limit SIZE ("": the machine's MemAvailable)
};

CLI::App* AddReplay(CLI::App& app, ReplayOptions& o);
int RunReplay(const ReplayOptions& o);

}  // namespace swaplab::tools
