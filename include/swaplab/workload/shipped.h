// SPDX-License-Identifier: MIT
// The scenarios shipped under scenarios/, compiled into the library (CMake
// generates the table), and scaling a scenario down for quick runs.
#pragma once
#pragma GCC visibility push(default)

#include <string>
#include <vector>

#include "swaplab/workload/scenario.h"

namespace swaplab::workload {

struct ShippedScenario {
  const char* file;  // "scenarios/rfc-shuffled.json"
  const char* json;
};
// In file-name order.
const std::vector<ShippedScenario>& ShippedScenarios();

// Multiplies every size that sets the scale of a scenario by `f` (device
// sizes, regions, image sizes, swap-out totals, churn process counts (not
// their sizes), usemem sizes and limits, rotation allocations), keeping
// folio and hole sizes;
// sizes stay whole clusters (devices) or whole folios (regions).
void ScaleScenario(Scenario& sc, double f);

}  // namespace swaplab::workload
#pragma GCC visibility pop
