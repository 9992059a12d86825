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
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

// One self-contained HTML page of `t` (`sweep merge DIR --html FILE`): the
// sweep's name and title, points, seeds and CPU-hours, the command that
// makes it, every heatmap of `maps` inline, the table (each number's exact
// value in data-v). No script, no URL.
std::string SweepHtml(const nlohmann::json& sweep, const Table& t,
                      const std::vector<std::pair<std::string, std::string>>& maps);

// `sweep emit`: the files another engine takes, written under DIR.
// parallel: DIR/commands.txt (one `SWAPLAB sweep point DIR ID` a line, in
// jobs.txt order) for `parallel --sshloginfile`; slurm: DIR/sweep.sbatch, a
// job array whose task i runs line i + 1 of jobs.txt. DIR goes into them as
// an absolute path. Returns the path.
Result<std::string> Emit(const std::string& dir, const std::string& engine,
                         const std::string& swaplab);

// `swaplab sweep SPEC --out DIR`: SPEC expanded into DIR (written and
// locked for the run) and its points run by GNU parallel, which resumes
// from DIR/joblog; `sweep point` skips a point already done.
struct RunOptions {
  std::string spec;      // the spec file
  std::string out;       // DIR
  int jobs = 2;          // points run at once
  double scale = 1.0;    // multiplies the spec's scale
  bool bar = false;      // parallel's --bar (on stderr)
  bool prepare = false;  // write DIR only (for Emit), run nothing
  std::string swaplab;   // the program parallel runs as `SWAPLAB sweep point DIR ID`
};
// What a run says as it goes, one line each (no newline): the points and
// DIR, a joblog retired, a failed fork, and at the end how many points are
// done. May be empty.
using Progress = std::function<void(const std::string& line)>;
struct RunSummary {
  std::string dir;              // DIR as an absolute path
  size_t points = 0, done = 0;  // done: points with a complete result (0 with prepare)
  int parallel_exit = 0;        // parallel's exit status, 128 + signal when killed
};
// Errors: LoadSpec's, Prepare's and RetireStaleJoblog's; -EBUSY when another sweep holds DIR;
// -ENOSYS when GNU parallel is not installed (DIR is prepared then). A
// sweep whose points did not all finish is not an error: done < points.
Result<RunSummary> RunSweep(const RunOptions& o, const Progress& progress);

// `swaplab sweep merge DIR`: Merge(DIR) and Heatmaps written into DIR
// (merged.csv, merged.json, heatmap-NAME.svg) and, when `html` is set,
// SweepHtml to that file; each file through a temporary file and rename(2).
struct Merged {
  Table table;
  std::string merged_csv, merged_json;  // the contents of merged.csv and merged.json
  std::vector<std::string> files;       // the heatmaps' file names, in the spec's order
  // With points missing: whether a sweep holds DIR's lock (the table is of
  // the points done so far).
  bool running = false;
};
// Errors: Merge's, ReadSweep's, Heatmaps', a file that cannot be written.
Result<Merged> MergeSweep(const std::string& dir, const std::string& html);

}  // namespace swaplab::sweep
#pragma GCC visibility pop
