// SPDX-License-Identifier: MIT
// swaplab doctor: the running system's hibernation set-up, read and judged
// (include/swaplab/kernel/doctor.h gives the sources of each rule).
#include "swaplab/kernel/doctor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <sstream>
#include <string_view>

#include "doctor_layout.h"
#include "doctor_read.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::kernel {

const char* Name(Severity s) {
  switch (s) {
    case Severity::kOk:
      return "ok";
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "?";
}

namespace {

using internal::ParseKibFields;
using internal::ParseNumber;
using internal::ReadRegularFile;
using internal::Trim;

constexpr size_t kMaxRead = 1 << 20;
constexpr uint64_t kPage = alloc::kPageSize;
// systemd's HIBERNATION_SWAP_THRESHOLD (src/shared/hibernate-util.c).
constexpr double kSystemdThreshold = 0.98;

std::string P(std::string_view s) { return Printable(s, 200); }

std::string DevString(dev_t d) { return fmt::format("{}:{}", major(d), minor(d)); }

// The paths of one system: the running one, or a copy under a directory.
struct Root {
  std::string dir;
  std::string Of(const std::string& abs) const { return dir.empty() ? abs : dir + abs; }

  // A regular file of at most 1 MiB (never a FIFO waited on); why not, else.
  std::optional<std::string> Read(const std::string& abs, std::string* why) const {
    return ReadRegularFile(Of(abs), kMaxRead, why);
  }
  std::string ReadOr(const std::string& abs, const std::string& fallback = "") const {
    std::string why;
    auto t = Read(abs, &why);
    return t ? std::string(Trim(*t)) : fallback;
  }

  // `abs` with the symbolic links of its last component followed (at most
  // 8), inside the root: /dev/disk/by-uuid/X → /dev/sda2.
  std::string FollowLinks(std::string abs) const {
    for (int i = 0; i < 8; ++i) {
      char target[4096];
      const ssize_t n = ::readlink(Of(abs).c_str(), target, sizeof target - 1);
      if (n <= 0) break;
      const std::string t(target, static_cast<size_t>(n));
      abs = t.front() == '/' ? t : abs.substr(0, abs.rfind('/') + 1) + t;
    }
    // Lexically: "a/b/../c" → "a/c".
    std::vector<std::string> parts;
    std::stringstream in(abs);
    for (std::string p; std::getline(in, p, '/');) {
      if (p.empty() || p == ".") continue;
      if (p == "..") {
        if (!parts.empty()) parts.pop_back();
      } else {
        parts.push_back(p);
      }
    }
    std::string out;
    for (const auto& p : parts) out += "/" + p;
    return out.empty() ? "/" : out;
  }

  // A block device's "MAJ:MIN": the node's when it is one, else sysfs's
  // by kernel name (/sys/class/block/NAME/dev). Empty when unknown.
  std::string BlockDev(const std::string& abs) const {
    const std::string real = FollowLinks(abs);
    struct stat st {};
    if (::stat(Of(real).c_str(), &st) == 0 && S_ISBLK(st.st_mode)) return DevString(st.st_rdev);
    const std::string name = real.substr(real.rfind('/') + 1);
    if (name.empty() || name == "." || name == "..") return "";
    const std::string dev = ReadOr("/sys/class/block/" + name + "/dev");
    const auto colon = dev.find(':');
    if (colon == std::string::npos || !ParseNumber<uint32_t>(dev.substr(0, colon)) ||
        !ParseNumber<uint32_t>(dev.substr(colon + 1)))
      return "";
    return dev;
  }
};

// "\040" → ' ' (seq_file's escapes of /proc/swaps: space, tab, newline, backslash).
std::string DecodeOctal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view d = s.substr(i + 1, 3);
      if (d.size() == 3 &&
          std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(((d[0] - '0') << 6) | ((d[1] - '0') << 3) | (d[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// A filesystem's name by statfs magic (linux/magic.h).
std::string FsName(int64_t magic) {
  switch (static_cast<uint64_t>(magic) & 0xffffffffu) {
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0xF2F52010:
      return "f2fs";
    case 0x6969:
      return "nfs";
    case 0x4d44:
      return "vfat";
    case 0x2FC12FC1:
      return "zfs";
    default:
      return fmt::format("0x{:x}", static_cast<uint64_t>(magic) & 0xffffffffu);
  }
}

// The block device a mount of `dev` ("0:45", an anonymous device: btrfs,
// overlay) comes from, by /proc/self/mountinfo's source; empty if none.
std::string MountSourceDev(const Root& r, const std::string& dev) {
  std::string why;
  auto text = r.Read("/proc/self/mountinfo", &why);
  if (!text) return "";
  std::stringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    std::stringstream l(line);
    std::string id, parent, majmin;
    if (!(l >> id >> parent >> majmin) || majmin != dev) continue;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::stringstream rest(line.substr(dash + 3));
    std::string fstype, source;
    if (rest >> fstype >> source && !source.empty() && source.front() == '/')
      return r.BlockDev(DecodeOctal(source));
  }
  return "";
}

// resume= as the kernel reads it (spec §2.2, §2.5): MAJ:MIN, a path, UUID=,
// PARTUUID=, LABEL=, PARTLABEL= (through /dev/disk/by-*), or a hex dev_t.
std::string ResolveResume(const Root& r, const std::string& v) {
  if (v.empty()) return "";
  const auto colon = v.find(':');
  if (colon != std::string::npos && ParseNumber<uint32_t>(v.substr(0, colon)) &&
      ParseNumber<uint32_t>(v.substr(colon + 1)))
    return v;
  static const std::pair<const char*, const char*> kBy[] = {{"UUID=", "by-uuid"},
                                                            {"PARTUUID=", "by-partuuid"},
                                                            {"LABEL=", "by-label"},
                                                            {"PARTLABEL=", "by-partlabel"}};
  for (const auto& [prefix, dir] : kBy) {
    const std::string p = prefix;
    if (v.compare(0, p.size(), p) == 0) {
      const std::string id = v.substr(p.size());
      if (id.empty() || id.find('/') != std::string::npos || id == "." || id == "..") return "";
      return r.BlockDev(std::string("/dev/disk/") + dir + "/" + id);
    }
  }
  if (v.front() == '/') return r.BlockDev(v);
  if (auto d = ParseNumber<uint64_t>(v, 16); d && *d <= 0xffffffffu)  // new_decode_dev
    return fmt::format("{}:{}", (*d & 0xfff00) >> 8, (*d & 0xff) | ((*d >> 12) & 0xfff00));
  return "";
}

std::string Mib(uint64_t kib) { return fmt::format("{:.0f} MiB", kib / 1024.0); }

class Doctor {
 public:
  explicit Doctor(const DoctorOptions& o) : o_(o), r_{o.root} {}

  DoctorReport Run() {
    Cmdline();
    Hibernation();
    Swaps();
    Target();
    HigherPriority();
    ResumeAtBoot();
    Fit();
    Fstab();
    if (o_.layout) Layout();
    for (const auto& f : rep_.findings) rep_.worst = std::max(rep_.worst, f.severity);
    return std::move(rep_);
  }

 private:
  DoctorFacts& facts() { return rep_.facts; }
  void Add(Severity s, std::string check, std::string seen, std::string todo = "") {
    rep_.findings.push_back({s, std::move(check), std::move(seen), std::move(todo)});
  }
  bool Has(const std::string& key) const {
    return std::any_of(cmdline_.begin(), cmdline_.end(),
                       [&](const auto& kv) { return kv.first == key; });
  }
  std::optional<std::string> Value(const std::string& key) const {
    std::optional<std::string> v;  // the last one counts, as in the kernel
    for (const auto& [k, val] : cmdline_)
      if (k == key) v = val;
    return v;
  }

  void Cmdline() {
    std::string why;
    auto text = r_.Read("/proc/cmdline", &why);
    if (!text) {
      Add(Severity::kWarning, "kernel command line", "cannot read /proc/cmdline: " + why);
      return;
    }
    cmdline_ = ParseCmdline(*text);
    facts().cmdline_resume = Value("resume").value_or("");
    facts().cmdline_resume_offset = Value("resume_offset").value_or("");
    const std::string hib = Value("hibernate").value_or("");
    facts().nocompress = hib == "nocompress";
  }

  void Hibernation() {
    DoctorFacts& f = facts();
    f.release = r_.ReadOr("/proc/sys/kernel/osrelease");
    std::string why;
    auto state = r_.Read("/sys/power/state", &why);
    const bool has_disk_file = r_.Read("/sys/power/disk", &why).has_value();
    f.disk = r_.ReadOr("/sys/power/disk");
    const std::string lockdown = r_.ReadOr("/sys/kernel/security/lockdown");
    if (lockdown.find('[') != std::string::npos)
      f.lockdown = lockdown.substr(lockdown.find('[') + 1,
                                   lockdown.find(']', lockdown.find('[')) - lockdown.find('[') - 1);
    if (!state) {
      Add(Severity::kError, "hibernation", "cannot read /sys/power/state (" + why + ")",
          "a kernel without power management (CONFIG_PM_SLEEP), or sysfs not mounted");
      return;
    }
    f.state = std::string(Trim(*state));
    std::stringstream words(f.state);
    for (std::string w; words >> w;) f.can_hibernate |= w == "disk";
    const std::string kernel = f.release.empty() ? "this kernel" : "Linux " + P(f.release);
    if (!f.can_hibernate) {
      std::string cause, todo;
      if (Has("nohibernate") || Value("hibernate") == std::optional<std::string>("no")) {
        cause = "the kernel command line disables it (nohibernate / hibernate=no)";
        todo = "remove nohibernate / hibernate=no from the kernel command line";
      } else if (f.lockdown == "integrity" || f.lockdown == "confidentiality") {
        cause = "kernel lockdown is at '" + P(f.lockdown) +
                "', which refuses hibernation (LOCKDOWN_HIBERNATION; lockdown usually follows "
                "UEFI Secure Boot)";
        todo =
            "hibernation under lockdown needs a kernel that signs or encrypts the image; or boot "
            "without lockdown";
      } else if (!has_disk_file) {
        cause = kernel + " has no hibernation (no /sys/power/disk: CONFIG_HIBERNATION is off)";
        todo = "a kernel built with CONFIG_HIBERNATION (distribution kernels have it)";
      } else {
        cause = "hibernation_available() is false for a reason not visible here";
        todo = "look for 'hibernation' in the kernel log (dmesg)";
      }
      Add(Severity::kError, "hibernation",
          (f.state.empty() ? std::string("/sys/power/state is empty")
                           : "/sys/power/state is '" + P(f.state) + "'") +
              ", without 'disk': " + cause,
          todo);
    } else {
      const std::string mode =
          f.disk.find('[') != std::string::npos
              ? f.disk.substr(f.disk.find('[') + 1, f.disk.find(']') - f.disk.find('[') - 1)
              : f.disk;
      Add(Severity::kOk, "hibernation",
          kernel + " can hibernate: /sys/power/state lists disk; mode " + P(mode));
      if (mode == "test_resume")
        Add(Severity::kWarning, "hibernation",
            "/sys/power/disk is test_resume: the image is written and read back at once, the "
            "machine never powers off",
            "echo platform > /sys/power/disk (or shutdown)");
    }
    if (Has("noresume") || Value("hibernate") == std::optional<std::string>("noresume"))
      Add(Severity::kError, "resume",
          "the kernel command line has noresume: at boot no image is looked for, a hibernated "
          "session is lost",
          "remove noresume from the kernel command line");
    f.compressor = r_.ReadOr("/sys/module/hibernate/parameters/compressor");
    const std::string threads = r_.ReadOr("/sys/power/hibernate_compression_threads");
    f.image_size = ParseNumber<uint64_t>(r_.ReadOr("/sys/power/image_size")).value_or(0);
    f.reserved_size = ParseNumber<uint64_t>(r_.ReadOr("/sys/power/reserved_size")).value_or(0);
    if (f.can_hibernate)
      Add(Severity::kInfo, "image",
          fmt::format("{}; image_size {} (memory is shrunk toward it), reserved_size {}",
                      f.nocompress
                          ? std::string("uncompressed (hibernate=nocompress)")
                          : "compressed with " +
                                (f.compressor.empty() ? std::string("lzo") : P(f.compressor)) +
                                (threads.empty() ? "" : ", " + P(threads) + " threads"),
                      Mib(f.image_size / 1024), Mib(f.reserved_size / 1024)));
  }

  void Swaps() {
    DoctorFacts& f = facts();
    std::string why;
    auto text = r_.Read("/proc/swaps", &why);
    if (!text) {
      Add(Severity::kError, "swap", "cannot read /proc/swaps: " + why);
      return;
    }
    std::vector<std::string> bad;
    f.swaps = ParseProcSwaps(*text, &bad);
    for (const auto& b : bad)
      Add(Severity::kWarning, "swap", "/proc/swaps has a line that does not parse: " + b);
    if (f.swaps.empty()) {
      Add(Severity::kError, "swap", "no swap area is active (/proc/swaps lists none)",
          "swapon a partition or a swap file large enough for the image, and point resume= at it");
      return;
    }
    for (DoctorSwap& s : f.swaps) Inspect(s);
  }

  void Inspect(DoctorSwap& s) {
    const std::string check = "swap " + P(s.path);
    if (s.type == "partition") {
      s.dev = r_.BlockDev(s.path);
      s.first_block = 0;
      const std::string real = r_.FollowLinks(s.path);
      s.zram = real.compare(0, 9, "/dev/zram") == 0;
      if (!s.zram && o_.layout) {
        auto info = area::InspectArea(r_.Of(real));
        if (info.ok()) s.area = std::move(info).value();
      }
      Add(Severity::kInfo, check,
          fmt::format("{}{}, device {}, priority {}, {} of which {} used", s.zram ? "zram " : "",
                      "partition", s.dev.empty() ? "unknown" : s.dev, s.priority, Mib(s.size_kib),
                      Mib(s.used_kib)));
      return;
    }
    if (s.type != "file") {
      Add(Severity::kWarning, check, "type '" + P(s.type) + "' is neither partition nor file");
      return;
    }
    if (s.deleted) {
      s.unreadable = "deleted";
      Add(Severity::kWarning, check,
          "the swap file was deleted while swapped on: after the next swapoff or reboot it is "
          "gone, and with it any image in it",
          "swapoff it and make a swap file that stays");
      return;
    }
    struct stat st {};
    struct statfs sf {};
    if (::stat(r_.Of(s.path).c_str(), &st) != 0) {
      s.unreadable = std::strerror(errno);
    } else {
      s.dev = DevString(st.st_dev);
      if (statfs(r_.Of(s.path).c_str(), &sf) == 0) s.fs_type = FsName(sf.f_type);
      if (major(st.st_dev) == 0) s.dev = MountSourceDev(r_, s.dev);
      auto info = area::InspectArea(r_.Of(s.path));
      if (!info.ok()) {
        s.unreadable = info.status().message();
      } else {
        s.extents = info->extents.size();
        s.holes = info->extent_summary.has_holes;
        s.first_block = area::ResumeOffset(*info);
        s.area = std::move(info).value();
      }
    }
    if (s.fs_type == "btrfs") {
      // FIEMAP on btrfs gives btrfs's logical addresses, not the device's.
      s.first_block.reset();
      Add(Severity::kInfo, check,
          fmt::format("file on btrfs, device {}, priority {}, {}: FIEMAP gives btrfs's logical "
                      "addresses, not the device's",
                      s.dev.empty() ? "unknown" : s.dev, s.priority, Mib(s.size_kib)),
          "");
      Add(Severity::kWarning, check, "doctor cannot compute a btrfs swap file's resume_offset",
          "btrfs inspect-internal map-swapfile -r " + P(s.path) + " prints it");
      return;
    }
    if (!s.unreadable.empty()) {
      Add(Severity::kWarning, check,
          "cannot read the file's extent map: " + P(s.unreadable) +
              (s.unreadable.find("ermission") != std::string::npos ? " (run as root)" : ""));
      return;
    }
    Add(Severity::kInfo, check,
        fmt::format("file on {}, device {}, priority {}, {} of which {} used, {} extent{}, page 0 "
                    "at dblock {}",
                    s.fs_type.empty() ? "?" : s.fs_type, s.dev.empty() ? "unknown" : s.dev,
                    s.priority, Mib(s.size_kib), Mib(s.used_kib), s.extents,
                    s.extents == 1 ? "" : "s",
                    s.first_block ? std::to_string(*s.first_block) : std::string("(not mapped)")));
    if (s.holes)
      Add(Severity::kError, check,
          "the file has holes, unwritten, shared or encoded extents: the kernel cannot write an "
          "image through them",
          "make the swap file with dd (not fallocate; on btrfs chattr +C first), then mkswap");
  }

  // /etc/fstab's swap files that are not swapped on now: swapon checks
  // them at boot (swapon(8) refuses a file with holes; fstab(5) escapes a
  // space as \040).
  void Fstab() {
    std::string why;
    auto text = r_.Read("/etc/fstab", &why);
    if (!text) return;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::string spec, dir, type;
      if (!(fields >> spec >> dir >> type) || type != "swap" || spec.front() != '/') continue;
      spec = DecodeOctal(spec);
      const auto& active = facts().swaps;
      if (std::any_of(active.begin(), active.end(), [&](const auto& w) { return w.path == spec; }))
        continue;
      struct stat st {};
      if (::stat(r_.Of(spec).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      DoctorSwap w;
      w.path = spec;
      w.type = "file";
      w.size_kib = static_cast<uint64_t>(st.st_size) / 1024;
      Add(Severity::kWarning, "swap " + P(spec),
          "/etc/fstab lists this swap file, but it is not swapped on: no image can go to it",
          "swapon " + P(spec) + " (if it refuses, the findings below say why)");
      Inspect(w);
      facts().inactive.push_back(std::move(w));
    }
  }

  // Areas of higher priority than the image's: the pages the kernel
  // swaps out while it shrinks memory before the snapshot
  // (hibernate_preallocate_memory's reclaim) go there first (get_swap_pages
  // takes the highest priority, allocator spec §2.3). zram keeps them in
  // RAM, where they are still memory to save.
  void HigherPriority() {
    const DoctorFacts& f = facts();
    if (f.target < 0) return;
    const DoctorSwap& t = f.swaps[f.target];
    for (size_t i = 0; i < f.swaps.size(); ++i) {
      const DoctorSwap& s = f.swaps[i];
      if (static_cast<int>(i) == f.target || s.priority <= t.priority) continue;
      // Info, not a warning: the usual set-up of zram for everyday swap and
      // a disk area for the image (resume names the disk) hibernates.
      if (s.zram)
        Add(Severity::kInfo, "swap " + P(s.path),
            fmt::format("zram at priority {}, above the image's area {} ({}): what the kernel "
                        "swaps out to make room for the image stays in RAM, compressed, so "
                        "memory shrinks less and the image is larger (a swapoff of {} before "
                        "hibernating avoids it)",
                        s.priority, P(t.path), t.priority, P(s.path)));
      else
        Add(Severity::kInfo, "swap " + P(s.path),
            fmt::format("priority {}, above the image's area {} ({}): pages swapped out while "
                        "the kernel shrinks memory go here first, which leaves the image's area "
                        "its free space",
                        s.priority, P(t.path), t.priority));
    }
  }

  void Layout() {
    for (Finding& x : internal::LayoutFindings(facts(), o_.root)) rep_.findings.push_back(x);
  }

  void Target() {
    DoctorFacts& f = facts();
    if (f.swaps.empty()) return;
    const std::string dev = r_.ReadOr("/sys/power/resume");
    f.resume_dev = dev == "0:0" ? "" : dev;
    f.resume_offset = ParseNumber<uint64_t>(r_.ReadOr("/sys/power/resume_offset"));
    auto list = [&] {
      std::string s;
      for (const auto& w : f.swaps)
        s += (s.empty() ? "" : ", ") + P(w.path) + " (" + (w.dev.empty() ? "?" : w.dev) + ")";
      return s;
    };
    if (f.resume_dev.empty()) {
      // find_first_swap: the first area with a block device (spec §2.6).
      for (size_t i = 0; i < f.swaps.size() && f.target < 0; ++i)
        if (!f.swaps[i].dev.empty()) f.target = static_cast<int>(i);
      if (f.target < 0) f.target = 0;
      const DoctorSwap& t = f.swaps[f.target];
      if (t.zram)
        Add(Severity::kError, "resume",
            "no resume device is set (/sys/power/resume is 0:0), so the image would go to the "
            "first swap area, " +
                P(t.path) + ", which is zram: in RAM, lost at power-off",
            "set resume= (and resume_offset= for a swap file) to a disk area, on the kernel "
            "command line");
      else
        Add(Severity::kWarning, "resume",
            "no resume device is set (/sys/power/resume is 0:0): the image goes to the first "
            "swap area, " +
                P(t.path) + ", but at boot the kernel looks for it only where resume= says",
            "add resume=" + (t.dev.empty() ? std::string("DEVICE") : t.dev) +
                (t.type == "file" && t.first_block
                     ? " resume_offset=" + std::to_string(*t.first_block)
                     : "") +
                " to the kernel command line (systemd may set it before hibernating, on EFI "
                "machines through its HibernateLocation variable)");
      return;
    }
    const uint64_t offset = f.resume_offset.value_or(0);
    const DoctorSwap* same_dev = nullptr;
    for (size_t i = 0; i < f.swaps.size(); ++i) {
      const DoctorSwap& s = f.swaps[i];
      if (s.dev != f.resume_dev) continue;
      same_dev = &s;
      if (s.first_block && *s.first_block == offset) {
        f.target = static_cast<int>(i);
        break;
      }
    }
    if (f.target >= 0) {
      const DoctorSwap& t = f.swaps[f.target];
      Add(Severity::kOk, "resume",
          fmt::format("the image goes to {} (/sys/power/resume {}, resume_offset {})", P(t.path),
                      f.resume_dev, offset));
      return;
    }
    if (same_dev == nullptr) {
      Add(Severity::kError, "resume",
          "/sys/power/resume is " + P(f.resume_dev) +
              ", which holds no active swap area: hibernation fails (\"Cannot find swap "
              "device\"); active areas: " +
              list(),
          "point resume= at the device of one of them");
      return;
    }
    if (!same_dev->first_block) {
      Add(Severity::kWarning, "resume",
          fmt::format("/sys/power/resume {} holds {}, whose page 0 doctor could not locate: "
                      "resume_offset {} is not checked",
                      P(f.resume_dev), P(same_dev->path), offset));
      return;
    }
    Add(Severity::kError, "resume",
        fmt::format("/sys/power/resume_offset is {}, but {} starts at dblock {}: hibernation "
                    "fails (\"Cannot find swap device\")",
                    offset, P(same_dev->path), *same_dev->first_block),
        fmt::format("set resume_offset={} on the kernel command line (and in "
                    "/sys/power/resume_offset)",
                    *same_dev->first_block));
  }

  void ResumeAtBoot() {
    DoctorFacts& f = facts();
    if (f.target < 0) return;
    const DoctorSwap& t = f.swaps[f.target];
    if (f.cmdline_resume.empty()) {
      if (!f.resume_dev.empty())
        Add(Severity::kWarning, "resume at boot",
            "resume= is not on the kernel command line: /sys/power/resume was set after boot; "
            "at the next boot the image is found only if the initramfs or systemd sets it again",
            "add resume=" + t.dev +
                (t.type == "file" && t.first_block
                     ? " resume_offset=" + std::to_string(*t.first_block)
                     : "") +
                " to the kernel command line");
      return;
    }
    f.cmdline_resume_dev = ResolveResume(r_, f.cmdline_resume);
    if (f.cmdline_resume_dev.empty()) {
      Add(Severity::kWarning, "resume at boot",
          "cannot resolve resume=" + P(f.cmdline_resume) + " here (no such device node or link)",
          "check that resume= names the device of " + P(t.path));
      return;
    }
    if (f.cmdline_resume_dev != t.dev) {
      Add(Severity::kError, "resume at boot",
          "at boot the kernel looks for the image on resume=" + P(f.cmdline_resume) + " (" +
              f.cmdline_resume_dev + "), but it is written to " + P(t.path) + " (" + t.dev + ")",
          "resume=" + t.dev + " (or its UUID=)");
      return;
    }
    const uint64_t want = t.first_block.value_or(0);
    const auto have = f.cmdline_resume_offset.empty()
                          ? std::optional<uint64_t>(0)
                          : ParseNumber<uint64_t>(f.cmdline_resume_offset);
    if (!have || *have != want) {
      Add(Severity::kError, "resume at boot",
          "the kernel command line has resume_offset=" +
              (f.cmdline_resume_offset.empty() ? std::string("(none, 0)")
                                               : P(f.cmdline_resume_offset)) +
              ", but the image is at dblock " + std::to_string(want) + " of " +
              f.cmdline_resume_dev,
          "resume_offset=" + std::to_string(want));
      return;
    }
    Add(Severity::kOk, "resume at boot",
        "resume=" + P(f.cmdline_resume) +
            (f.cmdline_resume_offset.empty() ? ""
                                             : " resume_offset=" + P(f.cmdline_resume_offset)) +
            " names " + P(t.path));
  }

  void Fit() {
    DoctorFacts& f = facts();
    if (f.target < 0) return;
    const DoctorSwap& t = f.swaps[f.target];
    std::string why;
    auto text = r_.Read("/proc/meminfo", &why);
    const auto m = text ? ParseKibFields(*text) : std::map<std::string, uint64_t>{};
    auto kib = [&](const char* k) {
      const auto it = m.find(k);
      return it == m.end() ? uint64_t{0} : it->second;
    };
    const uint64_t total = kib("MemTotal"), free_kib = kib("MemFree");
    f.active_anon_kib = kib("Active(anon)");
    if (!o_.image_bytes && (total == 0 || free_kib > total)) {
      Add(Severity::kWarning, "image fit",
          "cannot estimate the image: /proc/meminfo " +
              (text ? "has no usable MemTotal / MemFree" : "cannot be read: " + why),
          "give --image-size");
      return;
    }
    // kernel/power/snapshot.c (6.12): minimum_image_size = saveable minus
    // reclaimable slab and the anon and file LRU pages.
    f.saveable_pages = (total - std::min(total, free_kib)) / 4;
    const uint64_t reclaimable = (kib("SReclaimable") + f.active_anon_kib + kib("Inactive(anon)") +
                                  kib("Active(file)") + kib("Inactive(file)")) /
                                 4;
    f.min_image_pages = f.saveable_pages > reclaimable ? f.saveable_pages - reclaimable : 0;
    const uint64_t goal = f.image_size / kPage;
    if (o_.image_bytes) {
      f.image_from_option = true;
      f.image_pages = (o_.image_bytes + kPage - 1) / kPage;
    } else {
      f.image_pages = f.saveable_pages <= goal || goal == 0 ? f.saveable_pages
                                                            : std::max(goal, f.min_image_pages);
    }
    // Spec §3.1: T = 1 + metadata (one 8-byte PFN entry per page) + data.
    f.image_total_pages = hibernate::StreamPages(f.image_pages);
    const uint64_t free_slots = (t.size_kib - std::min(t.size_kib, t.used_kib)) / 4;
    const std::string est =
        f.image_from_option
            ? fmt::format("an image of {} pages (--image-size)", f.image_pages)
            : fmt::format(
                  "an image of about {} pages ({} in use now, at least {} after the "
                  "kernel frees what it can)",
                  f.image_pages, f.saveable_pages, f.min_image_pages);
    const uint64_t need = f.image_total_pages + hibernate::kPagesForIo;
    if (free_slots > need) {
      Add(Severity::kOk, "image fit",
          fmt::format("{} fits {} free slots of {} even uncompressed ({} needed)", est, free_slots,
                      P(t.path), need));
    } else if (f.nocompress) {
      Add(Severity::kError, "image fit",
          fmt::format("{} needs {} free slots uncompressed (enough_swap), {} has {}: \"Not "
                      "enough free swap\"",
                      est, need, P(t.path), free_slots),
          "a larger area, compression (drop hibernate=nocompress) or a smaller "
          "/sys/power/image_size");
    } else {
      Add(Severity::kWarning, "image fit",
          fmt::format("{} fits the {} free slots of {} only if it compresses at least {:.1f}:1",
                      est, free_slots, P(t.path),
                      free_slots ? static_cast<double>(need) / free_slots : 0.0),
          "a larger area, or a smaller /sys/power/image_size");
    }
    const double systemd_free = static_cast<double>(t.size_kib - std::min(t.size_kib, t.used_kib));
    if (!t.zram && static_cast<double>(f.active_anon_kib) > systemd_free * kSystemdThreshold)
      Add(Severity::kWarning, "image fit",
          fmt::format("systemd will refuse with \"Not enough swap space for hibernation\": it "
                      "compares Active(anon) {} kB with 98 % of the {} kB free on {}, not with "
                      "what the image needs",
                      f.active_anon_kib, t.size_kib - std::min(t.size_kib, t.used_kib), P(t.path)),
          "a larger area; or SYSTEMD_BYPASS_HIBERNATION_MEMORY_CHECK=1 for systemd-logind when "
          "the kernel's need above fits");
  }

  const DoctorOptions& o_;
  Root r_;
  DoctorReport rep_;
  std::vector<std::pair<std::string, std::string>> cmdline_;
};

}  // namespace

std::vector<DoctorSwap> ParseProcSwaps(const std::string& text, std::vector<std::string>* bad) {
  std::vector<DoctorSwap> out;
  std::stringstream in(text);
  std::string line;
  std::getline(in, line);  // Filename Type Size Used Priority
  while (std::getline(in, line)) {
    if (Trim(line).empty()) continue;
    std::stringstream l(line);
    std::string path, type, size, used, prio, extra;
    DoctorSwap s;
    const bool fields =
        static_cast<bool>(l >> path >> type >> size >> used >> prio) && !(l >> extra);
    auto sz = ParseNumber<uint64_t>(size), us = ParseNumber<uint64_t>(used);
    auto pr = ParseNumber<int64_t>(prio);
    if (!fields || !sz || !us || !pr || *us > *sz) {
      if (bad) bad->push_back(P(line));
      continue;
    }
    constexpr std::string_view kDeleted = "\\040(deleted)";
    if (path.size() > kDeleted.size() &&
        path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
      s.deleted = true;
      path.resize(path.size() - kDeleted.size());
    }
    s.path = DecodeOctal(path);
    s.type = type;
    s.size_kib = *sz;
    s.used_kib = *us;
    s.priority = *pr;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseCmdline(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    std::string token;
    bool quoted = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '"') {
        quoted = !quoted;
        continue;
      }
      if (!quoted && std::isspace(static_cast<unsigned char>(c))) break;
      token += c;
    }
    const auto eq = token.find('=');
    if (eq == std::string::npos)
      out.emplace_back(token, "");
    else
      out.emplace_back(token.substr(0, eq), token.substr(eq + 1));
  }
  return out;
}

DoctorReport RunDoctor(const DoctorOptions& o) { return Doctor(o).Run(); }

}  // namespace swaplab::kernel
