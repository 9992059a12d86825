// SPDX-License-Identifier: MIT
// swaplab doctor's findings on recorded systems: a directory with the
// proc/, sys/ and dev/ files doctor reads (DoctorOptions::root), one
// misconfiguration at a time, and hostile contents. The swap-file cases use
// a real file here, its extents read with FIEMAP by the test itself.
#include "swaplab/kernel/doctor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "kernel/doctor_layout.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::kernel {
namespace {

namespace fs = std::filesystem;

constexpr char kSwapsHeader[] = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

class Tree : public ::testing::Test {
 protected:
  void SetUp() override {
    auto wd = workload::WorkDir::Create();
    ASSERT_TRUE(wd.ok()) << wd.status().message();
    wd_.emplace(std::move(wd).value());
    root_ = wd_->path();
    // A healthy machine: Debian's 6.12, a swap partition named by UUID.
    Put("proc/sys/kernel/osrelease", "6.12.118+deb12-amd64\n");
    Put("sys/power/state", "freeze mem disk\n");
    Put("sys/power/disk", "[platform] shutdown reboot suspend test_resume\n");
    Put("sys/power/image_size", "1651507200\n");
    Put("sys/power/reserved_size", "1048576\n");
    Put("sys/power/resume", "8:2\n");
    Put("sys/power/resume_offset", "0\n");
    Put("sys/module/hibernate/parameters/compressor", "lzo\n");
    Put("sys/class/block/sda2/dev", "8:2\n");
    Put("sys/class/block/sdb1/dev", "8:17\n");
    Put("sys/class/block/zram0/dev", "252:0\n");
    Link("dev/disk/by-uuid/0b1c-5wap", "../../sda2");
    Link("dev/disk/by-uuid/other", "../../sdb1");
    Put("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro resume=UUID=0b1c-5wap quiet\n");
    Put("proc/swaps",
        std::string(kSwapsHeader) +
            "/dev/sda2                               partition\t8388604\t\t0\t\t-2\n");
    Meminfo(4000000, 3000000, 200000);
  }

  void Put(const std::string& rel, const std::string& text) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  }
  void Link(const std::string& rel, const std::string& target) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    fs::create_symlink(target, p);
  }
  void Meminfo(uint64_t total, uint64_t free, uint64_t active_anon) {
    Put("proc/meminfo", "MemTotal:       " + std::to_string(total) +
                            " kB\nMemFree:        " + std::to_string(free) +
                            " kB\nActive(anon):   " + std::to_string(active_anon) +
                            " kB\nInactive(anon):   100000 kB\nActive(file):   300000 kB\n"
                            "Inactive(file):   200000 kB\nSReclaimable:    50000 kB\n");
  }
  DoctorReport Run(uint64_t image_bytes = 0) {
    DoctorOptions o;
    o.root = root_;
    o.image_bytes = image_bytes;
    return RunDoctor(o);
  }

  std::optional<workload::WorkDir> wd_;
  std::string root_;
};

// The findings of `check` at `severity`, their texts joined.
std::string Find(const DoctorReport& r, Severity severity, const std::string& check) {
  std::string out;
  for (const auto& f : r.findings)
    if (f.severity == severity && f.check == check) out += f.seen + " | " + f.todo + "\n";
  return out;
}

std::string All(const DoctorReport& r) {
  std::string out;
  for (const auto& f : r.findings)
    out += std::string(Name(f.severity)) + " " + f.check + ": " + f.seen + " -> " + f.todo + "\n";
  return out;
}

TEST_F(Tree, AHealthyMachineHasNoWarning) {
  const DoctorReport r = Run();
  EXPECT_LT(r.worst, Severity::kWarning) << All(r);
  EXPECT_TRUE(r.facts.can_hibernate);
  EXPECT_EQ(r.facts.target, 0);
  EXPECT_EQ(r.facts.cmdline_resume_dev, "8:2");
  EXPECT_NE(Find(r, Severity::kOk, "resume"), "") << All(r);
  EXPECT_NE(Find(r, Severity::kOk, "resume at boot"), "") << All(r);
  EXPECT_NE(Find(r, Severity::kOk, "image fit"), "") << All(r);
  EXPECT_EQ(r.facts.compressor, "lzo");
  // 1 GB in use, 0.7 GB of it reclaimable: the 1.65 GB goal is above it.
  EXPECT_EQ(r.facts.saveable_pages, 250000u);
  EXPECT_EQ(r.facts.image_pages, 250000u);
  EXPECT_EQ(r.facts.image_total_pages, 1 + (250000u + 511) / 512 + 250000u);
}

