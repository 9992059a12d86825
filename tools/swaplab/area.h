// SPDX-License-Identifier: MIT
// `swaplab area format|inspect`: mkswap-compatible swap areas on files and
// block devices.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "swaplab/alloc/status.h"

namespace swaplab::tools {

struct AreaOptions {
  std::string path;
  // format
  std::string size;  // bytes, or with a K/M/G/T suffix (KiB, MiB, ...)
  std::string label;
  std::string uuid;
  std::string bad;     // "5,9,100-103"
  bool force = false;  // write over another signature (never a mounted / swapped-on target)
  // inspect (and format's report)
  bool json = false;
  bool csv = false;
  uint64_t max_extents = 16;  // extents listed in the text output
};

struct AreaCommands {
  CLI::App* area = nullptr;
  CLI::App* format = nullptr;
  CLI::App* inspect = nullptr;
};

AreaCommands AddArea(CLI::App& app, AreaOptions& o);
// Runs whichever of format / inspect was parsed. Exit codes (README.md,
// "Exit codes"): 0 success; 1 the run or the checked object failed (I/O
// error, an area swapon would refuse — inspect still prints its report —,
// locked, swapped on, mounted, a signature format will not overwrite);
// 2 bad usage or input that cannot be used at all (bad option, missing
// path, EACCES, ELOOP, not a regular file or a block device).
int RunArea(const AreaCommands& c, const AreaOptions& o);
// The exit code for a failed area / image write step, by errno (above).
int AreaExitCode(const Status& s);

}  // namespace swaplab::tools
