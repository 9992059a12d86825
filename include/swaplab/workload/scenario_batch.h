// SPDX-License-Identifier: MIT
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

// Scenarios that measure throughput on several threads (not `parallel`)
// run alone first, one after another. The jobs (variant × repetition) of
// all the others share o.jobs threads: those of scenarios on a real swap
// file one at a time and in order (they share the file; a free thread
// takes the next one first, so this serial lane never waits), the rest
// longest first (steps' WorkPages), so every thread stays busy to the end.
// A real-file job's measured seconds are therefore taken while the other
// threads run simulated jobs. Results in the scenarios' order; the first
// error stops the batch. Each scenario run alone is announced through
// o.progress ("NAME: seed S\n"). The scenarios must outlive the results
// (ScenarioResult::scenario).
Result<std::vector<ScenarioResult>> RunScenarios(const std::vector<Scenario>& scenarios,
                                                 const RunOptions& o);

// The shipped scenarios parsed, in the order `reproduce` reports them: the
// seeds' experiments by priority, real-I/O tables right after their models.
// An error is a bug: the files are part of the program.
Result<std::vector<Scenario>> ShippedInReportOrder();

}  // namespace swaplab::workload
#pragma GCC visibility pop
