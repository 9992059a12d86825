// SPDX-License-Identifier: MIT
// A sweep's directory written, one point run into it, and the whole sweep
// run by GNU parallel (include/swaplab/sweep/sweep.h).
#include <fcntl.h>
#include <fmt/core.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "swaplab/alloc/printable.h"
#include "swaplab/report/report.h"
#include "swaplab/workload/json_file.h"
#include "swaplab/workload/scenario_batch.h"
#include "swaplab/workload/shipped.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

using nlohmann::json;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Status(-errno, "cannot create " + Printable(path) + ": " + std::strerror(errno));
}

double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void Say(const Progress& progress, const std::string& line) {
  if (progress) progress(line);
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

// parallel's command line for DIR's jobs: job k is line k of jobs.txt, the
// joblog lets a stopped sweep resume, and `sweep point` skips a point
// already done.
std::vector<std::string> ParallelArgs(const std::string& dir, const RunOptions& o) {
  std::vector<std::string> args = {
      "parallel",      "--will-cite",    "-q", "-j", std::to_string(o.jobs), "--joblog",
      dir + "/joblog", "--resume-failed"};
  if (o.bar) args.push_back("--bar");
  for (const std::string& a : {o.swaplab, std::string("sweep"), std::string("point"), dir,
                               std::string("{}"), std::string("::::"), dir + "/jobs.txt"})
    args.push_back(a);
  return args;
}

// Runs `args` (args[0] looked up on PATH) and waits for it: its exit
// status, 128 + the signal that killed it, or 1 when fork(2) fails (said
// through `progress`).
int ForkAndWait(std::vector<std::string> args, const Progress& progress) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) {
    Say(progress, fmt::format("fork: {}", std::strerror(errno)));
    return 1;
  }
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The sweep's lock, held until the run returns.
struct HeldLock {
  int fd;
  ~HeldLock() { ::close(fd); }
};

}  // namespace

std::string Absolute(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

Status WriteAtomic(const std::string& path, const std::string& content) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status(-errno, "cannot write " + Printable(tmp) + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status(-e, "cannot write " + Printable(tmp) + ": " + std::strerror(e));
    }
    off += static_cast<size_t>(n);
  }
  // On a shared file system the result must be whole before its name
  // appears: a point is done exactly when its file exists.
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return Status(-e, "cannot write " + Printable(path) + ": " + std::strerror(e));
  }
  return Status::Ok();
}

Status Prepare(const Sweep& s, const std::string& dir) {
  json points = json::array(), axes = json::array();
  for (const Axis& a : s.axes) axes.push_back(a.name);
  std::string jobs;
  for (const Point& p : s.points) {
    points.push_back({{"id", p.id}, {"axes", p.axes}});
    jobs += p.id + "\n";
  }
  json doc = {{"name", s.name}, {"scale", s.scale}, {"structural", s.structural},
              {"axes", axes},   {"spec", s.spec},   {"points", points}};
  if (!s.command.empty()) doc["command"] = s.command;
  const std::string text = doc.dump(1) + "\n";
  // The marker first: a directory of someone else's files is never written.
  if (Status st = ClaimDir(dir); !st.ok()) return st;
  const std::string sweep_json = dir + "/sweep.json";
  if (Exists(sweep_json)) {
    // The same points (ids and order: parallel's joblog and a Slurm
    // array index jobs.txt) may get a new title, derived metrics or maps.
    auto o = workload::ReadJsonFile(sweep_json, workload::kMaxSweepJson);
    if (!o.ok() || !o->is_object() || !o->contains("points") || (*o)["points"] != points) {
      return Status(-EEXIST, Printable(dir) +
                                 " holds another sweep (other points: a different base, axes or "
                                 "--scale); use a new --out DIR");
    }
  }
  for (const std::string& d : {dir, dir + "/in", dir + "/points"})
    if (Status st = MakeDir(d); !st.ok()) return st;
  for (const Point& p : s.points) {
    const std::string in = dir + "/in/" + p.id + ".json";
    if (Exists(in)) continue;
    if (Status st = WriteAtomic(in, p.input.dump() + "\n"); !st.ok()) return st;
  }
  if (Status st = WriteAtomic(dir + "/jobs.txt", jobs); !st.ok()) return st;
  return WriteAtomic(sweep_json, text);
}

