// SPDX-License-Identifier: MIT
// What `swaplab run` and `swaplab reproduce` share (scenario_cmds.h): the
// scenarios scaled, run and printed; the --host-cpu option.
#include "scenario_cmds.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>

#include "progress.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/output_file.h"
#include "swaplab/report/html_report.h"
#include "swaplab/report/report.h"
#include "swaplab/workload/scenario_batch.h"
#include "swaplab/workload/shipped.h"  // ScaleScenario

namespace swaplab::tools {

namespace {

// --html DIR: DIR/index.html, the page of the same run.
int WriteHtml(const std::vector<workload::ScenarioResult>& results, const ScenarioCmdOptions& o,
              const report::MapCapture& maps, double wall, bool reproduce) {
  report::HtmlOptions ho;
  ho.command = reproduce ? "reproduce" + (o.name.empty() ? std::string() : " " + o.name) : "run";
  ho.scale = o.scale;
  ho.wall_seconds = wall;
  const std::string page = report::RenderHtml(results, &maps, ho);
  if (Status s = area::WriteOutputDirFile(o.html_dir, "index.html", page); !s.ok()) {
    fmt::print(stderr, "swaplab: --html: {}\n", Printable(s.message(), kPathMax));
    return 1;
  }
  return 0;
}

int Emit(const std::vector<workload::ScenarioResult>& results, const ScenarioCmdOptions& o,
         double wall) {
  const auto b = report::RenderBatch(results, o.scale, wall);
  fmt::print("{}", o.json ? b.json + "\n" : o.csv ? b.csv : b.text);
  if (!o.out_dir.empty()) {
    for (auto [name, content] : {std::pair<const char*, std::string>{"report.txt", b.text},
                                 {"report.json", b.json + "\n"},
                                 {"report.csv", b.csv}}) {
      if (Status s = area::WriteOutputDirFile(o.out_dir, name, content); !s.ok()) {
        fmt::print(stderr, "swaplab: --out: {}\n", Printable(s.message(), kPathMax));
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

int RunAll(std::vector<workload::Scenario>& scenarios, const ScenarioCmdOptions& o,
           bool reproduce) {
  // --out / --html: new, empty or ours, known before the run starts.
  for (const auto& [flag, dir] :
       {std::pair<const char*, std::string>{"--out", o.out_dir}, {"--html", o.html_dir}}) {
    if (dir.empty()) continue;
    if (Status s = area::PrepareOutputDir(dir); !s.ok()) {
      fmt::print(stderr, "swaplab: {}: {}\n", flag, Printable(s.message(), kPathMax));
      return 2;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  workload::RunOptions ro;
  ro.jobs = o.jobs;
  ro.io = o.io;
  // reproduce: simulated images structural unless --full / --check-data.
  ro.structural = reproduce ? !(o.full || o.check_data) : o.structural;
  for (auto& sc : scenarios) {
    const double f = o.scale * (reproduce && o.check_data ? sc.reproduce_scale : 1.0);
    if (f != 1.0) workload::ScaleScenario(sc, f);
  }
  uint64_t jobs = 0;
  for (const auto& sc : scenarios)
    jobs += sc.variants.size() * static_cast<uint64_t>(std::max(1, sc.repetitions));
  // Jobs started of all; the line names the job.
  ProgressBar bar(o.progress, jobs, "jobs");
  std::mutex mu;
  uint64_t started = 0;
  ro.progress = [&mu, &bar, &started](const std::string& line) {
    std::lock_guard<std::mutex> g(mu);
    if (line.find(" rep ") != std::string::npos) ++started;  // a job starts
    bar.Update(started, line);
  };
  report::MapCapture maps;  // --html: the cluster maps of the page
  if (!o.html_dir.empty()) ro.observe = maps.Observer();
  auto results = workload::RunScenarios(scenarios, ro);
  if (!results.ok()) {
    bar.End();
    fmt::print(stderr, "swaplab: {}\n", results.status().ToString());
    return 1;
  }
  bar.End();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (int rc = Emit(*results, o, wall); rc != 0) return rc;
  return o.html_dir.empty() ? 0 : WriteHtml(*results, o, maps, wall, reproduce);
}

// --host-cpu: the prices, or an exit code 2 after the message.
std::optional<std::optional<workload::HostCpuCost>> HostCpuOption(const ScenarioCmdOptions& o,
                                                                  const char* cmd) {
  if (o.host_cpu.empty()) return std::nullopt;
  auto c = workload::ParseHostCpuArg(o.host_cpu);
  if (!c.ok()) {
    fmt::print(stderr, "swaplab {}: {}\n", cmd, c.status().message());
    return std::nullopt;
  }
  return *c;
}

}  // namespace swaplab::tools
