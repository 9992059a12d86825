// SPDX-License-Identifier: MIT
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swaplab::tools {

struct TraceCmdOptions {
  std::string in, out;
  std::string to;  // text | binary ("": the other one than the input's)
  bool force = false;
};
struct TraceCommands {
  CLI::App* trace = nullptr;
  CLI::App* convert = nullptr;
};

TraceCommands AddTrace(CLI::App& app, TraceCmdOptions& o);
int RunTrace(const TraceCommands& c, const TraceCmdOptions& o);

}  // namespace swaplab::tools
