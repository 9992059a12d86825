#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swaplab::tools {

struct ReplayOptions {
  std::string trace;
  std::string policy = "linux-6.18";
  int cpus = 4;
  int cluster_shift = 9;
  bool json = false;
  bool csv = false;
  bool check = false;  // CheckInvariants after every record
};

CLI::App* AddReplay(CLI::App& app, ReplayOptions& o);
int RunReplay(const ReplayOptions& o);

}  // namespace swaplab::tools
