// SPDX-License-Identifier: MIT
// `swaplab vm run`: `kernel run` inside a qemu guest. The guest boots a
// Debian kernel (6.12 by default) with an initramfs holding busybox, this
// swaplab program and the shared libraries it needs, and runs `swaplab
// kernel run` on the trace there — the same executor, the same trace
// semantics and cleanup as on the host — with its areas on an ext4 disk
// (swap files, loop devices over files) or zram. The written trace (the
// kernel's placements as `expect` lines) and the run's JSON come back on
// that disk; the host replays the trace in the model again to check.
#pragma once
#pragma GCC visibility push(default)

#include <csignal>
#include <string>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/vm/qemu.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::vm {

struct VmRunOptions {
  VmOptions vm;        // kernel, modules, accel, memory, CPUs (default 2), timeout
  std::string trace;   // swaplab-trace 1
  std::string device;  // kernel run's --device: file | loop | loop-ssd | zram
  std::string out;     // where the written trace goes ("" = nowhere)
  // The preset the guest compares with; empty: the preset of the guest
  // kernel's version (alloc::PresetForRelease).
  std::string policy;
  int reruns = 4;  // kernel run's --reruns
  bool annotate_inuse =
      false;             // kernel run's --annotate-inuse ("# kernel inuse N" in the written trace)
  bool floor = false;    // kernel run's --floor: one MADV_PAGEOUT of as many pages, timed
  std::string swaplab;   // the program run in the guest; empty: this one (/proc/self/exe)
  std::string keep_dir;  // copy the console, disk and traces here
};

struct VmRunResult {
  std::string release;  // the guest kernel's, from its console
  std::string accel, accel_why;
  std::string policy;         // compared with
  std::string kernel_json;    // the guest's `kernel run --json`, verbatim
  std::string written_trace;  // the trace with the kernel's expect lines
  // The host's replay of written_trace with `policy`: must agree with the
  // guest's own comparison.
  workload::ReplaySummary host_replay;
  double boot_wall_s = 0;  // host seconds from qemu's start to its exit (both boots)
  BootRetries retries;     // boots made again (BootRetrying)
  double guest_run_s = 0;  // kernel run's own seconds in the guest
};

Result<VmRunResult> RunInVm(const VmRunOptions& o, const volatile std::sig_atomic_t* interrupted);

}  // namespace swaplab::vm
#pragma GCC visibility pop