TEST_F(Tree, LockdownIsNamedWhenDiskIsMissing) {
  Put("sys/power/state", "freeze mem\n");
  Put("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
  const DoctorReport r = Run();
  EXPECT_EQ(r.worst, Severity::kError);
  EXPECT_NE(Find(r, Severity::kError, "hibernation").find("lockdown is at 'integrity'"),
            std::string::npos)
      << All(r);
  EXPECT_FALSE(r.facts.can_hibernate);
  // The rest is still checked.
  EXPECT_NE(Find(r, Severity::kOk, "resume"), "") << All(r);
}

TEST_F(Tree, NohibernateAndAKernelWithoutHibernationAreNamed) {
  Put("sys/power/state", "freeze mem\n");
  Put("proc/cmdline", "root=/dev/sda1 nohibernate resume=/dev/sda2\n");
  EXPECT_NE(Find(Run(), Severity::kError, "hibernation").find("nohibernate"), std::string::npos);
  Put("proc/cmdline", "root=/dev/sda1 resume=/dev/sda2\n");
  fs::remove(fs::path(root_) / "sys/power/disk");
  EXPECT_NE(Find(Run(), Severity::kError, "hibernation").find("CONFIG_HIBERNATION"),
            std::string::npos);
}

TEST_F(Tree, AResumeDeviceWithoutSwapIsAnError) {
  Put("sys/power/resume", "8:3\n");
  const DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kError, "resume").find("holds no active swap area"),
            std::string::npos)
      << All(r);
  EXPECT_EQ(r.facts.target, -1);
}

TEST_F(Tree, ZramFirstWithoutAResumeDeviceTakesTheImage) {
  Put("sys/power/resume", "0:0\n");
  Put("proc/cmdline", "root=/dev/sda1 quiet\n");
  Put("proc/swaps", std::string(kSwapsHeader) + "/dev/zram0 partition 4194300 1200 100\n" +
                        "/dev/sda2 partition 8388604 0 -2\n");
  const DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kError, "resume").find("zram"), std::string::npos) << All(r);
  ASSERT_EQ(r.facts.swaps.size(), 2u);
  EXPECT_TRUE(r.facts.swaps[0].zram);
  EXPECT_FALSE(r.facts.swaps[1].zram);
  EXPECT_EQ(r.facts.target, 0);
}

TEST_F(Tree, ZramAboveTheResumeAreaIsFineWhenResumeNamesTheDisk) {
  Put("proc/swaps", std::string(kSwapsHeader) + "/dev/zram0 partition 4194300 1200 100\n" +
                        "/dev/sda2 partition 8388604 0 -2\n");
  const DoctorReport r = Run();
  EXPECT_LT(r.worst, Severity::kWarning) << All(r);
  EXPECT_EQ(r.facts.target, 1);
}

TEST_F(Tree, ResumeOnTheCommandLineNamingAnotherDeviceIsAnError) {
  Put("proc/cmdline", "root=/dev/sda1 resume=UUID=other\n");
  const DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kError, "resume at boot").find("8:17"), std::string::npos) << All(r);
}

TEST_F(Tree, NoResumeOnTheCommandLineIsAWarningAndNoresumeAnError) {
  Put("proc/cmdline", "root=/dev/sda1\n");
  EXPECT_NE(Find(Run(), Severity::kWarning, "resume at boot"), "");
  Put("proc/cmdline", "root=/dev/sda1 resume=/dev/sda2 noresume\n");
  EXPECT_NE(Find(Run(), Severity::kError, "resume").find("noresume"), std::string::npos);
}

