// SPDX-License-Identifier: MIT
// `swaplab run SCENARIO.json...`: scenario files (scenarios/README.md).
#include <fmt/core.h>

#include "finite_range.h"
#include "io_arg.h"
#include "policy_arg.h"
#include "progress.h"
#include "scenario_cmds.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/workload/host_cpu.h"

namespace swaplab::tools {

CLI::App* AddRun(CLI::App& app, ScenarioCmdOptions& o) {
  CLI::App* c = app.add_subcommand("run", "run scenario files (schema: scenarios/README.md)");
  c->add_option("scenario", o.files, "scenario JSON file(s)")->required();
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_option("--html", o.html_dir,
                "also write DIR/index.html: the tables, plots and cluster maps of this run (one "
                "self-contained page)");
  AddProgressOption(c, o.progress);
  c->add_option("--scale", o.scale, "multiply the scenario's sizes by this factor")
      ->check(FiniteRange(1e-4, 16.0));
  c->add_option("--jobs", o.jobs, "variants run at once")->check(CLI::Range(1, 64));
  c->add_flag(
      "--structural", o.structural,
      "image steps on simulated devices make no page data (runs, bios, modelled seconds only)");
  AddKnobOption(c, &o.knobs);
  AddIoOption(c, &o.io);
  c->add_option("--host-cpu", o.host_cpu,
                "host CPU prices for images on simulated devices: none, a profile (seed-001: "
                "fitted to seed 001; tcg-6.12: measured in this machine's qemu), or W,R,A (us per "
                "write bio, per read bio, per allocator call)");
  return c;
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
        fmt::print(stderr, "swaplab run: {}: variant {}: {}\n", scenarios.back().file,
                   Printable(v.label), st.message());
        return 2;
      }
    }
  }
  if (!o.host_cpu.empty()) {
    const auto c = HostCpuOption(o, "run");
    if (!c) return 2;
    for (auto& sc : scenarios) {
      if (!workload::SetHostCpu(sc, *c)) {
        fmt::print(
            stderr,
            "swaplab run: --host-cpu: {}: prices only an image step on simulated devices, and this "
            "scenario has none (a real swap file's measured seconds already hold this machine's "
            "CPU)\n",
            sc.file);
        return 2;
      }
    }
  }
  return RunAll(scenarios, o, false);
}

}  // namespace swaplab::tools
