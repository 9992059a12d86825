// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace swaplab::tools {

struct DemoOptions {
  std::string policy;              // empty: every preset
  std::vector<std::string> knobs;  // --knob NAME=VALUE, applied to each
  uint64_t size_mib = 1024;
  uint64_t seed = 1;
  uint64_t ops = 100000;
  bool json = false;
  bool all_policies = false;
};

CLI::App* AddDemo(CLI::App& app, DemoOptions& o);
int RunDemo(const DemoOptions& o);

}  // namespace swaplab::tools
