// SPDX-License-Identifier: MIT
// One scenario's run split into its jobs (one per variant and repetition),
// so that a batch can spread the jobs of several scenarios over its
// threads. RunScenario (scenario_runner.h) is Prepare, every job, Finish.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/workload/scenario_runner.h"
#include "swaplab/workload/temp_files.h"
#include "workload/steps.h"

namespace swaplab::workload {

class ScenarioRun {
 public:
  // Creates and formats the real swap file of a file-backed device 0
  // (labelled; removed when the run is destroyed, and on every exit path
  // but SIGKILL).
  static Result<std::unique_ptr<ScenarioRun>> Prepare(const Scenario& sc, const RunOptions& o);
  // Jobs in rep-major order (every variant of repetition 0 first), so
  // variants measured one after another see the same machine.
  size_t jobs() const { return jobs_.size(); }
  const Scenario& scenario() const { return sc_; }
  // Runs job i; jobs of one run may run on several threads at once unless
  // they share a real swap file (Serial()).
  void RunJob(size_t i);
  // Jobs must run one at a time: they share a real swap file.
  bool Serial() const { return sc_.devices[0].real_file; }
  // Job i has run without an error.
  bool JobOk(size_t i) const { return jobs_[i].ran && jobs_[i].status.ok(); }
  // Every job has run, or one has failed: Finish has a result to give.
  bool Settled() const;
  // The results once every job has run; the first failed job's error.
  // wall_seconds is the sum of the jobs' own seconds (the run's length
  // when its jobs ran one after another).
  Result<ScenarioResult> Finish();

 private:
  ScenarioRun(const Scenario& sc, const RunOptions& o) : sc_(sc), o_(o) {}
  struct Slot {
    size_t variant = 0;
    int rep = 0;
    Status status = Status(-EINTR, "not run");
    Sample sample;
    double seconds = 0;
    bool ran = false;
  };
  const Scenario& sc_;
  RunOptions o_;
  std::optional<TempFile> temp_;
  std::vector<Slot> jobs_;
};

}  // namespace swaplab::workload
