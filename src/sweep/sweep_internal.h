// SPDX-License-Identifier: MIT
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

// A point id is 16 lower-case hex digits (it becomes a file name).
bool ValidId(const std::string& id);
// A heatmap's name becomes heatmap-NAME.svg: [a-z0-9_-]{1,64}.
inline constexpr size_t kMaxHeatmapName = 64;
bool ValidHeatmapName(const std::string& name);
// Distinct metrics of a point result (and of a merged table).
inline constexpr size_t kMaxMetrics = 4096;

// The schema of each file of a sweep directory (files.cc), checked whole
// before any of it is used: -EINVAL "FILE: $.json.path: what".
Status CheckSweepDoc(const nlohmann::json& doc, const std::string& file);
Status CheckPointInput(const nlohmann::json& input, const std::string& file, const std::string& id);
Status CheckPointResult(const nlohmann::json& result, const std::string& file,
                        const std::string& id);
// DIR/points/ID.json read and checked: -ENOENT when absent, -EINVAL when
// it is not a complete result of point `id`.
Result<nlohmann::json> ReadPointResult(const std::string& dir, const std::string& id);

}  // namespace swaplab::sweep