Result<json> ReadSweep(const std::string& dir) {
  if (Status st = CheckOwned(dir); !st.ok()) return st;
  const std::string path = dir + "/sweep.json";
  auto j = workload::ReadJsonFile(path, workload::kMaxSweepJson);
  if (!j.ok() && j.status().code() == -ENOENT) {
    return Status(-ENOENT, Printable(dir) +
                               ": not a sweep directory (no sweep.json; `swaplab sweep SPEC --out "
                               "DIR` makes one)");
  }
  if (!j.ok()) return j.status();
  if (Status st = CheckSweepDoc(*j, path); !st.ok()) return st;
  return j;
}

Status RunPoint(const std::string& dir, const std::string& id, bool* ran) {
  *ran = false;
  if (!ValidId(id))
    return Status(-EINVAL, "point id " + Printable(id) + ": expected 16 hex digits");
  if (Status st = CheckOwned(dir); !st.ok()) return st;
  const std::string out = dir + "/points/" + id + ".json";
  // Done is a complete result; a truncated or foreign one is run again.
  if (ReadPointResult(dir, id).ok()) return Status::Ok();
  const std::string in = dir + "/in/" + id + ".json";
  auto read = workload::ReadJsonFile(in);
  if (!read.ok() && read.status().code() == -ENOENT)
    return Status(-ENOENT, Printable(dir) + ": no point " + id);
  if (!read.ok()) return read.status();
  const json& input = *read;
  if (Status st = CheckPointInput(input, in, id); !st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  auto sc = PointScenario(input, "point " + id);
  if (!sc.ok()) return sc.status();
  std::vector<workload::Scenario> scenarios{std::move(sc).value()};
  const double scale = input.at("scale").get<double>();
  if (scale != 1.0) workload::ScaleScenario(scenarios[0], scale);
  workload::RunOptions ro;
  ro.jobs = 1;  // the sweep's engine runs points side by side
  ro.structural = input.at("structural").get<bool>();
  auto results = workload::RunScenarios(scenarios, ro);
  if (!results.ok())
    return Status(results.status().code(), "point " + id + ": " + results.status().ToString());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The metrics as `swaplab run --json` reports them: "VARIANT/METRIC".
  const json run = json::parse(report::RenderBatch(*results, scale, wall).json);
  json metrics = json::object();
  for (const json& sj : run.at("scenarios"))
    for (const json& v : sj.at("variants"))
      for (const auto& [name, m] : v.at("metrics").items())
        metrics[v.at("label").get<std::string>() + "/" + name] = m.at("value");
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const json result = {{"id", id},
                       {"axes", input.at("axes")},
                       {"metrics", metrics},
                       {"cpu_seconds", CpuSeconds()},
                       {"wall_seconds", wall},
                       {"host", host}};
  if (Status st = WriteAtomic(out, result.dump(1) + "\n"); !st.ok()) return st;
  *ran = true;
  return Status::Ok();
}

Result<RunSummary> RunSweep(const RunOptions& o, const Progress& progress) {
  auto s = LoadSpec(o.spec, o.scale);
  if (!s.ok()) return s.status();
  s.value().command = "swaplab sweep " + Printable(o.spec) + " --out " + Printable(o.out) +
                      (o.scale != 1.0 ? fmt::format(" --scale {:g}", o.scale) : "");
  auto lock = LockSweep(o.out);
  if (!lock.ok()) return lock.status();
  const HeldLock held{*lock};
  if (Status st = Prepare(*s, o.out); !st.ok()) return st;
  RunSummary r;
  r.dir = Absolute(o.out);
  r.points = s->points.size();
  Say(progress, fmt::format("{} points in {}", r.points, Printable(r.dir)));
  if (o.prepare) return r;
  std::vector<std::string> ids;
  for (const auto& p : s->points) ids.push_back(p.id);
  auto retired = RetireStaleJoblog(r.dir, ids);
  if (!retired.ok()) return retired.status();
  if (!retired->empty()) Say(progress, *retired);
  if (!HaveGnuParallel()) {
    return Status(-ENOSYS, fmt::format("GNU parallel is not installed (Debian package `parallel`; "
                                       "scripts/setup installs it). {} is prepared; `swaplab sweep "
                                       "emit --engine slurm {}` writes a Slurm job array instead",
                                       Printable(r.dir), Printable(r.dir)));
  }
  r.parallel_exit = ForkAndWait(ParallelArgs(r.dir, o), progress);
  for (const std::string& id : ids) r.done += PointDone(r.dir, id);
  Say(progress,
      fmt::format("{} of {} points done{}", r.done, r.points,
                  r.done == r.points ? fmt::format("; swaplab sweep merge {}", Printable(r.dir))
                                     : fmt::format(" (parallel exited {}; run again to resume)",
                                                   r.parallel_exit)));
  return r;
}

}  // namespace swaplab::sweep
