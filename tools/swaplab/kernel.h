// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"

namespace swaplab::tools {

struct KernelOptions {
  std::string trace;
  std::string device = "loop-ssd";
  std::string size;  // pages, or bytes with K/M/G
  std::string out;
  std::string policy{alloc::kDefaultPreset};
  std::vector<std::string> knobs;  // --knob NAME=VALUE
  int prio = 10000;
  int timeout_s = 300;
  bool json = false;
  bool annotate = false;
  bool pageout_each = false;
  bool floor = false;
  int reruns = 4;
  std::string progress = "auto";  // run: --progress always|never|auto
};

struct KernelCommands {
  CLI::App* kernel = nullptr;
  CLI::App* run = nullptr;
  CLI::App* cleanup = nullptr;
};

KernelCommands AddKernel(CLI::App& app, KernelOptions& o);
int RunKernel(const KernelCommands& c, const KernelOptions& o);

}  // namespace swaplab::tools
