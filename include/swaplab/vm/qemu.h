// SPDX-License-Identifier: MIT
// A Linux kernel in a qemu guest: which kernel (Debian's packaged 6.12 from
// scripts/guest-kernel's cache by default), the accelerator, one boot with
// the serial console to a file, a time limit and cancellation. Every qemu
// started here is killed and reaped before the call returns, on every path.
#pragma once
#pragma GCC visibility push(default)
#include <csignal>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::vm {

// The model preset of the guest's default kernel (Debian's 6.12, above):
// what vm hibernate, vm reproduce and vm churn compare the guest with
// unless --policy says otherwise.
inline constexpr std::string_view kGuestPreset = "linux-6.12";

enum class Accel { kTcg, kKvm, kAuto };
Result<Accel> ParseAccel(std::string_view s);  // "tcg" | "kvm" | "auto"
const char* Name(Accel a);

// An unpacked kernel package: vmlinuz and its lib/modules/RELEASE.
struct GuestKernel {
  std::string release;  // "6.12.57+deb13-amd64"; empty for a user's kernel of unknown release
  std::string kernel;   // bzImage
  std::string modules;  // lib/modules/RELEASE
  // A kernel built by scripts/vm-kernel-build: its name and what it was
  // built from (recipe.txt: source, fragments, patches); empty otherwise.
  std::string name;
  std::string recipe;
};
// The newest release unpacked in `cache` (a directory with RELEASE/.unpacked;
// empty: $SWAPLAB_GUEST_KERNEL_CACHE or /var/cache/swaplab/guest-kernel),
// of `series` ("6.12", "6.1": releases "6.12.*", "6.1.*") when given.
// -ENOENT with what to run when there is none.
Result<GuestKernel> FindGuestKernel(const std::string& cache = "", const std::string& series = "");
// Whether a --kernel argument names a series of the cache ("6.12", "6.1")
// rather than a bzImage.
bool IsKernelSeries(const std::string& kernel_arg);
// The kernel `swaplab vm kernel build --name NAME` built: CACHE/names/NAME
// (empty cache: $SWAPLAB_KERNEL_BUILD_CACHE or
// /var/cache/swaplab/kernel-build). -ENOENT with the names there are when
// there is none of that name.
Result<GuestKernel> FindBuiltKernel(const std::string& name, const std::string& cache = "");
// Whether a --kernel argument is a built kernel's name: no '/', not a
// series, not a file in the working directory.
bool IsKernelName(const std::string& kernel_arg);

struct VmOptions {
  std::string kernel;   // bzImage; empty: the cached Debian kernel
  std::string modules;  // its modules dir; empty: the cached kernel's
  std::string append;   // extra kernel arguments
  Accel accel = Accel::kAuto;
  int mem_mib = 384;
  int smp = 1;
  int timeout_s = 300;      // per boot
  std::string swap_disk;    // host file given to the guest as /dev/vda; empty: a temporary one
  bool rotational = false;  // the guest marks /dev/vda rotational before swapon
  std::string qemu = "qemu-system-x86_64";
  std::string agent;  // the static guest agent; empty: the one built with swaplab
  // A run's stages as they begin (vm_hibernate.h, HibernateStages): stage
  // k of them, on the caller's thread. Read-only.
  std::function<void(size_t k, const char* name)> stage = nullptr;
};

// The kernel a run boots: opts.kernel a bzImage (with opts.modules), a
// series of the cache ("6.12", "6.1") or empty (the newest cached one);
// opts.modules overrides the cached kernel's modules. -EINVAL for a bzImage
// without its modules.
Result<GuestKernel> ResolveGuestKernel(const VmOptions& opts);

struct Drive {
  std::string path;  // raw file
};

struct BootSpec {
  std::string name;  // console in WORKDIR/NAME.log
  std::string kernel, initrd;
  std::string append;         // the whole command line after the fixed part
  std::vector<Drive> drives;  // /dev/vda, /dev/vdb, ...
  Accel accel = Accel::kTcg;  // kTcg or kKvm
  int timeout_s = 300;
  std::string stop_on;  // non-empty: kill the guest once the console shows this
  // Console texts awaited in this order; on_milestone(k) is called (on the
  // caller's thread, polled ten times a second) once the k-th has shown.
  std::vector<std::string> milestones;
  std::function<void(size_t k)> on_milestone = nullptr;
};

