// Several scenarios in one go (`swaplab run`, `swaplab reproduce`): which
// run alone and which side by side, and the order `reproduce` shows the
// shipped ones in.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/workload/scenario.h"
#include "swaplab/workload/scenario_runner.h"

namespace swaplab::workload {

// Scenarios that measure wall time (a real swap file, or not `parallel`)
// run alone, one after another, with o.jobs variants at once. The others
// (modelled seconds and counts only) run whole on o.jobs threads, one job
// each, largest devices first: three variants on two threads leave a core
// idle a third of the time; whole scenarios side by side keep both busy.
// Results in the scenarios' order; the first error stops the batch. Each
// scenario run alone is announced through o.progress ("NAME: seed S\n").
// The scenarios must outlive the results (ScenarioResult::scenario).
Result<std::vector<ScenarioResult>> RunScenarios(const std::vector<Scenario>& scenarios,
                                                 const RunOptions& o);

// The shipped scenarios parsed, in the order `reproduce` reports them: the
// seeds' experiments by priority, real-I/O tables right after their models.
// An error is a bug: the files are part of the program.
Result<std::vector<Scenario>> ShippedInReportOrder();

}  // namespace swaplab::workload
#pragma GCC visibility pop
