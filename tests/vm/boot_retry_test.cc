// SPDX-License-Identifier: MIT
// BootRetrying, KernelFailedBeforeInit and CopySparse, with a stand-in for
// qemu (a shell script written here) that prints a console like a guest's:
// a boot stopped on the guest's hung-task report, or whose kernel panicked
// or oopsed before init, is made again once on its drives as they were
// before it; a second failure comes back as one; a good boot, or an oops
// after init, is not repeated.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "swaplab/vm/qemu.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::vm {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Finds -serial file:LOG and the first -drive file=PATH; boot N (a counter
// beside the script) does line N of `script`: "hang" (init, the hung-task
// line, then waits to be killed), "ok" (init, powers off), "panic" (6.12's
// early oops and panic, no init, exits as qemu -no-reboot does), "oops"
// (6.1's oops line, no init, waits to be killed) or "lateoops" (init, an
// oops, powers off). Each boot appends the drive's first byte to
// `record`, then writes an 'X' there; the command line goes to `append`.
constexpr char kFakeQemu[] = R"sh(#!/bin/sh
log="" disk=""
while [ $# -gt 0 ]; do
  case "$1" in
    -serial) log="${2#file:}"; shift ;;
    -drive) disk="$(echo "$2" | sed 's/^file=\([^,]*\),.*/\1/')"; shift ;;
    -append) echo "$2" >"$(dirname "$0")/append"; shift ;;
  esac
  shift
done
dir="$(dirname "$0")"
n=$(($(cat "$dir/count" 2>/dev/null || echo 0) + 1))
echo "$n" >"$dir/count"
head -c1 "$disk" >>"$dir/record"
printf X | dd of="$disk" conv=notrunc status=none
echo "[    0.0] Linux version 6.12.57+deb13-amd64" >"$log"
init() { echo "[    1.0] swaplab-init: start at uptime 1.00 s, kernel 6.12.57+deb13-amd64" >>"$log"; }
case "$(sed -n "${n}p" "$dir/script")" in
  hang) init; echo "[   21.0] INFO: task kworker/u2:1:42 blocked for more than 20 seconds." >>"$log"; exec sleep 600 ;;
  ok) init; echo "[    2.0] reboot: Power down" >>"$log" ;;
  panic) printf '%s\n' "[    1.7] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" \
    "[    1.7] RIP: 0010:sched_clock_cpu+0x10/0x1a0" \
    "[    1.8] Kernel panic - not syncing: Attempted to kill the idle task!" >>"$log" ;;
  oops) echo "[    1.7] int3: 0000 [#1] PREEMPT SMP NOPTI" >>"$log"; exec sleep 600 ;;
  lateoops) init; echo "[    3.0] BUG: kernel NULL pointer dereference, address: 0000000000000008" >>"$log"
    echo "[    3.0] Oops: 0000 [#1] PREEMPT SMP NOPTI" >>"$log"; echo "[    4.0] reboot: Power down" >>"$log" ;;
esac
)sh";

class BootRetry : public ::testing::Test {
 protected:
  void SetUp() override {
    auto wd = workload::WorkDir::Create();
    ASSERT_TRUE(wd.ok()) << wd.status().message();
    wd_.emplace(std::move(wd).value());
    dir_ = wd_->path();
    opts_.qemu = dir_ + "/fake-qemu";
    Spit(opts_.qemu, kFakeQemu);
    ASSERT_EQ(chmod(opts_.qemu.c_str(), 0755), 0);
    spec_.name = "guest";
    spec_.timeout_s = 60;
    spec_.drives = {{dir_ + "/disk.img"}};
  }
  // Boots with the boots behaving as `script`; the drive starts as "A".
  Result<BootResult> Run(const std::string& script, BootRetries* retries) {
    Spit(dir_ + "/script", script);
    Spit(dir_ + "/disk.img", "A");
    ::unlink((dir_ + "/count").c_str());
    ::unlink((dir_ + "/record").c_str());
    return BootRetrying(opts_, spec_, dir_, nullptr, retries);
  }
  std::optional<workload::WorkDir> wd_;
  std::string dir_;
  VmOptions opts_;
  BootSpec spec_;
};

