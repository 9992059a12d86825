// SPDX-License-Identifier: MIT
// Progress on stderr for the commands that run longer than a second
// (reproduce, run, image write / read, kernel run, vm hibernate, reproduce
// --vm): one bar class, `--progress always|never|auto` on each of them.
// stdout is never touched.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace swaplab::tools {

// `[#####---------------]  25% 1/4 jobs, 3.1 jobs/s, 0.3 s  NOTE` on one
// line of stderr, redrawn in place (carriage return). Not thread-safe: a
// caller with several threads locks around it.
class ProgressBar {
 public:
  enum class Unit { kCount, kBytes };  // bytes: MB done of total and MB/s
  // `mode`: always, never, or auto (drawn only when stderr is a terminal).
  ProgressBar(const std::string& mode, uint64_t total, std::string unit, Unit kind = Unit::kCount);
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { End(); }
  bool on() const { return on_; }
  void SetTotal(uint64_t total);
  // `done` of the total; redrawn at most ten times a second (the first
  // state and the total reached are always drawn).
  void Update(uint64_t done, const std::string& note = "");
  // The line cleared (after the run, or before an error message).
  void End();

 private:
  void Draw();
  bool on_;
  uint64_t total_, done_ = 0;
  std::string unit_, note_;
  Unit kind_;
  bool drawn_ = false, drawn_total_ = false, started_ = false;
  // t0_: the bar made (elapsed seconds); first_: the first update, the
  // start of the rate (work before it, such as building a snapshot, is
  // not counted against the rate).
  std::chrono::steady_clock::time_point t0_, first_, last_;
  uint64_t first_done_ = 0;
};

// --progress MODE on `c`, into `mode` (default auto).
void AddProgressOption(CLI::App* c, std::string& mode);
// Whether MODE asks for a bar here: always, or auto with stderr a terminal.
bool ProgressOn(const std::string& mode);

}  // namespace swaplab::tools
