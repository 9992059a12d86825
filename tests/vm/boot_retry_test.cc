// SPDX-License-Identifier: MIT
// BootRetryingHang and CopySparse, with a stand-in for qemu (a shell script
// written here) that prints a console like a guest's: a boot stopped on the
// guest's hung-task report is made again once on its drives as they were
// before it, a second hang comes back stopped, a good boot is not repeated.
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
// beside the script) does line N of `script`: "hang" (the hung-task line,
// then waits to be killed) or "ok" (powers off). Each boot appends the
// drive's first byte to `record`, then writes an 'X' there; the command
// line goes to `append`.
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
echo "[    1.0] swaplab-init: start at uptime 1.00 s" >"$log"
case "$(sed -n "${n}p" "$dir/script")" in
  hang) echo "[   21.0] INFO: task kworker/u2:1:42 blocked for more than 20 seconds." >>"$log"; exec sleep 600 ;;
  ok) echo "[    2.0] reboot: Power down" >>"$log" ;;
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
  Result<BootResult> Run(const std::string& script, int* retries) {
    Spit(dir_ + "/script", script);
    Spit(dir_ + "/disk.img", "A");
    ::unlink((dir_ + "/count").c_str());
    ::unlink((dir_ + "/record").c_str());
    return BootRetryingHang(opts_, spec_, dir_, nullptr, retries);
  }
  std::optional<workload::WorkDir> wd_;
  std::string dir_;
  VmOptions opts_;
  BootSpec spec_;
};

TEST_F(BootRetry, AHangIsBootedAgainOnTheDriveAsItWas) {
  int retries = 0;
  auto r = Run("hang\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->powered_off);
  EXPECT_FALSE(r->stopped);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(Slurp(dir_ + "/record"), "AA");  // the second boot saw the drive unwritten
  EXPECT_EQ(Slurp(dir_ + "/disk.img"), "X");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/guest.drive0.before-boot"));
}

TEST_F(BootRetry, ASecondHangComesBackStopped) {
  int retries = 0;
  auto r = Run("hang\nhang\nok\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->stopped);
  EXPECT_FALSE(r->powered_off);
  EXPECT_EQ(retries, 1);
  EXPECT_EQ(Slurp(dir_ + "/count"), "2\n");
}

TEST_F(BootRetry, AGoodBootIsNotRepeated) {
  int retries = 0;
  auto r = Run("ok\nhang\n", &retries);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->powered_off);
  EXPECT_EQ(retries, 0);
  EXPECT_EQ(Slurp(dir_ + "/record"), "A");
}

TEST_F(BootRetry, TheGuestReportsHangsAfter20Seconds) {
  int retries = 0;
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