TEST_F(BootRetry, AHangIsBootedAgainOnTheDriveAsItWas) {
  BootRetries retries;
  auto r = Run("hang\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->powered_off);
  EXPECT_FALSE(r->stopped);
  EXPECT_EQ(retries.hang, 1);
  EXPECT_EQ(retries.kernel_failure, 0);
  EXPECT_EQ(Slurp(dir_ + "/record"), "AA");  // the second boot saw the drive unwritten
  EXPECT_EQ(Slurp(dir_ + "/disk.img"), "X");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/guest.drive0.before-boot"));
}

TEST_F(BootRetry, ASecondHangComesBackStopped) {
  BootRetries retries;
  auto r = Run("hang\nhang\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->stopped);
  EXPECT_FALSE(r->powered_off);
  EXPECT_EQ(retries.hang, 1);
  EXPECT_EQ(retries.kernel_failure, 0);
  EXPECT_EQ(Slurp(dir_ + "/count"), "2\n");
}

TEST_F(BootRetry, AGoodBootIsNotRepeated) {
  BootRetries retries;
  auto r = Run("ok\nhang\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->powered_off);
  EXPECT_EQ(retries.hang, 0);
  EXPECT_EQ(retries.kernel_failure, 0);
  EXPECT_EQ(Slurp(dir_ + "/record"), "A");
}

TEST_F(BootRetry, APanicBeforeInitIsBootedAgainOnTheDriveAsItWas) {
  BootRetries retries;
  auto r = Run("panic\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->powered_off);
  EXPECT_FALSE(r->kernel_failed);
  EXPECT_EQ(retries.kernel_failure, 1);
  EXPECT_EQ(retries.hang, 0);
  EXPECT_EQ(Slurp(dir_ + "/record"), "AA");
}

TEST_F(BootRetry, AnOopsBeforeInitIsKilledWithoutWaitingForTheTimeout) {
  BootRetries retries;
  auto r = Run("oops\noops\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->kernel_failed);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->powered_off);
  EXPECT_LT(r->wall_s, 30);  // two boots, each killed 2 s after its oops, not at 60 s
  EXPECT_EQ(retries.kernel_failure, 1);
  EXPECT_EQ(Slurp(dir_ + "/count"), "2\n");
  EXPECT_EQ(WhyBootFailed(*r), "the guest kernel failed before its init, twice");
}

TEST_F(BootRetry, AnOopsAfterInitIsTheRunsOwnAndNotRepeated) {
  BootRetries retries;
  auto r = Run("lateoops\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->kernel_failed);
  EXPECT_EQ(retries.kernel_failure, 0);
  EXPECT_EQ(Slurp(dir_ + "/count"), "1\n");
  EXPECT_NE(r->console.find("Oops: 0000 [#1]"), std::string::npos);
}

TEST(KernelFailedBeforeInit, PanicsAndOopsesOfEachSeriesBeforeInitOnly) {
  const std::string init = "[    2.3] swaplab-init: start at uptime 2.33 s\n";
  for (const char* line :
       {"[    1.7] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n",
        "[    1.7] int3: 0000 [#1] PREEMPT SMP NOPTI\n",
        "[    0.9] general protection fault, probably for non-canonical address "
        "0xdead000000000100: 0000 [#12] SMP NOPTI\n",
        "[    1.1] Kernel panic - not syncing: VFS: Unable to mount root fs\n"}) {
    EXPECT_TRUE(KernelFailedBeforeInit(std::string(line) + init)) << line;
    EXPECT_TRUE(KernelFailedBeforeInit(line)) << line;  // and no init at all
    EXPECT_FALSE(KernelFailedBeforeInit(init + line)) << line;
  }
  for (const char* line :
       {"[    1.0] WARNING: CPU: 0 PID: 1 at kernel/time/clocksource.c:123 foo+0x1/0x2\n",
        "[    1.0] BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:1]\n",
        "[    1.0] random: crng init done [#1]\n", "[    1.0] x: 00zz [#1]\n",
        "[    1.0] x: 0000 [#]\n", "[#1]"})
    EXPECT_FALSE(KernelFailedBeforeInit(std::string(line) + init)) << line;
}

TEST_F(BootRetry, TheGuestReportsHangsAfter20Seconds) {
  BootRetries retries;
  spec_.append = "swaplab.mode=run";
  auto r = Run("ok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string append = Slurp(dir_ + "/append");
  EXPECT_NE(append.find("swaplab.mode=run sysctl.kernel.hung_task_timeout_secs=20"),
            std::string::npos)
      << append;
}

TEST(CopySparse, KeepsTheDataAndTheHoles) {
  auto wd = workload::WorkDir::Create();
  ASSERT_TRUE(wd.ok());
  const std::string from = wd->path() + "/from", to = wd->path() + "/to";
  const int fd = ::open(from.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 16 << 20), 0);  // 16 MiB, two 4 KiB pieces of data
  ASSERT_EQ(pwrite(fd, "head", 4, 0), 4);
  ASSERT_EQ(pwrite(fd, "tail", 4, (8 << 20) + 4096), 4);
  ::close(fd);
  Spit(to, std::string(100, 'z'));  // replaced
  ASSERT_TRUE(CopySparse(from, to).ok());
  EXPECT_EQ(Slurp(from), Slurp(to));
  struct stat st {};
  ASSERT_EQ(stat(to.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 16 << 20);
  EXPECT_LT(st.st_blocks * 512, 1 << 20);  // the holes stayed holes
  EXPECT_FALSE(CopySparse(wd->path() + "/missing", to).ok());
  EXPECT_FALSE(CopySparse(wd->path(), to).ok());  // a directory
}

}  // namespace
}  // namespace swaplab::vm
