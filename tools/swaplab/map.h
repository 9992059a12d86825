// SPDX-License-Identifier: MIT
// `swaplab map`: a device's clusters as an SVG picture (report/cluster_map.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"

namespace swaplab::tools {

struct MapOptions {
  std::string source;    // an AREA or a TRACE file
  std::string scenario;  // --scenario NAME|FILE
  std::string variant;   // --variant LABEL (default: every variant)
  std::string at;        // --at aging|before|after
  double scale = 1.0;
  uint64_t at_record = 0;
  int64_t dev = -1;
  std::string policy{alloc::kDefaultPreset};
  std::vector<std::string> knobs;
  int cpus = 4;
  int cluster_shift = 9;
  std::string memory_limit;  // trace: --memory-limit SIZE ("": MemAvailable)
  std::string out;
  bool force = false;  // -o may replace an existing file (never the input or an area)
  uint64_t cells = 16384;
  bool no_runs = false;
};

CLI::App* AddMap(CLI::App& app, MapOptions& o);
int RunMap(const MapOptions& o);

}  // namespace swaplab::tools