TEST_F(Tree, AnAreaTooSmallForTheImage) {
  // 3.5 GB in use, 0.85 GB reclaimable: at least 2.65 GB of image; the
  // 400 MB area cannot hold it uncompressed.
  Meminfo(4000000, 500000, 200000);
  Put("proc/swaps", std::string(kSwapsHeader) + "/dev/sda2 partition 409596 0 -2\n");
  DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kWarning, "image fit").find("only if it compresses"),
            std::string::npos)
      << All(r);
  EXPECT_EQ(r.facts.min_image_pages, (3500000u - 850000u) / 4);
  EXPECT_EQ(r.facts.image_pages, r.facts.min_image_pages);  // above image_size's 403200
  Put("proc/cmdline", "root=/dev/sda1 resume=/dev/sda2 hibernate=nocompress\n");
  r = Run();
  EXPECT_NE(Find(r, Severity::kError, "image fit").find("Not enough free swap"), std::string::npos)
      << All(r);
  // systemd's rule: Active(anon) against 98 % of the free space.
  Meminfo(4000000, 3000000, 405000);
  r = Run();
  EXPECT_NE(Find(r, Severity::kWarning, "image fit").find("Not enough swap space for hibernation"),
            std::string::npos)
      << All(r);
  Meminfo(4000000, 3000000, 401000);
  EXPECT_EQ(Find(Run(), Severity::kWarning, "image fit").find("Not enough swap space"),
            std::string::npos);
}

TEST_F(Tree, ImageSizeGivenIsUsed) {
  const DoctorReport r = Run(uint64_t{1} << 30);
  EXPECT_TRUE(r.facts.image_from_option);
  EXPECT_EQ(r.facts.image_pages, 262144u);
}

TEST_F(Tree, HostileContentsAreEscapedAndNeverTrustedAsSizes) {
  Put("proc/swaps", std::string(kSwapsHeader) +
                        "/dev/sda2\x1b]0;pwned\x07 partition 8388604 0 -2\n"
                        "/x partition 99999999999999999999999 0 -2\n"
                        "/y partition 10 20 -2\n"
                        "/z partition -5 0 -2\n"
                        "/w partition 10 0 -2 extra\n"
                        "/dev/sda2 partition 8388604 0 -2\n");
  Put("proc/cmdline", std::string(300000, 'x') + " resume=\x1b[2J/dev/sda2\n");
  Put("proc/meminfo", "MemTotal: 99999999999999999999999 kB\nMemFree: 5 kB\n");
  Put("sys/power/image_size", "-1\n");
  const DoctorReport r = Run();
  const std::string all = All(r);
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
  EXPECT_EQ(all.find('\x07'), std::string::npos);
  ASSERT_EQ(r.facts.swaps.size(), 2u) << all;  // the ESC line parses (a strange name), 4 do not
  size_t unparsed = 0;
  for (const auto& f : r.findings) unparsed += f.seen.find("does not parse") != std::string::npos;
  EXPECT_EQ(unparsed, 4u) << all;
  EXPECT_NE(Find(r, Severity::kWarning, "image fit").find("cannot estimate"), std::string::npos)
      << all;
  EXPECT_EQ(r.facts.image_size, 0u);
}

TEST_F(Tree, AFifoOrAHugeFileIsNotRead) {
  ASSERT_EQ(::mkfifo((root_ + "/sys/power/state.fifo").c_str(), 0600), 0);
  fs::remove(fs::path(root_) / "sys/power/state");
  fs::rename(fs::path(root_) / "sys/power/state.fifo", fs::path(root_) / "sys/power/state");
  Put("proc/cmdline", std::string(2 << 20, 'y'));
  const DoctorReport r = Run();  // returns: a FIFO is not waited on
  EXPECT_NE(Find(r, Severity::kError, "hibernation").find("not a regular file"), std::string::npos)
      << All(r);
  EXPECT_NE(Find(r, Severity::kWarning, "kernel command line").find("larger than 1 MiB"),
            std::string::npos)
      << All(r);
}

TEST_F(Tree, AnEmptyRootSaysWhatIsMissing) {
  fs::remove_all(fs::path(root_) / "proc");
  fs::remove_all(fs::path(root_) / "sys");
  const DoctorReport r = Run();
  EXPECT_EQ(r.worst, Severity::kError);
  EXPECT_NE(Find(r, Severity::kError, "hibernation").find("/sys/power/state"), std::string::npos);
  EXPECT_NE(Find(r, Severity::kError, "swap").find("/proc/swaps"), std::string::npos);
}

