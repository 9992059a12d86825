// SPDX-License-Identifier: MIT
// `swaplab reproduce [NAME]`: the seeds' experiments, shipped with the
// program, side by side with what the seeds reported.
#include <fmt/core.h>

#include "finite_range.h"
#include "io_arg.h"
#include "progress.h"
#include "scenario_cmds.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/workload/host_cpu.h"
#include "swaplab/workload/scenario_batch.h"
#include "vm.h"

namespace swaplab::tools {

CLI::App* AddReproduce(CLI::App& app, ScenarioCmdOptions& o) {
  CLI::App* c = app.add_subcommand(
      "reproduce", "the seeds' experiments, side by side with what they reported (default: all)");
  c->add_option("name", o.name, "a scenario or group name (see --list)");
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_option("--out", o.out_dir, "also write report.txt, report.json, report.csv here");
  c->add_option("--html", o.html_dir,
                "also write DIR/index.html: the tables, plots and cluster maps of this run (one "
                "self-contained page)");
  AddProgressOption(c, o.progress);
  c->add_option("--scale", o.scale,
                "multiply every scenario's sizes by this factor (default 1: the seeds' sizes)")
      ->check(FiniteRange(1e-4, 16.0));
  c->add_option("--jobs", o.jobs, "variants run at once")->check(CLI::Range(1, 64));
  auto* full = c->add_flag(
      "--full", o.full,
      "the seeds' sizes with every image page made, written and checked (slow; default: "
      "simulated images are structural, no page data)");
  c->add_flag("--check-data", o.check_data,
              "page data made and checked, at each scenario's reduced reproduce_scale")
      ->excludes(full);
  c->add_flag("--list", o.list, "list the shipped scenarios and exit");
  auto* vm = c->add_flag(
      "--vm", o.vm,
      "seed 001's shuffled and holes tables on a real kernel (Debian's 6.12 in qemu), side by "
      "side with the model; host CPU prices default to tcg-6.12 (tcg-rfc-6.12 with --kernel). With "
      "NAME (nonfull-vs-free-8g, "
      "-10g, -all) and --kernel: seed 003's build in the guest, prefer_nonfull=0 vs 1");
  vm->excludes(full);
  c->add_option("--vm-scale", o.vm_scale,
                "--vm: the seed's sizes times this (default 1/64: 80 MiB image; seed 003: 1/32, "
                "256 MiB of zram for the 8G table)")
      ->check(FiniteRange(1.0 / 128, 1.0 / 5))
      ->each([&o](const std::string&) { o.vm_scale_set = true; });
  c->add_option("--accel", o.accel, "--vm: tcg | kvm | auto")
      ->check(CLI::IsMember({"tcg", "kvm", "auto"}));
  c->add_option("--kernel", o.vm_kernel,
                "--vm: a kernel built with kernel-patches/rfc-6.12 (swaplab vm kernel build --name "
                "rfc-6.12): seed 001's base / allocator / allocator + bio columns, one boot each")
      ->needs(vm);
  c->add_option("--runs", o.vm_runs, "--vm --kernel: hibernations (and resumes) per cell")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  c->add_option(
      "--host-cpu", o.host_cpu,
      "host CPU prices for images on simulated devices: none, a profile (seed-001: fitted to seed "
      "001; tcg-6.12: measured in this machine's qemu), or W,R,A (us per write bio, per read bio, "
      "per allocator call); tables on real swap files keep measured seconds only");
  AddIoOption(c, &o.io);
  return c;
}

int RunReproduce(const ScenarioCmdOptions& o) {
  if (o.vm && !o.name.empty()) {
    // Seed 003 in a guest: one scenario of the nonfull-vs-free group.
    auto all = workload::ShippedInReportOrder();
    if (!all.ok()) {
      fmt::print(stderr, "swaplab reproduce: {}\n", all.status().message());
      return 1;
    }
    const workload::Scenario* chosen = nullptr;
    for (const auto& sc : *all)
      if (sc.name == o.name && sc.group == "nonfull-vs-free") chosen = &sc;
    if (!chosen) {
      fmt::print(stderr,
                 "swaplab reproduce --vm: '{}' is not one of seed 003's scenarios "
                 "(nonfull-vs-free-8g, nonfull-vs-free-10g, nonfull-vs-free-all, with --kernel); "
                 "without a NAME it runs seed 001's two layouts only\n",
                 Printable(o.name));
      return 2;
    }
    if (o.vm_kernel.empty() || o.check_data || o.csv || o.list || !o.html_dir.empty() ||
        !o.host_cpu.empty() || o.io != area::EngineKind::kAuto) {
      fmt::print(stderr,
                 "swaplab reproduce NAME --vm: runs seed 003's scenarios on a kernel built with "
                 "kernel-patches/nonfull-6.12 (--kernel rfc-6.12), printed as text or --json, "
                 "--out DIR writes both (no --check-data, --csv, --html, --list or --host-cpu; no "
                 "--io: the guest swaps to zram, no image is read)\n");
      return 2;
    }
    return RunReproduceVmNonfull(*chosen, o);
  }
  if (o.vm) {
    if (!o.name.empty() || o.check_data || o.csv || !o.out_dir.empty() || o.list ||
        !o.html_dir.empty()) {
      fmt::print(
          stderr,
          "swaplab reproduce --vm: runs seed 001's two layouts only, printed as text or --json "
          "(no NAME, --check-data, --csv, --out, --html or --list)\n");
      return 2;
    }
    // The prices measured on the kernel the table boots (docs/results.md).
    std::optional<workload::HostCpuCost> cpu;
    if (const auto* p =
            workload::FindHostCpuProfile(o.vm_kernel.empty() ? "tcg-6.12" : "tcg-rfc-6.12"))
      cpu = p->Cost();
    if (!o.host_cpu.empty()) {
      const auto c = HostCpuOption(o, "reproduce");
      if (!c) return 2;
      cpu = *c;
    }
    if (!o.vm_kernel.empty()) return RunReproduceVmColumns(o, cpu ? &*cpu : nullptr);
    return RunReproduceVm(o, cpu ? &*cpu : nullptr);
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
    fmt::print(stderr, "swaplab reproduce: no shipped scenario or group '{}' (see --list)\n",
               Printable(o.name));
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
