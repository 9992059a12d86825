// What `swaplab run` and `swaplab reproduce` share (scenario_cmds.h): the
// scenarios scaled, run and printed; the --host-cpu option.
#include "scenario_cmds.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>

#include "swaplab/alloc/printable.h"
#include "swaplab/report/html_report.h"
#include "swaplab/report/report.h"
#include "swaplab/workload/scenario_batch.h"
#include "swaplab/workload/shipped.h"  // ScaleScenario

namespace swaplab::tools {

namespace {

// A bar on stderr: jobs started of all, their rate, the current job.
class ProgressBar {
 public:
  ProgressBar(bool on, uint64_t total) : on_(on), total_(std::max<uint64_t>(1, total)) {}
  bool on() const { return on_; }
  void Line(const std::string& line) {
    if (!on_) return;
    if (line.find(" rep ") != std::string::npos) ++started_;  // a job starts
    const uint64_t k = std::min(started_, total_);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const int filled = static_cast<int>(20 * k / total_);
    fmt::print(stderr, "\r\033[K[{}{}] {:3}% {}/{} jobs, {:.1f} jobs/s  {}",
               std::string(filled, '#'), std::string(20 - filled, '-'), 100 * k / total_, k, total_,
               s > 0 ? static_cast<double>(k) / s : 0.0, Printable(line, 200));
  }

 private:
  bool on_;
  uint64_t total_, started_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// --html DIR: DIR/index.html, the page of the same run.
int WriteHtml(const std::vector<workload::ScenarioResult>& results, const ScenarioCmdOptions& o,
              const report::MapCapture& maps, double wall, bool reproduce) {
  report::HtmlOptions ho;
  ho.command = reproduce ? "reproduce" + (o.name.empty() ? std::string() : " " + o.name) : "run";
  ho.scale = o.scale;
  ho.wall_seconds = wall;
  ::mkdir(o.html_dir.c_str(), 0755);
  const std::string path = o.html_dir + "/index.html";
  std::ofstream f(path, std::ios::binary);
  f << report::RenderHtml(results, &maps, ho);
  f.close();
  if (!f) {
    fmt::print(stderr, "swaplab: cannot write {}\n", path);
    return 1;
  }
  return 0;
}

int Emit(const std::vector<workload::ScenarioResult>& results, const ScenarioCmdOptions& o,
         double wall) {
  const auto b = report::RenderBatch(results, o.scale, wall);
  fmt::print("{}", o.json ? b.json + "\n" : o.csv ? b.csv : b.text);
  if (!o.out_dir.empty()) {
    ::mkdir(o.out_dir.c_str(), 0755);
    for (auto [name, content] : {std::pair<const char*, std::string>{"report.txt", b.text},
                                 {"report.json", b.json + "\n"},
                                 {"report.csv", b.csv}}) {
      std::ofstream f(o.out_dir + "/" + name);
      f << content;
      if (!f) {
        fmt::print(stderr, "swaplab: cannot write {}/{}\n", o.out_dir, name);
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

int RunAll(std::vector<workload::Scenario>& scenarios, const ScenarioCmdOptions& o,
           bool reproduce) {
  const auto t0 = std::chrono::steady_clock::now();
  workload::RunOptions ro;
  ro.jobs = o.jobs;
  // reproduce: simulated images structural unless --full / --check-data.
  ro.structural = reproduce ? !(o.full || o.check_data) : o.structural;
  for (auto& sc : scenarios) {
    const double f = o.scale * (reproduce && o.check_data ? sc.reproduce_scale : 1.0);
    if (f != 1.0) workload::ScaleScenario(sc, f);
  }
  uint64_t jobs = 0;
  for (const auto& sc : scenarios)
    jobs += sc.variants.size() * static_cast<uint64_t>(std::max(1, sc.repetitions));
  ProgressBar bar(o.progress == "always" || (o.progress == "auto" && ::isatty(2)), jobs);
  std::mutex mu;
  ro.progress = [&mu, &bar](const std::string& line) {
    std::lock_guard<std::mutex> g(mu);
    bar.Line(line);
  };
  report::MapCapture maps;  // --html: the cluster maps of the page
  if (!o.html_dir.empty()) ro.observe = maps.Observer();
  auto results = workload::RunScenarios(scenarios, ro);
  if (!results.ok()) {
    fmt::print(stderr, "{}swaplab: {}\n", bar.on() ? "\n" : "", results.status().ToString());
    return 1;
  }
  if (bar.on()) fmt::print(stderr, "\r\033[K");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (int rc = Emit(*results, o, wall); rc != 0) return rc;
  return o.html_dir.empty() ? 0 : WriteHtml(*results, o, maps, wall, reproduce);
}

void AddProgressOption(CLI::App* c, ScenarioCmdOptions& o) {
  c->add_option("--progress", o.progress,
                "a progress bar on stderr: always, never, or auto (only when stderr is a terminal)")
      ->check(CLI::IsMember({"always", "never", "auto"}))
      ->capture_default_str();
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
