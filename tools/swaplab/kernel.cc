// SPDX-License-Identifier: MIT
// `swaplab kernel run|cleanup`: a trace against the running kernel's swap,
// the placements compared with the model.
#include "kernel.h"

#include <fmt/core.h>
#include <unistd.h>

#include <csignal>

#include "policy_arg.h"
#include "progress.h"
#include "swaplab/kernel/host.h"
#include "swaplab/kernel/interrupt.h"
#include "swaplab/kernel/kernel_run.h"
#include "swaplab/report/kernel_report.h"
#include "swaplab/workload/size.h"

namespace swaplab::tools {

namespace {

int ExitCode(const Status& st) { return st.code() == -EINVAL ? 2 : 1; }

int RunCleanup(const KernelOptions& o) {
  if (!kernel::IsRoot()) {
    fmt::print(stderr, "swaplab kernel cleanup: needs root\n");
    return 1;
  }
  std::vector<std::string> log;
  const Status st = kernel::Cleanup(&log);
  if (o.json) {
    fmt::print("{}\n", report::CleanupJson(log, st).dump(2));
  } else {
    fmt::print("{}", report::CleanupText(log));
  }
  if (!st.ok()) fmt::print(stderr, "swaplab kernel cleanup: {}\n", st.ToString());
  return st.ok() ? 0 : 1;
}

int RunRun(const KernelOptions& o) {
  kernel::RunOptions ro;
  ro.trace = o.trace;
  if (access(o.trace.c_str(), R_OK) != 0) {
    fmt::print(stderr, "swaplab kernel run: {}: cannot read the trace: {}\n", o.trace,
               std::strerror(errno));
    return 2;
  }
  auto dev = kernel::ParseDeviceKind(o.device);
  if (!dev.ok()) {
    fmt::print(stderr, "swaplab kernel run: --device: {}\n", dev.status().message());
    return 2;
  }
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) {
    fmt::print(stderr, "swaplab kernel run: {}\n", policy.status().message());
    return 2;
  }
  ro.device = *dev;
  if (!o.size.empty()) {
    auto pages = workload::ParseSizeOrPages(o.size);
    if (!pages.ok()) {
      fmt::print(stderr,
                 "swaplab kernel run: --size: {} (pages, or bytes with K/M/G: a whole number "
                 "of pages)\n",
                 pages.status().message());
      return 2;
    }
    ro.size_pages = *pages;
  }
  ro.prio = o.prio;
  ro.annotate_inuse = o.annotate;
  ro.pageout_runs = !o.pageout_each;
  ro.floor = o.floor;
  ro.reruns = o.reruns;
  ro.timeout_s = o.timeout_s;
  ro.out = o.out;
  if (!kernel::IsRoot()) {
    fmt::print(stderr,
               "swaplab kernel run: needs root (swapon, /proc/PID/pagemap, sysfs); run as root\n");
    return 1;
  }
  ProgressBar bar(o.progress, 0, "records");
  ro.progress = [&bar](uint64_t done, uint64_t total) {
    bar.SetTotal(total);
    bar.Update(done, "kernel run");
  };
  auto k = kernel::WithSignals<kernel::KernelComparison>({SIGINT, SIGTERM}, [&](auto* intr) {
    return kernel::RunAndCompare(ro, o.device, *policy, intr);
  });
  bar.End();
  if (!k.ok()) {
    fmt::print(stderr, "swaplab kernel run: {}\n", k.status().ToString());
    return ExitCode(k.status());
  }
  if (!k->model_error.empty()) {
    fmt::print(stderr, "swaplab kernel run: replay in the model: {}\n", k->model_error);
    return 1;
  }
  if (o.json) {
    fmt::print("{}\n", report::KernelRunJson(*k).dump(2));
  } else {
    fmt::print("{}", report::KernelRunText(*k));
  }
  return 0;
}

}  // namespace

KernelCommands AddKernel(CLI::App& app, KernelOptions& o) {
  KernelCommands c;
  c.kernel = app.add_subcommand("kernel", "run traces against the running kernel's swap (root)");
  c.kernel->require_subcommand(1);
  c.run = c.kernel->add_subcommand(
      "run", "run a trace on a private swap area, record placements, compare with the model");
  c.run->add_option("trace", o.trace, "trace file (swaplab-trace 1)")->required();
  c.run->add_option("--device", o.device, "file | loop | loop-ssd | zram");
  c.run->add_option("--size", o.size,
                    "area size: pages, or bytes with K/M/G (default: the trace's pages=)");
  c.run->add_option("--out", o.out, "write the trace with the kernel's placements as expect lines");
  c.run->add_option("--policy", o.policy, "model preset to compare with")->capture_default_str();
  AddKnobOption(c.run, &o.knobs);
  c.run->add_option("--prio", o.prio, "swapon priority when the trace gives none")
      ->check(CLI::Range(0, alloc::kMaxSwapPrio));
  c.run->add_option("--timeout", o.timeout_s, "seconds before the run gives up")
      ->check(CLI::Range(1, 3600));
  c.run
      ->add_option("--reruns", o.reruns,
                   "runs made again while one saw slots taken outside the trace that it could "
                   "not account for")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  c.run->add_flag("--json", o.json, "one JSON document on stdout");
  AddProgressOption(c.run, o.progress);
  c.run->add_flag("--annotate-inuse", o.annotate,
                  "write '# kernel inuse N' (slots in use) after each record of --out");
  c.run->add_flag("--pageout-each", o.pageout_each,
                  "one MADV_PAGEOUT per folio (default: consecutive order-0 allocs of a CPU "
                  "share one while the swap areas are under half full; placed the same)");
  c.run->add_flag("--floor", o.floor,
                  "after the records, time the kernel's own swap-out of as many pages (one "
                  "MADV_PAGEOUT, with their faults) on a fresh area: the run's floor");
  c.cleanup = c.kernel->add_subcommand(
      "cleanup", "remove swap areas and settings left by a crashed run (only swaplab's)");
  c.cleanup->add_flag("--json", o.json, "one JSON document on stdout");
  return c;
}

int RunKernel(const KernelCommands& c, const KernelOptions& o) {
  if (c.cleanup->parsed()) return RunCleanup(o);
  return RunRun(o);
}

}  // namespace swaplab::tools