// A swap file: its page 0's block from FIEMAP, as the test reads it.
class SwapFileTree : public Tree {
 protected:
  void SetUp() override {
    Tree::SetUp();
    file_ = root_ + "/swapfile";
    const int fd = ::open(file_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    const std::string page(4096, 'w');
    for (int i = 0; i < 1024; ++i) ASSERT_EQ(::write(fd, page.data(), page.size()), 4096);
    ASSERT_EQ(::fsync(fd), 0);
    alignas(fiemap) unsigned char buf[sizeof(fiemap) + sizeof(fiemap_extent)] = {};
    auto* fm = reinterpret_cast<fiemap*>(buf);
    fm->fm_length = 4096;
    fm->fm_flags = FIEMAP_FLAG_SYNC;
    fm->fm_extent_count = 1;
    const int rc = ::ioctl(fd, FS_IOC_FIEMAP, fm);
    struct stat st {};
    ::fstat(fd, &st);
    ::close(fd);
    if (rc != 0 || fm->fm_mapped_extents != 1 || major(st.st_dev) == 0 ||
        fm->fm_extents[0].fe_physical % 4096 != 0)
      GTEST_SKIP() << "no FIEMAP with physical blocks for a file in " << root_;
    block_ = fm->fm_extents[0].fe_physical / 4096;
    dev_ = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    Put("proc/swaps", std::string(kSwapsHeader) + "/swapfile file 4092 0 -2\n");
    Put("sys/power/resume", dev_ + "\n");
    Put("sys/power/resume_offset", std::to_string(block_) + "\n");
    Put("proc/cmdline",
        "root=/dev/sda1 resume=" + dev_ + " resume_offset=" + std::to_string(block_) + "\n");
  }
  std::string file_, dev_;
  uint64_t block_ = 0;
};

TEST_F(SwapFileTree, TheRightOffsetIsOk) {
  Meminfo(4000000, 3999000, 100);
  const DoctorReport r = Run();
  ASSERT_EQ(r.facts.swaps.size(), 1u);
  ASSERT_TRUE(r.facts.swaps[0].first_block.has_value()) << All(r);
  EXPECT_EQ(*r.facts.swaps[0].first_block, block_);
  EXPECT_EQ(r.facts.swaps[0].dev, dev_);
  EXPECT_FALSE(r.facts.swaps[0].holes);
  EXPECT_NE(Find(r, Severity::kOk, "resume"), "") << All(r);
  EXPECT_NE(Find(r, Severity::kOk, "resume at boot"), "") << All(r);
}

TEST_F(SwapFileTree, AWrongOffsetGetsTheRightOne) {
  Put("sys/power/resume_offset", std::to_string(block_ + 8) + "\n");
  DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kError, "resume").find("resume_offset=" + std::to_string(block_)),
            std::string::npos)
      << All(r);
  Put("sys/power/resume_offset", std::to_string(block_) + "\n");
  Put("proc/cmdline", "resume=" + dev_ + " resume_offset=" + std::to_string(block_ + 1) + "\n");
  r = Run();
  EXPECT_NE(
      Find(r, Severity::kError, "resume at boot").find("resume_offset=" + std::to_string(block_)),
      std::string::npos)
      << All(r);
  Put("proc/cmdline", "resume=" + dev_ + "\n");  // no offset: 0
  EXPECT_NE(Find(Run(), Severity::kError, "resume at boot"), "");
}

TEST_F(SwapFileTree, AHoleIsAnError) {
  const int fd = ::open(file_.c_str(), O_RDWR | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "x", 1, 0), 1);
  ASSERT_EQ(::ftruncate(fd, 4 << 20), 0);  // pages 1.. a hole
  ::fsync(fd);
  ::close(fd);
  const DoctorReport r = Run();
  EXPECT_NE(Find(r, Severity::kError, "swap /swapfile").find("holes"), std::string::npos) << All(r);
}

