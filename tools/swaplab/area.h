// `swaplab area format|inspect`: mkswap-compatible swap areas on files and
// block devices.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace swaplab::tools {

struct AreaOptions {
  std::string path;
  // format
  std::string size;  // bytes, or with a K/M/G/T suffix (KiB, MiB, ...)
  std::string label;
  std::string uuid;
  std::string bad;  // "5,9,100-103"
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
// Runs whichever of format / inspect was parsed. Exit code as design.md
// says: 0 success, 1 the run failed, 2 bad usage or bad input.
int RunArea(const AreaCommands& c, const AreaOptions& o);

}  // namespace swaplab::tools
