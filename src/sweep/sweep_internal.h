// SPDX-License-Identifier: MIT
// What the sweep's files share, and what its tests and fuzz targets use
// (not part of include/swaplab/sweep/sweep.h's interface).
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "swaplab/sweep/sweep.h"
#include "swaplab/workload/scenario.h"

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

// The command that made the sweep of DIR/sweep.json (a generic one for a
// directory made before sweep.json kept it).
std::string Command(const nlohmann::json& sweep);

// Ownership (owner.cc). DIR/.swaplab-sweep marks a directory as a sweep's:
// written first, before any other file, and the file a run locks.
inline constexpr const char* kMarker = ".swaplab-sweep";
// Creates DIR (or takes an empty one) with its marker; a directory that
// holds files but no marker is refused, -EEXIST, nothing written.
Status ClaimDir(const std::string& dir);
// -EINVAL unless DIR has its marker (merge, emit and point write into DIR).
Status CheckOwned(const std::string& dir);
// ClaimDir, then an exclusive flock on the marker, held by the returned
// descriptor until it is closed (or the process ends); -EBUSY when another
// sweep holds it.
Result<int> LockSweep(const std::string& dir);
// Whether a sweep holds DIR's lock now (a shared flock probe of the
// marker): merge then says that the table is of the points done so far.
bool SweepRunning(const std::string& dir);
// Whether DIR/points/ID.json is a complete, parseable result of point ID.
bool PointDone(const std::string& dir, const std::string& id);
// Checks DIR/joblog before parallel --resume-failed trusts it: when a line
// it counts as done is another job's, or names a point without a complete
// result, the joblog is moved to DIR/joblog.stale (so every point without
// a result runs again; `sweep point` skips the others) and the returned
// message says why; "" when it was kept.
Result<std::string> RetireStaleJoblog(const std::string& dir, const std::vector<std::string>& ids);

// Writes `content` to `path` through PATH.tmp.PID and rename(2).
Status WriteAtomic(const std::string& path, const std::string& content);

// DIR as an absolute path (realpath(3)); DIR as given when it cannot be
// resolved.
std::string Absolute(const std::string& dir);

}  // namespace swaplab::sweep
