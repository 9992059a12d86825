// SPDX-License-Identifier: MIT
// `swaplab replay TRACE`: run a trace on the model, report the kernel's
// counters, the layout and the agreement with `expect` lines.
#include "replay.h"

#include <fmt/core.h>

#include <cerrno>

#include "policy_arg.h"
#include "size_arg.h"
#include "swaplab/report/replay_report.h"
#include "swaplab/workload/replay.h"

namespace swaplab::tools {

CLI::App* AddReplay(CLI::App& app, ReplayOptions& o) {
  CLI::App* c = app.add_subcommand(
      "replay", "run a trace, report counters, layout and agreement with expect lines");
  c->add_option("trace", o.trace, "trace file (swaplab-trace 1)")->required();
  c->add_option("--policy", o.policy, "policy preset: " + PresetList())->capture_default_str();
  AddKnobOption(c, &o.knobs);
  c->add_option("--cpus", o.cpus,
                "CPUs in the model (default: the trace's cpus record, kernel run's machine; "
                "else 4)")
      ->check(CLI::Range(1, 1024));
  c->add_option("--cluster-shift", o.cluster_shift, "log2 slots per cluster")
      ->check(CLI::Range(1, 15));
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_flag("--check", o.check, "check every invariant after every record (slow)");
  c->add_option("--scan-base-seed", o.scan_base_seed,
                "seed of the model's random scan bases (linux-6.1's per-CPU cluster_next_cpu; "
                "a trace's scan-base records override them)")
      ->capture_default_str();
  c->add_option("--memory-limit", o.memory_limit,
                "refuse a trace whose swapon records need a model larger than this (K, M, G "
                "suffixes; default: the memory available, MemAvailable)");
  return c;
}

int RunReplay(const ReplayOptions& o) {
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) {
    fmt::print(stderr, "swaplab replay: {}\n", policy.status().message());
    return 2;
  }
  uint64_t limit = 0;
  if (!o.memory_limit.empty()) {
    auto l = ParseSize(o.memory_limit, "--memory-limit");
    if (!l.ok()) {
      fmt::print(stderr, "swaplab replay: {}\n", l.status().message());
      return 2;
    }
    limit = *l;
  }
  auto r = workload::Replay(
      {o.trace, *policy, o.cpus, o.cluster_shift, o.check, o.scan_base_seed, limit});
  if (!r.ok()) {
    fmt::print(stderr, "swaplab replay: {}\n", r.status().message());
    return r.status().code() == -ENOMEM ? 1 : 2;  // more than this machine can hold: 1
  }
  if (!r->check_failed.empty()) {
    fmt::print(stderr, "swaplab replay: {}\n", r->check_failed);
    return 1;
  }
  if (o.json) {
    fmt::print("{}\n", report::ReplayJson(*r).dump(2));
  } else {
    fmt::print("{}", o.csv ? report::ReplayCsv(*r) : report::ReplayText(*r));
  }
  return r->invariants_ok ? 0 : 1;
}

}  // namespace swaplab::tools
