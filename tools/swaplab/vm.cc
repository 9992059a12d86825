// SPDX-License-Identifier: MIT
// `swaplab vm hibernate`: seed 001's layouts on a real kernel in a qemu
// guest, its image read back, the model side by side.
#include "vm.h"

#include <fmt/core.h>

#include <algorithm>
#include <csignal>

#include "io_arg.h"
#include "policy_arg.h"
#include "progress.h"
#include "size_arg.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/output_file.h"
#include "swaplab/kernel/interrupt.h"
#include "swaplab/report/vm_report.h"
#include "swaplab/vm/vm_churn.h"
#include "swaplab/vm/vm_hibernate.h"
#include "swaplab/vm/vm_reproduce.h"
#include "swaplab/vm/vm_run.h"
#include "swaplab/workload/shipped.h"

namespace swaplab::tools {

namespace {

// The message line by line through Printable: it may hold a name from the
// command line (--kernel) or the guest console's tail, and neither may
// reach the terminal as control characters; the tail keeps its lines.
int Fail(const Status& st, int code, const char* cmd = "vm hibernate") {
  const std::string msg = st.ToString();
  std::string out;
  for (size_t at = 0; at <= msg.size();) {
    const size_t nl = std::min(msg.find('\n', at), msg.size());
    out += (at ? "\n" : "") + Printable(std::string_view(msg).substr(at, nl - at), kPathMax);
    at = nl + 1;
  }
  fmt::print(stderr, "swaplab {}: {}\n", cmd, out);
  return code;
}

int ExitCode(const Status& st) { return st.code() == -EINVAL ? 2 : st.code() == -EINTR ? 130 : 1; }

// SIGINT, SIGTERM and SIGHUP interrupt a vm run: the vm layer then kills
// qemu and removes its work dir.
constexpr auto kVmSignals = {SIGINT, SIGTERM, SIGHUP};

// The stages of `runs` guest runs (vm::HibernateStages) on `bar`; the
// note names the stage and, with several runs, the run.
void ShowStages(ProgressBar& bar, vm::VmOptions& vo, bool resume, int runs) {
  const size_t n = vm::HibernateStages(resume).size();
  bar.SetTotal(n * static_cast<size_t>(runs));
  vo.stage = [&bar, n, runs, run = -1](size_t k, const char* name) mutable {
    if (k == 0) ++run;  // a run starts with its first stage
    bar.Update(static_cast<size_t>(std::max(run, 0)) * n + k,
               runs > 1 ? fmt::format("run {}/{}: {}", run + 1, runs, name) : name);
  };
}

// The guest's kernel, command line, accelerator and memory (both subcommands).
void AddGuestCliOptions(CLI::App* a, VmCmdOptions& o) {
  a->add_option("--kernel", o.kernel,
                "bzImage, a series of the cache (6.12 | 6.1) or a kernel built by `vm kernel build "
                "--name NAME` (default: the cached Debian 6.12)");
  a->add_option("--modules", o.modules, "its lib/modules/RELEASE");
  a->add_option("--append", o.append, "extra kernel arguments");
  a->add_option("--accel", o.accel, "tcg | kvm | auto")
      ->check(CLI::IsMember({"tcg", "kvm", "auto"}));
  a->add_option("--mem", o.mem_mib, "guest memory, MiB")->capture_default_str();
}

}  // namespace

VmCommands AddVm(CLI::App& app, VmCmdOptions& o) {
  VmCommands c;
  c.vm = app.add_subcommand("vm", "a Linux kernel in a qemu guest (Debian's 6.12 by default)");
  c.vm->require_subcommand(1, 1);
  auto* h = c.hibernate = c.vm->add_subcommand(
      "hibernate",
      "the guest prepares a seed-001 layout, hibernates; kernel and model side by side");
  h->add_option("--layout", o.layout, "fresh | shuffled | holes")
      ->check(CLI::IsMember({"fresh", "shuffled", "holes"}));
  h->add_option("--swap", o.swap, "swap disk size (bytes, K/M/G)")->capture_default_str();
  h->add_option("--image", o.image, "memory in use at hibernation, about the image's size")
      ->capture_default_str();
  h->add_option("--compress", o.compress, "none | lzo | lz4")
      ->check(CLI::IsMember({"none", "lzo", "lz4"}));
  h->add_flag("--resume", o.resume, "boot again, resume the image, report the kernel's read time");
  h->add_flag("--json", o.json, "one JSON document");
  AddGuestCliOptions(h, o);
  h->add_option("--smp", o.smp, "guest CPUs")->capture_default_str();
  h->add_option("--timeout", o.timeout_s, "seconds per boot")->capture_default_str();
  h->add_flag("--rotational", o.rotational, "the guest marks the swap disk rotational");
  h->add_option("--seed", o.seed, "layout seed")->capture_default_str();
  h->add_option("--policy", o.policy, "the model's preset")->capture_default_str();
  h->add_option("--model-source", o.model_source,
                "the model's image slot source: base (6.12), free-clusters-sorted (a kernel "
                "booted with hibernate_alloc=clusters, kernel-patches/rfc-6.12)")
      ->check(CLI::IsMember({"base", "free-clusters-sorted"}))
      ->capture_default_str();
  AddKnobOption(h, &o.knobs);
  h->add_option("--keep", o.keep, "copy the disk, trace and consoles into DIR");
  h->add_option("--agent", o.agent, "the static guest agent (default: the one built with swaplab)");
  AddProgressOption(h, o.progress);
  AddIoOption(h, &o.io);

  auto* r = c.run = c.vm->add_subcommand(
      "run", "kernel run inside the guest: the trace on the guest kernel's swap, compared");
  r->add_option("trace", o.run_trace, "trace file (swaplab-trace 1)")->required();
  r->add_option("--device", o.run_device, "file | loop | loop-ssd | zram (as kernel run)")
      ->check(CLI::IsMember({"file", "loop", "loop-ssd", "zram"}))
      ->capture_default_str();
  r->add_option("--out", o.run_out, "write the trace with the kernel's placements as expect lines");
  r->add_option("--policy", o.run_policy,
                "model preset to compare with (default: the guest kernel's version's)");
  r->add_option("--reruns", o.run_reruns,
                "kernel run's --reruns in the guest (a quiet guest has no interference)")
      ->capture_default_str()
      ->check(CLI::Range(0, 20));
  r->add_flag("--floor", o.run_floor,
              "kernel run's --floor: the guest kernel's own swap-out of as many pages, timed");
  r->add_flag("--annotate-inuse", o.run_annotate,
              "kernel run's --annotate-inuse: '# kernel inuse N' after each record of --out");
  r->add_flag("--json", o.json, "one JSON document");
  AddGuestCliOptions(r, o);
  r->add_option("--smp", o.run_smp, "guest CPUs")->capture_default_str()->check(CLI::Range(1, 64));
  r->add_option("--timeout", o.timeout_s, "seconds for the boot and the run")
      ->capture_default_str();
  r->add_option("--keep", o.keep, "copy the console, result and written trace into DIR");
  AddProgressOption(r, o.progress);
  c.kernel = AddVmKernel(c.vm, o.kernel_build);
  return c;
}

namespace {

// The guest's options both subcommands share.
vm::VmOptions GuestOptions(const VmCmdOptions& o, int smp) {
  vm::VmOptions v;
  v.kernel = o.kernel;
  v.modules = o.modules;
  v.append = o.append;
  v.accel = *vm::ParseAccel(o.accel);
  v.mem_mib = o.mem_mib;
  v.smp = smp;
  v.timeout_s = o.timeout_s;
  return v;
}

int RunVmRun(const VmCmdOptions& o) {
  vm::VmRunOptions ro;
  ro.trace = o.run_trace;
  ro.device = o.run_device;
  ro.out = o.run_out;
  ro.policy = o.run_policy;
  ro.reruns = o.run_reruns;
  ro.annotate_inuse = o.run_annotate;
  ro.floor = o.run_floor;
  ro.keep_dir = o.keep;
  ro.vm = GuestOptions(o, o.run_smp);
  if (!ro.policy.empty())
    if (auto p = alloc::Policy::Preset(ro.policy); !p.ok()) return Fail(p.status(), 2, "vm run");
  ProgressBar bar(o.progress, 3, "stages");
  ro.vm.stage = [&bar](size_t k, const char* name) { bar.Update(k, name); };
  auto res = kernel::WithSignals<vm::VmRunResult>(
      kVmSignals, [&](auto* intr) { return vm::RunInVm(ro, intr); });
  if (res.ok()) bar.Update(3, "done");
  bar.End();
  if (!res.ok()) return Fail(res.status(), ExitCode(res.status()), "vm run");
  fmt::print("{}", o.json ? report::VmRunJson(ro, *res) : report::VmRunText(ro, *res));
  return 0;
}

}  // namespace

int RunVm(const VmCommands& c, const VmCmdOptions& o) {
  if (c.run->parsed()) return RunVmRun(o);
  if (c.kernel.kernel->parsed()) return RunVmKernel(c.kernel, o.kernel_build);
  vm::HibernateOptions ho;
  ho.layout = *workload::ParseRfcLayout(o.layout);
  ho.compress = *hibernate::ParseCompressor(o.compress);
  auto swap = ParseSize(o.swap, "--swap");
  if (!swap.ok()) return Fail(swap.status(), 2);
  auto image = ParseSize(o.image, "--image");
  if (!image.ok()) return Fail(image.status(), 2);
  ho.swap_bytes = *swap;
  ho.image_bytes = *image;
  ho.resume = o.resume;
  ho.seed = o.seed;
  ho.policy = o.policy;
  ho.knobs = o.knobs;
  ho.model_source = *hibernate::ParseSlotSource(o.model_source);
  ho.keep_dir = o.keep;
  ho.io = o.io;
  ho.vm = GuestOptions(o, o.smp);
  ho.vm.rotational = o.rotational;
  ho.vm.agent = o.agent;
  ProgressBar bar(o.progress, 0, "stages");
  ShowStages(bar, ho.vm, o.resume, 1);
  auto rep = kernel::WithSignals<vm::HibernateReport>(
      kVmSignals, [&](auto* intr) { return vm::RunHibernate(ho, intr); });
  if (rep.ok()) bar.Update(vm::HibernateStages(o.resume).size(), "done");
  bar.End();
  if (!rep.ok()) return Fail(rep.status(), ExitCode(rep.status()));
  fmt::print("{}", o.json ? report::VmHibernateJson(*rep) : report::VmHibernateText(*rep));
  return 0;
}

int RunReproduceVm(const ScenarioCmdOptions& o, const workload::HostCpuCost* cpu) {
  vm::SeedTableOptions so;
  so.scale = o.vm_scale;
  so.vm.accel = *vm::ParseAccel(o.accel);
  so.vm.mem_mib = 0;  // from the image size
  so.io = o.io;
  ProgressBar bar(o.progress, 0, "stages");
  ShowStages(bar, so.vm, /*resume=*/true, 2);  // both layouts, each resumed (RunSeedTable)
  auto rep = kernel::WithSignals<vm::SeedTableReport>(
      kVmSignals, [&](auto* intr) { return vm::RunSeedTable(so, intr); });
  if (rep.ok()) bar.Update(2 * vm::HibernateStages(true).size(), "done");
  bar.End();
  if (!rep.ok()) return Fail(rep.status(), ExitCode(rep.status()), "reproduce --vm");
  fmt::print("{}",
             o.json ? report::VmSeedTableJson(*rep, cpu) : report::VmSeedTableText(*rep, cpu));
  return 0;
}

int RunReproduceVmColumns(const ScenarioCmdOptions& o, const workload::HostCpuCost* cpu) {
  vm::RfcTableOptions ro;
  ro.table.scale = o.vm_scale;
  ro.table.vm.accel = *vm::ParseAccel(o.accel);
  ro.table.vm.mem_mib = 0;  // from the image size
  ro.table.vm.kernel = o.vm_kernel;
  ro.table.io = o.io;
  ro.runs = o.vm_runs;
  if (auto gk = vm::ResolveGuestKernel(ro.table.vm); !gk.ok())
    return Fail(gk.status(), 2, "reproduce --vm --kernel");
  ProgressBar bar(o.progress, 2 * ro.columns.size() * static_cast<size_t>(ro.runs), "runs");
  auto rep = kernel::WithSignals<vm::RfcTableReport>(kVmSignals, [&](auto* intr) {
    return vm::RunRfcTable(ro, intr, [&bar](size_t k, size_t n) {
      bar.Update(k, fmt::format("{}/{} hibernations", k, n));
    });
  });
  bar.End();
  if (!rep.ok()) return Fail(rep.status(), ExitCode(rep.status()), "reproduce --vm --kernel");
  fmt::print("{}", o.json ? report::VmRfcTableJson(*rep, cpu) : report::VmRfcTableText(*rep, cpu));
  return 0;
}

int RunReproduceVmNonfull(const workload::Scenario& sc_in, const ScenarioCmdOptions& o) {
  const std::string& out_dir = o.out_dir;
  if (!out_dir.empty())  // new, empty or ours: known before the VM runs
    if (Status s = area::PrepareOutputDir(out_dir); !s.ok()) return Fail(s, 2, "reproduce --vm");
  vm::NonfullTableOptions no;
  no.scenario = sc_in;
  workload::ScaleScenario(no.scenario, o.vm_scale_set ? o.vm_scale : vm::kNonfullVmScale);
  no.vm.accel = *vm::ParseAccel(o.accel);
  no.vm.kernel = o.vm_kernel;
  no.vm.smp = 2;
  no.vm.mem_mib = 1024;  // room for the large folios the faults ask for
  no.vm.timeout_s = 1800;
  no.runs = o.vm_runs;
  if (auto gk = vm::ResolveGuestKernel(no.vm); !gk.ok())
    return Fail(gk.status(), 2, "reproduce --vm --kernel");
  ProgressBar bar(o.progress, 2 * static_cast<size_t>(no.runs), "boots");
  auto rep = kernel::WithSignals<vm::NonfullTableReport>(kVmSignals, [&](auto* intr) {
    return vm::RunNonfullTable(
        no, intr, [&bar](size_t k, size_t n) { bar.Update(k, fmt::format("{}/{} builds", k, n)); });
  });
  bar.End();
  if (!rep.ok()) return Fail(rep.status(), ExitCode(rep.status()), "reproduce --vm --kernel");
  const std::string text = report::VmNonfullTableText(*rep), js = report::VmNonfullTableJson(*rep);
  fmt::print("{}", o.json ? js : text);
  if (!out_dir.empty()) {
    for (const auto& [name, content] :
         {std::pair<const char*, const std::string&>{"report.txt", text}, {"report.json", js}})
      if (Status st = area::WriteOutputDirFile(out_dir, name, content); !st.ok())
        return Fail(st, 1, "reproduce --vm");
  }
  return 0;
}

}  // namespace swaplab::tools
