// What the sweep's files share (not part of sweep.h's interface).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "swaplab/workload/scenario.h"
#include "sweep/sweep.h"

namespace swaplab::sweep {

// A point's input (DIR/in/ID.json) as a checked scenario with its knobs
// applied; `where` names the point in messages.
Result<workload::Scenario> PointScenario(const nlohmann::json& input, const std::string& where);

// The spec's "derived" metrics and "heatmaps" checked against its axes
// (merge.cc).
Status CheckDerivedAndHeatmaps(const nlohmann::json& spec, const std::set<std::string>& axes,
                               const std::string& file);

}  // namespace swaplab::sweep
