// `swaplab run` and `swaplab reproduce` (scenario_cmds.h).
#include "scenario_cmds.h"

#include "policy_arg.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/workload/host_cpu.h"
#include "vm.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>

#include "swaplab/report/report.h"
#include "swaplab/workload/scenario_batch.h"
#include "swaplab/workload/shipped.h"

namespace swaplab::tools {

CLI::App* AddRun(CLI::App& app, ScenarioCmdOptions& o) {
  CLI::App* c = app.add_subcommand("run", "run scenario files (schema: scenarios/README.md)");
  c->add_option("scenario", o.files, "scenario JSON file(s)")->required();
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_option("--scale", o.scale, "multiply the scenario's sizes by this factor")->check(CLI::Range(1e-4, 16.0));
  c->add_option("--jobs", o.jobs, "variants run at once")->check(CLI::Range(1, 64));
  c->add_flag("--structural", o.structural,
              "image steps on simulated devices make no page data (runs, bios, modelled seconds only)");
  AddKnobOption(c, &o.knobs);
  c->add_option("--host-cpu", o.host_cpu, "host CPU prices for images on simulated devices: none, a profile (seed-001: fitted to seed 001; tcg-6.12: measured in this machine's qemu), or W,R,A (us per write bio, per read bio, per allocator call)");
  return c;
}

CLI::App* AddReproduce(CLI::App& app, ScenarioCmdOptions& o) {
  CLI::App* c = app.add_subcommand("reproduce", "the seeds' experiments, side by side with what they reported (default: all)");
  c->add_option("name", o.name, "a scenario or group name (see --list)");
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_option("--out", o.out_dir, "also write report.txt, report.json, report.csv here");
  c->add_option("--scale", o.scale, "multiply every scenario's sizes by this factor (default 1: the seeds' sizes)")
      ->check(CLI::Range(1e-4, 16.0));
  c->add_option("--jobs", o.jobs, "variants run at once")->check(CLI::Range(1, 64));
  auto* full = c->add_flag("--full", o.full,
                           "the seeds' sizes with every image page made, written and checked (slow; default: "
                           "simulated images are structural, no page data)");
  c->add_flag("--check-data", o.check_data,
              "page data made and checked, at each scenario's reduced reproduce_scale")
      ->excludes(full);
  c->add_flag("--list", o.list, "list the shipped scenarios and exit");
  auto* vm = c->add_flag("--vm", o.vm,
                         "seed 001's shuffled and holes tables on a real kernel (Debian's 6.12 in qemu), side by "
                         "side with the model; host CPU prices default to tcg-6.12");
  vm->excludes(full);
  c->add_option("--vm-scale", o.vm_scale, "--vm: the seed's sizes times this (default 1/64: 80 MiB image)")
      ->check(CLI::Range(1.0 / 128, 1.0 / 5));
  c->add_option("--accel", o.accel, "--vm: tcg | kvm | auto")->check(CLI::IsMember({"tcg", "kvm", "auto"}));
  c->add_option("--host-cpu", o.host_cpu,
                "host CPU prices for images on simulated devices: none, a profile (seed-001: fitted to seed 001; tcg-6.12: measured in this machine's qemu), or W,R,A (us per write bio, per read bio, per allocator call); tables on real swap files keep measured seconds only");
  return c;
}

namespace {

void Progress(const std::string& line) {
  if (::isatty(2)) fmt::print(stderr, "\r\033[K{}", line);
}

int Emit(const std::vector<workload::ScenarioResult>& results, const ScenarioCmdOptions& o, double wall) {
  nlohmann::ordered_json j;
  j["wall_seconds"] = wall;
  j["scale"] = o.scale;
  j["scenarios"] = nlohmann::ordered_json::array();
  std::string text, csv = report::CsvHeader();
  for (const auto& r : results) {
    j["scenarios"].push_back(report::RenderJson(r));
    text += report::RenderText(r);
    csv += report::RenderCsv(r);
  }
  text += fmt::format("total: {} scenario(s), {:.1f} s wall\n", results.size(), wall);
  if (o.json) fmt::print("{}\n", j.dump(2));
  else if (o.csv) fmt::print("{}", csv);
  else fmt::print("{}", text);
  if (!o.out_dir.empty()) {
    ::mkdir(o.out_dir.c_str(), 0755);
    for (auto [name, content] : {std::pair<const char*, std::string>{"report.txt", text},
                                 {"report.json", j.dump(2) + "\n"}, {"report.csv", csv}}) {
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

int RunAll(std::vector<workload::Scenario>& scenarios, const ScenarioCmdOptions& o, bool reproduce) {
  const auto t0 = std::chrono::steady_clock::now();
  workload::RunOptions ro;
  ro.jobs = o.jobs;
  // reproduce: simulated images structural unless --full / --check-data.
  ro.structural = reproduce ? !(o.full || o.check_data) : o.structural;
  for (auto& sc : scenarios) {
    const double f = o.scale * (reproduce && o.check_data ? sc.reproduce_scale : 1.0);
    if (f != 1.0) workload::ScaleScenario(sc, f);
  }
  std::mutex mu;
  ro.progress = [&mu](const std::string& line) {
    std::lock_guard<std::mutex> g(mu);
    Progress(line);
  };
  auto results = workload::RunScenarios(scenarios, ro);
  if (!results.ok()) {
    fmt::print(stderr, "\nswaplab: {}\n", results.status().ToString());
    return 1;
  }
  if (::isatty(2)) fmt::print(stderr, "\r\033[K");
  return Emit(*results, o, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

// --host-cpu: the prices, or an exit code 2 after the message.
static std::optional<std::optional<workload::HostCpuCost>> HostCpuOption(const ScenarioCmdOptions& o, const char* cmd) {
  if (o.host_cpu.empty()) return std::nullopt;
  auto c = workload::ParseHostCpuArg(o.host_cpu);
  if (!c.ok()) {
    fmt::print(stderr, "swaplab {}: {}\n", cmd, c.status().message());
    return std::nullopt;
  }
  return *c;
}

int RunRun(const ScenarioCmdOptions& o) {
  std::vector<workload::Scenario> scenarios;
  for (const auto& f : o.files) {
    auto sc = workload::LoadScenario(f);
    if (!sc.ok()) {
      fmt::print(stderr, "swaplab run: {}\n", sc.status().message());
      return 2;
    }
    scenarios.push_back(*sc);
    for (auto& v : scenarios.back().variants) {
      if (Status st = ApplyKnobs(&v.policy, o.knobs); !st.ok()) {
        fmt::print(stderr, "swaplab run: {}: variant {}: {}\n", scenarios.back().file, Printable(v.label),
                   st.message());
        return 2;
      }
    }
  }
  if (!o.host_cpu.empty()) {
    const auto c = HostCpuOption(o, "run");
    if (!c) return 2;
    for (auto& sc : scenarios) {
      if (!workload::SetHostCpu(sc, *c)) {
        fmt::print(stderr,
                   "swaplab run: --host-cpu: {}: prices only an image step on simulated devices, and this "
                   "scenario has none (a real swap file's measured seconds already hold this machine's CPU)\n",
                   sc.file);
        return 2;
      }
    }
  }
  return RunAll(scenarios, o, false);
}

int RunReproduce(const ScenarioCmdOptions& o) {
  if (o.vm) {
    if (!o.name.empty() || o.check_data || o.csv || !o.out_dir.empty() || o.list) {
      fmt::print(stderr, "swaplab reproduce --vm: runs seed 001's two layouts only, printed as text or --json "
                         "(no NAME, --check-data, --csv, --out or --list)\n");
      return 2;
    }
    std::optional<workload::HostCpuCost> cpu;
    if (const auto* p = workload::FindHostCpuProfile("tcg-6.12")) cpu = p->Cost();
    if (!o.host_cpu.empty()) {
      const auto c = HostCpuOption(o, "reproduce");
      if (!c) return 2;
      cpu = *c;
    }
    return RunReproduceVm(o.vm_scale, o.accel, cpu ? &*cpu : nullptr, o.json);
  }
  auto all = workload::ShippedInReportOrder();
  if (!all.ok()) {  // a shipped file is part of the program: a bug
    fmt::print(stderr, "swaplab reproduce: {}\n", all.status().message());
    return 1;
  }
  if (o.list) {
    for (const auto& sc : *all) fmt::print("{:<28} {:<24} {}\n", sc.name, sc.group, sc.title);
    return 0;
  }
  std::vector<workload::Scenario> chosen;
  for (const auto& sc : *all)
    if (o.name.empty() || sc.name == o.name || sc.group == o.name) chosen.push_back(sc);
  if (chosen.empty()) {
    fmt::print(stderr, "swaplab reproduce: no shipped scenario or group '{}' (see --list)\n", o.name);
    return 2;
  }
  if (!o.host_cpu.empty()) {
    const auto c = HostCpuOption(o, "reproduce");
    if (!c) return 2;
    for (auto& sc : chosen) (void)workload::SetHostCpu(sc, *c);  // images on simulated devices only
  }
  return RunAll(chosen, o, true);
}

}  // namespace swaplab::tools
