// SPDX-License-Identifier: MIT
// `swaplab sweep SPEC --out DIR` and its subcommands point, merge and emit
// (include/swaplab/sweep/sweep.h, docs/sweeps.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swaplab::tools {

struct SweepOptions {
  std::string spec, out, dir, id, engine, html;
  int jobs = 2;
  double scale = 1.0;
  std::string progress = "auto";  // --progress always|never|auto: parallel's --bar
  bool prepare = false, csv = false, json = false;
};
struct SweepCommands {
  CLI::App *sweep, *point, *merge, *emit;
};

SweepCommands AddSweep(CLI::App& app, SweepOptions& o);
int RunSweep(const SweepCommands& c, const SweepOptions& o);

}  // namespace swaplab::tools