TEST_F(SwapFileTree, ADeletedFileIsAWarning) {
  Put("proc/swaps", std::string(kSwapsHeader) + "/swapfile\\040(deleted) file 4092 0 -2\n");
  const DoctorReport r = Run();
  ASSERT_EQ(r.facts.swaps.size(), 1u);
  EXPECT_TRUE(r.facts.swaps[0].deleted);
  EXPECT_EQ(r.facts.swaps[0].path, "/swapfile");
  EXPECT_NE(Find(r, Severity::kWarning, "swap /swapfile").find("deleted"), std::string::npos)
      << All(r);
}

TEST(ParseProcSwaps, OctalEscapesAndBadLines) {
  std::vector<std::string> bad;
  const auto s = ParseProcSwaps(
      std::string(kSwapsHeader) + "/var/swap\\040file\\134x file 1024 4 -3\nnot a line\n", &bad);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].path, "/var/swap file\\x");
  EXPECT_EQ(s[0].priority, -3);
  EXPECT_EQ(s[0].used_kib, 4u);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "not a line");
}

TEST(ParseCmdline, QuotesAndBareWords) {
  const auto c = ParseCmdline("BOOT_IMAGE=/vmlinuz a=\"b c\" quiet resume=UUID=x-y\n");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].first, "a");
  EXPECT_EQ(c[1].second, "b c");
  EXPECT_EQ(c[2].first, "quiet");
  EXPECT_EQ(c[2].second, "");
  EXPECT_EQ(c[3].second, "UUID=x-y");
}

// A pagemap entry of a swapped-out page: bit 62, the type in bits 0-4,
// the offset in bits 5-54 (Documentation/admin-guide/mm/pagemap.rst).
uint64_t SwapPte(uint32_t type, uint64_t offset) { return uint64_t{1} << 62 | offset << 5 | type; }

TEST(PagemapSwapEntry, DecodesSwappedAndSkipsPresentPages) {
  uint32_t type = 99;
  uint64_t offset = 0;
  ASSERT_TRUE(internal::PagemapSwapEntry(SwapPte(3, 123456), &type, &offset));
  EXPECT_EQ(type, 3u);
  EXPECT_EQ(offset, 123456u);
  EXPECT_FALSE(internal::PagemapSwapEntry(SwapPte(0, 7) | uint64_t{1} << 63, &type, &offset));
  EXPECT_FALSE(internal::PagemapSwapEntry(uint64_t{1} << 63 | 4242, &type, &offset));
  EXPECT_FALSE(internal::PagemapSwapEntry(0, &type, &offset));
}

// The layout: a 16 MiB swap file whose clusters 0-3 have every other slot
// of 1..1999 in use, as one recorded process's page tables show them.
class LayoutTree : public SwapFileTree {
 protected:
  void SetUp() override {
    SwapFileTree::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    {
      std::ofstream f(file_, std::ios::binary | std::ios::app);
      const std::string page(4096, 'w');
      for (int i = 1024; i < 4096; ++i) f << page;
    }
    area::FormatOptions fo;
    fo.force = true;
    ASSERT_TRUE(area::FormatArea(file_, fo).ok());
    Put("proc/swaps", std::string(kSwapsHeader) + "/swapfile file 16380 400 -2\n");
    Put("proc/sys/kernel/osrelease", "6.18.0\n");  // nonfull clusters before free ones
    for (uint64_t s = 1; s < 2000; s += 2) Swapped(0, s);
    Process("100");
  }
  // One swapped page of the process: its pagemap entry, at page kFirst + n.
  void Swapped(uint32_t type, uint64_t offset) { ptes_.push_back(SwapPte(type, offset)); }
  void Process(const std::string& pid) {
    Put("proc/" + pid + "/status", "Name:\tx\nVmSwap:\t     400 kB\n");
    Put("proc/" + pid + "/smaps",
        fmt::format("{:x}-{:x} rw-p 00000000 00:00 0\nSize: 1024 kB\nSwap: 400 kB\n"
                    "fffffffff000-00001000 rw-p 0 0 0\nSwap: 4 kB\n",  // end < start: skipped
                    kFirst * 4096, (kFirst + ptes_.size() + 16) * 4096));
    std::string map((kFirst + ptes_.size() + 16) * 8, '\0');
    std::memcpy(map.data() + kFirst * 8, ptes_.data(), ptes_.size() * 8);
    Put("proc/" + pid + "/pagemap", map);
  }
  static constexpr uint64_t kFirst = 64;
  std::vector<uint64_t> ptes_;
};

