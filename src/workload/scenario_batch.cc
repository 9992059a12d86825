// SPDX-License-Identifier: MIT
// Several scenarios in one go (scenario_batch.h).
#include "swaplab/workload/scenario_batch.h"

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "swaplab/workload/shipped.h"
#include "swaplab/workload/temp_files.h"
#include "workload/scenario_run.h"
#include "workload/steps.h"
#include "workload/workers.h"

namespace swaplab::workload {

namespace {

// A job's length, roughly: the pages its steps swap out (every job of a
// scenario does the same work).
uint64_t JobWork(const Scenario& sc) {
  uint64_t w = 0;
  for (const Step& s : sc.aging) w += WorkPages(s);
  for (const Step& s : sc.measured) w += WorkPages(s);
  return w;
}

// The jobs of the scenarios that may share the machine, on o.jobs threads:
// the serial lane (scenarios whose jobs share a real swap file, in order,
// one job at a time) is taken first by whichever thread is free, so it
// never waits; the other jobs go longest first, so the last to finish is
// a short one.
class JobBoard {
 public:
  JobBoard(std::vector<std::unique_ptr<ScenarioRun>>& runs, const std::vector<size_t>& members)
      : runs_(runs) {
    for (size_t i : members) {
      const uint64_t work = JobWork(runs[i]->scenario());
      for (size_t j = 0; j < runs[i]->jobs(); ++j) {
        if (runs[i]->Serial())
          lane_.push_back({i, j});
        else
          pool_.push_back({i, j, work});
      }
    }
    std::stable_sort(pool_.begin(), pool_.end(),
                     [](const Task& a, const Task& b) { return a.work > b.work; });
  }

  void Work() {
    for (;;) {
      Task t;
      bool lane;
      {
        std::lock_guard<std::mutex> g(mu_);
        if (failed_) return;
        lane = !lane_busy_ && next_lane_ < lane_.size();
        if (lane) {
          t = lane_[next_lane_++];
          lane_busy_ = true;
        } else if (next_pool_ < pool_.size()) {
          t = pool_[next_pool_++];
        } else {
          return;  // the lane, if busy, is its runner's to finish
        }
      }
      try {
        runs_[t.run]->RunJob(t.job);
      } catch (...) {  // out of memory: the others stop too (RunWorkers rethrows)
        std::lock_guard<std::mutex> g(mu_);
        failed_ = true;
        throw;
      }
      std::lock_guard<std::mutex> g(mu_);
      if (lane) lane_busy_ = false;
      failed_ = failed_ || !runs_[t.run]->JobOk(t.job);
    }
  }

 private:
  struct Task {
    size_t run = 0, job = 0;
    uint64_t work = 0;
  };
  std::vector<std::unique_ptr<ScenarioRun>>& runs_;
  std::vector<Task> lane_, pool_;
  std::mutex mu_;
  size_t next_lane_ = 0, next_pool_ = 0;
  bool lane_busy_ = false, failed_ = false;
};

}  // namespace

Result<std::vector<ScenarioResult>> RunScenarios(const std::vector<Scenario>& scenarios,
                                                 const RunOptions& ro) {
  InstallTempFileCleanup();  // a real-file device's area goes on Ctrl-C too
  // The image writer allocates and frees a private copy per page in
  // flight: keep freed memory in the process instead of returning it to
  // the kernel and faulting it in again (a third of the time otherwise).
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::vector<std::optional<Result<ScenarioResult>>> out(scenarios.size());
  // Scenarios that measure throughput on several threads run alone, first.
  std::vector<size_t> shared;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const auto& sc = scenarios[i];
    if (ro.jobs > 1 && (sc.parallel || sc.devices[0].real_file)) {
      shared.push_back(i);
      continue;
    }
    if (ro.progress) ro.progress(sc.name + ": seed " + std::to_string(sc.seed) + "\n");
    out[i] = RunScenario(sc, ro);
    if (!out[i]->ok()) break;
  }
  bool failed = false;
  for (const auto& r : out) failed = failed || (r && !r->ok());
  if (!failed && !shared.empty()) {
    std::vector<std::unique_ptr<ScenarioRun>> runs(scenarios.size());
    bool prepared = true;
    for (size_t i : shared) {
      auto r = ScenarioRun::Prepare(scenarios[i], ro);
      if (!r.ok()) {  // nothing runs: the batch ends with this error
        out[i] = r.status();
        prepared = false;
        break;
      }
      runs[i] = std::move(r).value();
    }
    if (prepared) {
      JobBoard board(runs, shared);
      RunWorkers(ro.jobs, [&board] { board.Work(); });
      for (size_t i : shared)  // a scenario stopped by another's error has none
        if (runs[i]->Settled()) out[i] = runs[i]->Finish();
    }
  }
  std::vector<ScenarioResult> results;
  for (auto& r : out) {
    if (!r) continue;
    if (!r->ok()) return r->status();
    results.push_back(std::move(*r).value());
  }
  return results;
}

Result<std::vector<Scenario>> ShippedInReportOrder() {
  std::vector<Scenario> all;
  for (const auto& s : ShippedScenarios()) {
    auto sc = ParseScenario(s.json, s.file);
    if (!sc.ok()) return sc.status();
    all.push_back(*sc);
  }
  // The seeds' priority order; real-I/O tables right after their models.
  static const std::vector<std::string> kGroups = {"rfc-shuffled",    "rfc-holes",
                                                   "nonfull-vs-free", "slot-cache-vs-percpu",
                                                   "rfc-open-cases",  "rfc-review"};
  auto rank = [&](const Scenario& sc) {
    return std::find(kGroups.begin(), kGroups.end(), sc.group) - kGroups.begin();
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return all;
}

}  // namespace swaplab::workload
