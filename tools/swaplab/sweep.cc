// SPDX-License-Identifier: MIT
// `swaplab sweep`: a spec expanded into points run by GNU parallel, one
// point, the merge, and the files of other engines (sweep.h).
#include "sweep.h"

#include <fmt/core.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "finite_range.h"
#include "progress.h"
#include "swaplab/alloc/printable.h"
#include "sweep/sweep.h"

namespace swaplab::tools {

namespace {

std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("swaplab");
}

std::string Absolute(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

// GNU parallel on PATH (moreutils' `parallel` takes other options).
bool HaveGnuParallel() {
  FILE* f = ::popen("parallel --version 2>/dev/null", "r");
  if (!f) return false;
  char line[256] = {};
  const bool got = std::fgets(line, sizeof line, f) != nullptr;
  ::pclose(f);
  return got && std::string(line).find("GNU parallel") != std::string::npos;
}

int Fail(const Status& st, const char* cmd) {
  fmt::print(stderr, "swaplab sweep{}: {}\n", cmd, st.message());
  return st.code() == -EINVAL || st.code() == -EEXIST || st.code() == -ENOENT ? 2 : 1;
}

// Runs DIR's jobs with parallel: job k is line k of jobs.txt, the joblog
// lets a stopped sweep resume, and `sweep point` skips a point already done.
int RunParallel(const std::string& dir, const SweepOptions& o) {
  if (!HaveGnuParallel()) {
    fmt::print(stderr,
               "swaplab sweep: GNU parallel is not installed (Debian package `parallel`; "
               "scripts/setup installs it). {} is prepared; `swaplab sweep emit --engine slurm "
               "{}` writes a Slurm job array instead\n",
               Printable(dir), Printable(dir));
    return 1;
  }
  std::vector<std::string> args = {
      "parallel",      "--will-cite",    "-q", "-j", std::to_string(o.jobs), "--joblog",
      dir + "/joblog", "--resume-failed"};
  if (ProgressOn(o.progress)) args.push_back("--bar");
  for (const std::string& a : {SelfPath(), std::string("sweep"), std::string("point"), dir,
                               std::string("{}"), std::string("::::"), dir + "/jobs.txt"})
    args.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) {
    fmt::print(stderr, "swaplab sweep: fork: {}\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::execvp("parallel", argv.data());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int Sweep(const SweepOptions& o) {
  if (o.spec.empty() || o.out.empty()) {
    fmt::print(stderr, "swaplab sweep: usage: swaplab sweep SPEC.json --out DIR [--jobs N]\n");
    return 2;
  }
  auto s = sweep::LoadSpec(o.spec, o.scale);
  if (!s.ok()) return Fail(s.status(), "");
  s.value().command = "swaplab sweep " + Printable(o.spec) + " --out " + Printable(o.out) +
                      (o.scale != 1.0 ? fmt::format(" --scale {:g}", o.scale) : "");
  // The lock for the whole run (the descriptor closes when swaplab exits).
  auto lock = sweep::LockSweep(o.out);
  if (!lock.ok()) return Fail(lock.status(), "");
  if (Status st = sweep::Prepare(*s, o.out); !st.ok()) return Fail(st, "");
  const std::string dir = Absolute(o.out);
  fmt::print(stderr, "swaplab sweep: {} points in {}\n", s->points.size(), Printable(dir));
  if (o.prepare) return 0;
  std::vector<std::string> ids;
  for (const auto& p : s->points) ids.push_back(p.id);
  auto retired = sweep::RetireStaleJoblog(dir, ids);
  if (!retired.ok()) return Fail(retired.status(), "");
  if (!retired->empty()) fmt::print(stderr, "swaplab sweep: {}\n", *retired);
  const int rc = RunParallel(dir, o);
  if (rc == 1 && !HaveGnuParallel()) return 1;
  size_t done = 0;
  for (const auto& p : s->points) done += sweep::PointDone(dir, p.id);
  fmt::print(stderr, "swaplab sweep: {} of {} points done{}\n", done, s->points.size(),
             done == s->points.size()
                 ? fmt::format("; swaplab sweep merge {}", Printable(dir))
                 : fmt::format(" (parallel exited {}; run again to resume)", rc));
  return done == s->points.size() ? 0 : 1;
}

int Merge(const SweepOptions& o) {
  auto t = sweep::Merge(o.dir);
  if (!t.ok()) return Fail(t.status(), " merge");
  auto sw = sweep::ReadSweep(o.dir);
  if (!sw.ok()) return Fail(sw.status(), " merge");
  auto maps = sweep::Heatmaps(*sw, *t);
  if (!maps.ok()) return Fail(maps.status(), " merge");
  const std::string csv = sweep::TableCsv(*t), json = sweep::TableJson(*t).dump(1) + "\n";
  for (const auto& [name, content] :
       {std::pair<std::string, const std::string&>{"merged.csv", csv}, {"merged.json", json}})
    if (Status st = sweep::WriteAtomic(o.dir + "/" + name, content); !st.ok())
      return Fail(st, " merge");
  for (const auto& [name, svg] : *maps)
    if (Status st = sweep::WriteAtomic(o.dir + "/" + name, svg); !st.ok())
      return Fail(st, " merge");
  if (!o.html.empty())
    if (Status st = sweep::WriteAtomic(o.html, sweep::SweepHtml(*sw, *t, *maps)); !st.ok())
      return Fail(st, " merge");
  if (o.csv) {
    fmt::print("{}", csv);
  } else if (o.json) {
    fmt::print("{}", json);
  } else {
    fmt::print("{} of {} points, {} columns, {:.1f} CPU s; wrote {}/merged.csv, merged.json",
               t->rows.size(), t->points, t->axes.size() + t->derived.size() + t->metrics.size(),
               t->cpu_seconds, Printable(o.dir));
    for (const auto& [name, svg] : *maps) fmt::print(", {}", Printable(name));
    if (!o.html.empty()) fmt::print(", {}", Printable(o.html));
    fmt::print("\n");
  }
  if (t->rows.size() < t->points)
    fmt::print(
        stderr, "swaplab sweep merge: {} points have no result yet{}\n", t->points - t->rows.size(),
        sweep::SweepRunning(o.dir) ? " (a sweep is running in it: merge again when it ends)" : "");
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
    auto path = sweep::Emit(Absolute(o.dir), o.engine, SelfPath());
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