TEST_F(LayoutTree, TheSlotsInUseComeFromThePageTables) {
  const DoctorReport r = Run(uint64_t{2} << 20);  // 512 pages: fits either way
  ASSERT_EQ(r.facts.swaps.size(), 1u);
  const DoctorSwap& s = r.facts.swaps[0];
  ASSERT_TRUE(s.in_use_read) << All(r);
  ASSERT_EQ(s.in_use.size(), 1000u);
  EXPECT_EQ(s.in_use.front(), 1u);
  EXPECT_EQ(s.in_use.back(), 1999u);
  const DoctorLayout& l = r.facts.layout;
  EXPECT_EQ(l.processes, 1u);
  EXPECT_EQ(l.area_pages, 4096u);
  EXPECT_EQ(l.free_slots, 4096u - 1 - 1000);
  EXPECT_EQ(l.preset, "linux-6.18");
  ASSERT_EQ(l.predictions.size(), 2u) << All(r);
  const DoctorPrediction& kernel = l.predictions[0];
  const DoctorPrediction& rfc = l.predictions[1];
  ASSERT_EQ(kernel.error, "");
  ASSERT_EQ(rfc.error, "");
  // 512 data pages: T = 1 + 1 + 512, and 2 map pages.
  EXPECT_EQ(kernel.slots, 516u);
  EXPECT_EQ(rfc.slots, 516u);
  EXPECT_EQ(kernel.stream.size() + kernel.map.size(), kernel.slots);
  // 6.18 finishes CPU 0's cluster (3), then fills the holes of the nonfull
  // clusters 0-2 one slot at a time; the RFC takes free clusters whole, in
  // disk order.
  EXPECT_GT(kernel.runs, 400u);
  EXPECT_EQ(rfc.runs, 1u);
  EXPECT_LT(rfc.write_bios, kernel.write_bios);
  for (uint64_t d : kernel.stream)
    EXPECT_FALSE(std::binary_search(s.in_use.begin(), s.in_use.end(), d));
  EXPECT_NE(Find(r, Severity::kInfo, "layout").find("1000 in use seen in 1 process' page tables"),
            std::string::npos)
      << All(r);
}

TEST_F(LayoutTree, HostileEntriesAreDroppedNotTrusted) {
  Swapped(7, 5);                                         // a type with no area: ignored
  Swapped(0, uint64_t{1} << 49);                         // past the area: line 0 is not type 0
  ptes_.push_back(SwapPte(0, 300) | uint64_t{1} << 63);  // present: not a swap entry
  Process("100");
  Put("proc/101/status", "VmSwap:\t 4 kB\n");
  Put("proc/101/smaps", "0-7ffffffff000 rw-p 0 0 0\nSwap: 4 kB\n");  // 2^35 pages
  Put("proc/101/pagemap", std::string(64, '\xff'));                  // ends at once
  const DoctorReport r = Run(uint64_t{4} << 20);
  ASSERT_EQ(r.facts.swaps.size(), 1u);
  EXPECT_FALSE(r.facts.swaps[0].in_use_read);
  EXPECT_TRUE(r.facts.swaps[0].in_use.empty());
  EXPECT_NE(Find(r, Severity::kInfo, "layout").find("not matched to this area"), std::string::npos)
      << All(r);
  ASSERT_EQ(r.facts.layout.predictions.size(), 2u);
  EXPECT_EQ(r.facts.layout.predictions[0].runs, 1u);  // nothing in use: one run
}

