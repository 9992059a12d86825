// SPDX-License-Identifier: MIT
// swaplab: the command line. One file per subcommand.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <system_error>

#include "area.h"
#include "demo.h"
#include "doctor.h"
#include "help_gen.h"
#include "image.h"
#include "kernel.h"
#include "map.h"
#include "replay.h"
#include "scenario_cmds.h"
#include "sweep.h"
#include "trace_cmd.h"
#include "vm.h"

namespace {

// A report that did not reach stdout (a full disk, /dev/full, a closed
// pipe) is a failure: exit 1 with a message, never 0.
int StdoutChecked(int rc) {
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
  if (!failed) return rc;
  std::fprintf(stderr, "swaplab: writing the output to stdout failed: %s\n", std::strerror(errno));
  return rc == 0 ? 1 : rc;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef M_MMAP_THRESHOLD
  // glibc raises its mmap threshold to the largest block freed so far (up
  // to 32 MiB); after that, a job's big lists come from the thread's arena
  // and stay resident once freed, under the next job's. A fixed threshold
  // keeps them mmap'd, returned when freed (the default run's peak RSS:
  // docs/performance.md, "Peak memory of the default run").
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
  CLI::App app{"swaplab — the Linux swap slot allocator and hibernation image path, in user space"};
  app.require_subcommand(0, 1);
  swaplab::tools::DemoOptions demo;
  CLI::App* demo_cmd = swaplab::tools::AddDemo(app, demo);
  swaplab::tools::AreaOptions area;
  const swaplab::tools::AreaCommands area_cmds = swaplab::tools::AddArea(app, area);
  swaplab::tools::ImageOptions image;
  const swaplab::tools::ImageCommands image_cmds = swaplab::tools::AddImage(app, image);
  swaplab::tools::KernelOptions kernel;
  const swaplab::tools::KernelCommands kernel_cmds = swaplab::tools::AddKernel(app, kernel);
  swaplab::tools::ReplayOptions replay;
  CLI::App* replay_cmd = swaplab::tools::AddReplay(app, replay);
  swaplab::tools::ScenarioCmdOptions run_opts, repro_opts;
  CLI::App* run_cmd = swaplab::tools::AddRun(app, run_opts);
  CLI::App* repro_cmd = swaplab::tools::AddReproduce(app, repro_opts);
  swaplab::tools::MapOptions map_opts;
  CLI::App* map_cmd = swaplab::tools::AddMap(app, map_opts);
  swaplab::tools::VmCmdOptions vm_opts;
  const swaplab::tools::VmCommands vm_cmds = swaplab::tools::AddVm(app, vm_opts);
  swaplab::tools::DoctorCmdOptions doctor_opts;
  CLI::App* doctor_cmd = swaplab::tools::AddDoctor(app, doctor_opts);
  swaplab::tools::TraceCmdOptions trace_opts;
  const swaplab::tools::TraceCommands trace_cmds = swaplab::tools::AddTrace(app, trace_opts);
  swaplab::tools::SweepOptions sweep_opts;
  const swaplab::tools::SweepCommands sweep_cmds = swaplab::tools::AddSweep(app, sweep_opts);
  swaplab::tools::HelpOutputs help_outputs;
  swaplab::tools::AddHelpOutputs(app, help_outputs);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Bad usage exits 2 (design.md); --help and friends exit 0.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  // Out of memory (a run larger than this machine or its RLIMIT_AS allows):
  // a message and exit 1, not an abort; the unwinding removes the run's
  // temporary areas on the way (TempFile).
  if (swaplab::tools::RunHelpOutputs(app, help_outputs)) return 0;
  try {
    if (area_cmds.area->parsed()) return StdoutChecked(swaplab::tools::RunArea(area_cmds, area));
    if (image_cmds.image->parsed())
      return StdoutChecked(swaplab::tools::RunImage(image_cmds, image));
    if (kernel_cmds.kernel->parsed())
      return StdoutChecked(swaplab::tools::RunKernel(kernel_cmds, kernel));
    if (vm_cmds.vm->parsed()) return StdoutChecked(swaplab::tools::RunVm(vm_cmds, vm_opts));
    if (sweep_cmds.sweep->parsed())
      return StdoutChecked(swaplab::tools::RunSweep(sweep_cmds, sweep_opts));
    if (trace_cmds.trace->parsed())
      return StdoutChecked(swaplab::tools::RunTrace(trace_cmds, trace_opts));
    if (map_cmd->parsed()) return StdoutChecked(swaplab::tools::RunMap(map_opts));
    if (doctor_cmd->parsed()) return StdoutChecked(swaplab::tools::RunDoctor(doctor_opts));
    if (replay_cmd->parsed()) return StdoutChecked(swaplab::tools::RunReplay(replay));
    if (run_cmd->parsed()) return StdoutChecked(swaplab::tools::RunRun(run_opts));
    if (repro_cmd->parsed()) return StdoutChecked(swaplab::tools::RunReproduce(repro_opts));
    if (demo_cmd->parsed()) return StdoutChecked(swaplab::tools::RunDemo(demo));
    // No subcommand: the main job, on its built-in default.
    if (app.get_subcommands().empty())
      return StdoutChecked(swaplab::tools::RunReproduce(repro_opts));
  } catch (const std::bad_alloc&) {
    std::fputs(
        "swaplab: out of memory: this run needs more memory than the process may have (RLIMIT_AS, "
        "RAM)\n",
        stderr);
    return 1;
  } catch (const std::system_error& e) {  // e.g. a thread that cannot start
    const bool memory = e.code() == std::errc::resource_unavailable_try_again ||
                        e.code() == std::errc::not_enough_memory;
    if (memory)
      std::fprintf(stderr,
                   "swaplab: out of memory (%s): this run needs more memory than the process may "
                   "have (RLIMIT_AS, RAM)\n",
                   e.what());
    else
      std::fprintf(stderr, "swaplab: %s\n", e.what());
    return 1;
  }
  return 0;
}