struct BootResult {
  std::string console;  // the serial console, \r removed
  std::string qemu_stderr;
  double wall_s = 0;         // host seconds from spawn to exit
  bool powered_off = false;  // the guest powered itself off ("reboot: Power down")
  bool timed_out = false;
  bool stopped = false;  // killed after stop_on was seen
  // The kernel failed before the guest's init (KernelFailedBeforeInit):
  // it exited (panic=-1, -no-reboot) or was killed 2 s after the failure.
  bool kernel_failed = false;
  int exit_status = 0;  // qemu's, or 128 + signal
};

// A boot named `name` of `gk` with `initrd`, `accel` and opts's time limit;
// the caller adds the command line, drives and milestones.
BootSpec BootOf(std::string name, const GuestKernel& gk, std::string initrd, Accel accel,
                const VmOptions& opts);

// Boots once (posix_spawn of opts.qemu) and waits. The guest is killed
// (SIGKILL, reaped) on timeout, once stop_on shows, or when *interrupted
// becomes non-zero (then -EINTR). -ENOENT when qemu cannot be started.
Result<BootResult> Boot(const VmOptions& opts, const BootSpec& b, const std::string& workdir,
                        const volatile std::sig_atomic_t* interrupted);

// What the guest's hung-task detector prints (kernel/hung_task.c), and the
// command-line setting that makes it report after 20 s instead of 120.
inline constexpr char kGuestHangLine[] = "blocked for more than";
inline constexpr char kGuestHangTimeoutArg[] = " sysctl.kernel.hung_task_timeout_secs=20";

// The first line of the guest's init (src/vm/guest/init.sh), and the line
// panic() prints (kernel/panic.c).
inline constexpr char kGuestInitLine[] = "swaplab-init: start at uptime";
inline constexpr char kKernelPanicLine[] = "Kernel panic - not syncing";

// Whether the kernel failed before the guest's init started: a panic or
// an oops (die()'s "...: 0000 [#1] ..." line) on `console` before
// kGuestInitLine, or anywhere when that line never came. A warning
// (WARN_ON's "WARNING: CPU: ...") or an oops after init is not one.
bool KernelFailedBeforeInit(std::string_view console);

// The boots BootRetrying made again, by why.
struct BootRetries {
  int hang = 0;            // the guest's hung-task report (kGuestHangLine)
  int kernel_failure = 0;  // the kernel failed before init (KernelFailedBeforeInit)
};

// Boot(), made again once when the guest hangs or its kernel fails before
// init. Under TCG a guest's block I/O has been seen to stop completing,
// once in many boots (a task blocked in blk_mq_get_tag or wbt_wait, qemu
// idle; the kernel's own image write stuck at 70 %): the hung-task
// detector, set to 20 s here, reports it and the boot is stopped
// (stop_on). Debian's 6.12 has been seen to oops early in boot under TCG
// ("Oops: int3" in sched_clock_cpu at 1.7 s, before init): the boot ends
// with the panic (panic=-1, -no-reboot) or is killed 2 s after the oops.
// Either way every drive is put back as it was before the boot (a copy
// taken first, holes kept) and the guest booted again. A second failure
// comes back as a BootResult with `stopped` or `kernel_failed` set
// (WhyBootFailed names it). `*retries` (may be null) counts the boots
// made again.
Result<BootResult> BootRetrying(const VmOptions& opts, BootSpec b, const std::string& workdir,
                                const volatile std::sig_atomic_t* interrupted,
                                BootRetries* retries);

// Why a boot did not end as planned, for an error message: "the guest
// kernel failed before its init, twice", "the guest's block I/O hung
// twice", "the guest timed out" or "the guest stopped".
std::string WhyBootFailed(const BootResult& r);

// Copies `from` to `to` (replaced), keeping holes (SEEK_DATA / SEEK_HOLE).
Status CopySparse(const std::string& from, const std::string& to);

// --keep DIR: writes `text` to DIR/name (DIR made first); nothing when DIR
// is empty.
void KeepText(const std::string& dir, const std::string& name, const std::string& text);

// The last `lines` lines of a console (all of it when shorter).
std::string ConsoleTail(const std::string& console, int lines);

// kTcg / kKvm as asked; kAuto: kvm only if /dev/kvm is usable and a probe
// boot (swaplab.mode=probe) reaches init within 25 s, else tcg. `why` says
// which and why. A failed probe is remembered until the host reboots
// (/run/swaplab/kvm-probe-failed) and not tried again with the same
// /dev/kvm and guest kernel.
Result<Accel> ResolveAccel(const VmOptions& opts, const std::string& kernel,
                           const std::string& initrd, const std::string& workdir,
                           const volatile std::sig_atomic_t* interrupted, std::string* why);

}  // namespace swaplab::vm
#pragma GCC visibility pop
