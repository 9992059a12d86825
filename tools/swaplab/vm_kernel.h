// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace swaplab::tools {

struct VmKernelOptions {
  std::string source = "6.12";
  std::vector<std::string> patches, series, fragments;
  std::string name;
  int jobs = 0;
  bool check = false;
  bool cached_only = false;
  std::string progress = "auto";
};

struct VmKernelCommands {
  CLI::App* kernel = nullptr;
  CLI::App* build = nullptr;
  CLI::App* list = nullptr;
};

// `vm kernel build` and `vm kernel list` under `vm`.
VmKernelCommands AddVmKernel(CLI::App* vm, VmKernelOptions& o);
// Runs scripts/vm-kernel-build (it replaces this process); returns only
// when the script cannot be started.
int RunVmKernel(const VmKernelCommands& c, const VmKernelOptions& o);

}  // namespace swaplab::tools
