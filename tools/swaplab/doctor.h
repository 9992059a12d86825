// SPDX-License-Identifier: MIT
// `swaplab doctor`: whether and why this machine can hibernate and resume,
// read from the running system (kernel/doctor.h); changes nothing.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace swaplab::tools {

struct DoctorCmdOptions {
  bool json = false;
  std::string image_size;  // --image-size SIZE; empty: estimated
  std::string root;        // --root DIR: a copy of another machine's /proc, /sys, /dev
  std::string map;         // --map FILE.svg: the areas' clusters and the predicted image
  bool force = false;      // --map may replace an existing file
  bool no_layout = false;  // --no-layout: no page tables read, no image modelled
};

CLI::App* AddDoctor(CLI::App& app, DoctorCmdOptions& o);
// 0 no finding of error level, 1 at least one, 2 bad usage.
int RunDoctor(const DoctorCmdOptions& o);

}  // namespace swaplab::tools