TEST_F(SwapFileTree, AnInactiveFstabSwapFileWithAHoleIsAnError) {
  const int fd = ::open(file_.c_str(), O_RDWR | O_TRUNC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "x", 1, 0), 1);
  ASSERT_EQ(::ftruncate(fd, 4 << 20), 0);
  ::close(fd);
  Put("proc/swaps", std::string(kSwapsHeader) +
                        "/dev/sda2                               partition\t8388604\t\t0\t\t-2\n");
  Put("etc/fstab",
      "# comment\nUUID=x / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n"
      "/no\\040such none swap sw 0 0\n/dev/sda2 none swap sw 0 0\n");
  const DoctorReport r = Run();
  ASSERT_EQ(r.facts.inactive.size(), 1u) << All(r);
  EXPECT_EQ(r.facts.inactive[0].path, "/swapfile");
  EXPECT_TRUE(r.facts.inactive[0].holes);
  EXPECT_NE(Find(r, Severity::kWarning, "swap /swapfile").find("not swapped on"), std::string::npos)
      << All(r);
  EXPECT_NE(Find(r, Severity::kError, "swap /swapfile").find("holes"), std::string::npos) << All(r);
}

TEST_F(LayoutTree, AnImageTooLargeUncompressedIsPlacedAsFarAsItFits) {
  const DoctorReport r = Run(uint64_t{64} << 20);  // 16384 pages on a 4096-page area
  ASSERT_EQ(r.facts.layout.predictions.size(), 2u) << All(r);
  const DoctorPrediction& kernel = r.facts.layout.predictions[0];
  EXPECT_EQ(kernel.error, "") << All(r);
  EXPECT_EQ(kernel.pages, internal::LargestImage(4096 - 1 - 1000));
  EXPECT_GT(kernel.slots, 2000u);
  // The RFC's image takes whole free clusters (seed 001): clusters 4-7,
  // 2048 slots, so less of the image fits there.
  const DoctorPrediction& rfc = r.facts.layout.predictions[1];
  EXPECT_EQ(rfc.error, "");
  EXPECT_EQ(rfc.pages, internal::LargestImage(2048));
  EXPECT_EQ(rfc.runs, 1u);
  EXPECT_NE(Find(r, Severity::kInfo, "layout").find("does not fit uncompressed"), std::string::npos)
      << All(r);
}

TEST(LargestImage, FitsEnoughSwapAndTheSlotsAndNoMore) {
  for (uint64_t free :
       {uint64_t{1026}, uint64_t{1100}, uint64_t{4000}, uint64_t{16383}, uint64_t{1} << 24}) {
    const uint64_t p = internal::LargestImage(free);
    auto fits = [&](uint64_t n) {
      const uint64_t t = hibernate::StreamPages(n);
      return t + hibernate::kPagesForIo < free - 1 && t + hibernate::MapPages(t) <= free;
    };
    EXPECT_TRUE(p == 0 || fits(p)) << free;
    EXPECT_FALSE(fits(p + 1)) << free;
  }
  EXPECT_EQ(internal::LargestImage(100), 0u);
}

TEST_F(Tree, AreasAboveTheImagesAreaAreNamed) {
  Put("sys/class/block/zram0/dev", "252:0\n");
  Put("proc/swaps", std::string(kSwapsHeader) +
                        "/dev/zram0                              partition\t1048572\t\t0\t\t100\n"
                        "/dev/sda2                               partition\t8388604\t\t0\t\t-2\n"
                        "/dev/sdb1                               partition\t1048572\t\t0\t\t5\n");
  const DoctorReport r = Run();
  ASSERT_EQ(r.facts.target, 1) << All(r);  // resume names sda2
  EXPECT_NE(Find(r, Severity::kInfo, "swap /dev/zram0").find("zram at priority 100, above"),
            std::string::npos)
      << All(r);
  EXPECT_LT(r.worst, Severity::kWarning) << All(r);
  EXPECT_NE(Find(r, Severity::kInfo, "swap /dev/sdb1").find("priority 5, above"), std::string::npos)
      << All(r);
  Put("proc/swaps", std::string(kSwapsHeader) +
                        "/dev/sda2                               partition\t8388604\t\t0\t\t10\n"
                        "/dev/zram0                              partition\t1048572\t\t0\t\t5\n");
  const DoctorReport low = Run();
  EXPECT_EQ(Find(low, Severity::kInfo, "swap /dev/zram0").find("above"), std::string::npos)
      << All(low);
}

}  // namespace
}  // namespace swaplab::kernel
