// SPDX-License-Identifier: MIT
// Sweeps (docs/sweeps.md): one scenario run at many points. A spec names a
// base scenario and axes (a scenario field by JSON pointer, a policy knob,
// the seed), combined as a grid or a list; each point is an ordinary
// scenario run with a stable id, its result one JSON file under the sweep's
// directory, so a sweep resumes where it stopped and never runs a point
// twice. The points run on an existing engine: GNU parallel here, parallel
// over ssh or a Slurm job array elsewhere.
//
// Directory layout:
//   DIR/sweep.json      the expanded sweep: spec, scale, points (id, axes)
//   DIR/jobs.txt        point ids, one a line, in expansion order (the job
//                       list of parallel and the Slurm array's index → id)
//   DIR/in/ID.json      what `sweep point DIR ID` runs: the point's scenario
//   DIR/points/ID.json  its result: axes, metrics, CPU and wall seconds
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::sweep {

// Bounds checked before they size anything.
inline constexpr uint64_t kMaxPoints = 100000;
inline constexpr uint64_t kMaxAxisValues = 10000;
inline constexpr size_t kMaxAxes = 16;
inline constexpr uint64_t kMaxHeatmapCells = 10000;

struct Axis {
  enum class Kind { kPath, kKnob, kSeed };
  std::string name;
  Kind kind = Kind::kPath;
  std::string path;     // kPath: a JSON pointer into the base scenario
  std::string knob;     // kKnob: a knob of alloc::Policy
  std::string variant;  // kKnob: one variant's label ("": every variant)
  std::vector<nlohmann::json> values;
  // kPath with numeric values: the field gets value * multiply, followed
  // by suffix when there is one ("G": a size).
  double multiply = 1.0;
  std::string suffix;
};

struct Point {
  std::string id;        // 16 hex digits: FNV-1a of the canonical input
  nlohmann::json axes;   // axis name → value, as listed in the spec
  nlohmann::json input;  // DIR/in/ID.json
};

struct Sweep {
  nlohmann::json spec;  // as read, with "base" resolved to the scenario
  std::string name;
  double scale = 1.0;  // the spec's scale × the command line's
  bool structural = true;
  std::vector<Axis> axes;
  std::vector<Point> points;  // expansion order
  std::string command;        // what makes it (`swaplab sweep SPEC --out DIR ...`), if known
};

// Reads and expands a spec. `file` names it in messages and anchors a
// relative "base" path. Every point's scenario is parsed and checked (with
// its knobs) before this returns; errors are -EINVAL "FILE: what", naming
// the axis, JSON pointer or point.
Result<Sweep> ExpandSpec(const std::string& text, const std::string& file, double scale);
Result<Sweep> LoadSpec(const std::string& path, double scale);

// Writes DIR's layout (idempotent for the same sweep; a directory holding
// another sweep is refused, -EEXIST, nothing changed).
Status Prepare(const Sweep& s, const std::string& dir);

// DIR/sweep.json as written by Prepare.
Result<nlohmann::json> ReadSweep(const std::string& dir);

// Runs point `id` of DIR unless DIR/points/ID.json exists (then *ran is
// false and nothing is touched); the result is written to a temporary file
// and renamed into place.
Status RunPoint(const std::string& dir, const std::string& id, bool* ran);

// The table of DIR: one row per point with a result, in expansion order.
struct Table {
  std::vector<std::string> axes;     // axis names
  std::vector<std::string> derived;  // the spec's derived metrics
  std::vector<std::string> metrics;  // every metric of the points, sorted
  struct Row {
    std::string id;
    nlohmann::json axes;
    std::vector<double> values;  // derived then metrics; NaN: absent
    double cpu_seconds = 0, wall_seconds = 0;
  };
  std::vector<Row> rows;
  size_t points = 0;  // in the sweep (rows.size() of them have results)
  double cpu_seconds = 0;
};
Result<Table> Merge(const std::string& dir);
std::string TableCsv(const Table& t);
nlohmann::json TableJson(const Table& t);
// The spec's heatmaps of `t`: (file name, SVG document) pairs.
Result<std::vector<std::pair<std::string, std::string>>> Heatmaps(const nlohmann::json& sweep,
                                                                  const Table& t);

// The command that made the sweep of DIR/sweep.json (a generic one for a
// directory made before sweep.json kept it).
std::string Command(const nlohmann::json& sweep);

// One self-contained HTML page of `t` (`sweep merge DIR --html FILE`): the
// sweep's name and title, points, seeds and CPU-hours, the command that
// makes it, every heatmap of `maps` inline, the table (each number's exact
// value in data-v). No script, no URL.
std::string SweepHtml(const nlohmann::json& sweep, const Table& t,
                      const std::vector<std::pair<std::string, std::string>>& maps);

// `sweep emit`: the files another engine takes, written under DIR.
// parallel: DIR/commands.txt (one `SWAPLAB sweep point DIR ID` a line, in
// jobs.txt order) for `parallel --sshloginfile`; slurm: DIR/sweep.sbatch, a
// job array whose task i runs line i + 1 of jobs.txt. Returns the path.
Result<std::string> Emit(const std::string& dir, const std::string& engine,
                         const std::string& swaplab);

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

}  // namespace swaplab::sweep
