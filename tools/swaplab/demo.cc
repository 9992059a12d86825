// SPDX-License-Identifier: MIT
// `swaplab demo`: a built-in allocation churn on one simulated device, run
// with every policy preset side by side; prints the kernel's counters and
// the cluster lists.
#include "demo.h"

#include <fmt/core.h>

#include <vector>

#include "policy_arg.h"
#include "swaplab/report/demo_report.h"
#include "swaplab/workload/demo.h"

namespace swaplab::tools {

CLI::App* AddDemo(CLI::App& app, DemoOptions& o) {
  CLI::App* c = app.add_subcommand("demo", "allocation churn on a simulated device, every policy");
  c->add_option("--policy", o.policy, "run only this preset (default: every preset side by side)");
  AddKnobOption(c, &o.knobs);
  c->add_option("--size", o.size_mib, "device size in MiB")->check(CLI::Range(8, 1 << 20));
  c->add_option("--seed", o.seed, "random seed");
  c->add_option("--ops", o.ops, "swap-out operations")->check(CLI::Range(1, 100000000));
  c->add_flag("--json", o.json, "one JSON document on stdout");
  return c;
}

int RunDemo(const DemoOptions& o) {
  std::vector<alloc::Policy> policies;
  const std::vector<std::string> names =
      o.policy.empty() ? alloc::Policy::PresetNames() : std::vector<std::string>{o.policy};
  for (const std::string& name : names) {
    auto p = PolicyFromArgs(name, o.knobs);
    if (!p.ok()) {
      fmt::print(stderr, "swaplab demo: {}\n", p.status().message());
      return 2;
    }
    policies.push_back(*p);
  }
  const auto r = workload::RunDemo({policies, o.size_mib, o.seed, o.ops});
  fmt::print("{}", o.json ? report::DemoJson(r) : report::DemoText(r));
  return o.json || report::DemoInvariantsHold(r) ? 0 : 1;
}

}  // namespace swaplab::tools
