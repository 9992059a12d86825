// SPDX-License-Identifier: MIT
// `swaplab sweep`: the options of the sweep, point, merge and emit
// commands, each run by one call of the sweep library
// (include/swaplab/sweep/sweep.h).
#include "sweep.h"

#include <fmt/core.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "finite_range.h"
#include "progress.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/sweep/sweep.h"

namespace swaplab::tools {

namespace {

// The program the sweep's engines run as `SWAPLAB sweep point DIR ID`.
std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("swaplab");
}

int Fail(const Status& st, const char* cmd) {
  fmt::print(stderr, "swaplab sweep{}: {}\n", cmd, st.message());
  return st.code() == -EINVAL || st.code() == -EEXIST || st.code() == -ENOENT ? 2 : 1;
}

int Sweep(const SweepOptions& o) {
  if (o.spec.empty() || o.out.empty()) {
    fmt::print(stderr, "swaplab sweep: usage: swaplab sweep SPEC.json --out DIR [--jobs N]\n");
    return 2;
  }
  sweep::RunOptions ro;
  ro.spec = o.spec;
  ro.out = o.out;
  ro.jobs = o.jobs;
  ro.scale = o.scale;
  ro.bar = ProgressOn(o.progress);
  ro.prepare = o.prepare;
  ro.swaplab = SelfPath();
  auto run = sweep::RunSweep(
      ro, [](const std::string& line) { fmt::print(stderr, "swaplab sweep: {}\n", line); });
  if (!run.ok()) return Fail(run.status(), "");
  return o.prepare || run->done == run->points ? 0 : 1;
}

int Merge(const SweepOptions& o) {
  auto m = sweep::MergeSweep(o.dir, o.html);
  if (!m.ok()) return Fail(m.status(), " merge");
  const sweep::Table& t = m->table;
  if (o.csv) {
    fmt::print("{}", m->merged_csv);
  } else if (o.json) {
    fmt::print("{}", m->merged_json);
  } else {
    fmt::print("{} of {} points, {} columns, {:.1f} CPU s; wrote {}/merged.csv, merged.json",
               t.rows.size(), t.points, t.axes.size() + t.derived.size() + t.metrics.size(),
               t.cpu_seconds, Printable(o.dir));
    for (const std::string& name : m->files) fmt::print(", {}", Printable(name));
    if (!o.html.empty()) fmt::print(", {}", Printable(o.html));
    fmt::print("\n");
  }
  if (t.rows.size() < t.points)
    fmt::print(stderr, "swaplab sweep merge: {} points have no result yet{}\n",
               t.points - t.rows.size(),
               m->running ? " (a sweep is running in it: merge again when it ends)" : "");
  return 0;
}

}  // namespace

SweepCommands AddSweep(CLI::App& app, SweepOptions& o) {
  SweepCommands c{};
  c.sweep = app.add_subcommand(
      "sweep", "run a scenario at many points with GNU parallel (spec: docs/sweeps.md)");
  c.sweep->require_subcommand(0, 1);
  c.sweep->add_option("spec", o.spec, "sweep spec JSON (scenarios/sweeps/)");
  c.sweep->add_option("--out", o.out, "the sweep's directory (results, joblog; resumable)");
  c.sweep->add_option("--jobs,-j", o.jobs, "points run at once")->check(CLI::Range(1, 1024));
  c.sweep->add_option("--scale", o.scale, "multiply the spec's scale by this factor")
      ->check(FiniteRange(1e-4, 16.0));
  AddProgressOption(c.sweep, o.progress);  // parallel's --bar
  c.sweep->add_flag("--prepare", o.prepare, "write DIR only (for `sweep emit`), run nothing");
  c.point = c.sweep->add_subcommand("point", "run one point of DIR (what the engines run)");
  c.point->add_option("dir", o.dir, "sweep directory")->required();
  c.point->add_option("id", o.id, "point id (DIR/jobs.txt)")->required();
  c.merge = c.sweep->add_subcommand(
      "merge", "one table of DIR's points (DIR/merged.csv, merged.json) and its heatmaps (SVG)");
  c.merge->add_option("dir", o.dir, "sweep directory")->required();
  c.merge->add_flag("--csv", o.csv, "the table as CSV on stdout");
  c.merge->add_flag("--json", o.json, "the table as JSON on stdout");
  c.merge->add_option("--html", o.html,
                      "also write FILE: one self-contained page of the sweep (its heatmaps inline, "
                      "the table; no script, no URL)");
  c.emit = c.sweep->add_subcommand(
      "emit", "write DIR/commands.txt (parallel --sshloginfile) or DIR/sweep.sbatch (Slurm array)");
  c.emit->add_option("--engine", o.engine, "parallel or slurm")
      ->required()
      ->check(CLI::IsMember({"parallel", "slurm"}));
  c.emit->add_option("dir", o.dir, "sweep directory (`swaplab sweep SPEC --out DIR --prepare`)")
      ->required();
  return c;
}

namespace {

int RunSweepChecked(const SweepCommands& c, const SweepOptions& o) {
  if (c.point->parsed()) {
    bool ran = false;
    if (Status st = sweep::RunPoint(o.dir, o.id, &ran); !st.ok()) return Fail(st, " point");
    if (!ran) fmt::print(stderr, "swaplab sweep point: {} already done\n", Printable(o.id));
    return 0;
  }
  if (c.merge->parsed()) return Merge(o);
  if (c.emit->parsed()) {
    auto path = sweep::Emit(o.dir, o.engine, SelfPath());
    if (!path.ok()) return Fail(path.status(), " emit");
    fmt::print("{}\n", Printable(*path));
    return 0;
  }
  return Sweep(o);
}

}  // namespace

int RunSweep(const SweepCommands& c, const SweepOptions& o) {
  // Every file of DIR is checked whole before it is used
  // (src/sweep/files.cc); a JSON error that still got through is bad
  // input, never an abort.
  try {
    return RunSweepChecked(c, o);
  } catch (const nlohmann::json::exception& e) {
    fmt::print(stderr, "swaplab sweep: {}: unexpected content: {}\n",
               Printable(o.dir.empty() ? o.out : o.dir), Printable(e.what()));
    return 2;
  }
}

}  // namespace swaplab::tools
