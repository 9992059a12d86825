// SPDX-License-Identifier: MIT
// Private swap areas on the running kernel (kernel_area.h).
#include "swaplab/kernel/kernel_area.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "swaplab/alloc/printable.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/area/swap_header.h"
#include "swaplab/kernel/host.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::kernel {

namespace {

Status Errno(int err, const std::string& what) {
  return Status(-err, what + ": " + std::strerror(err));
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The label in the swap header of `path` (empty if unreadable).
std::string AreaLabel(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::array<std::byte, area::kPageSize> page{};
  const ssize_t n = pread(fd, page.data(), page.size(), 0);
  close(fd);
  if (n != static_cast<ssize_t>(page.size())) return "";
  return area::DecodeHeader(page).v1.label;
}

bool IsOurFile(const std::string& path) {
  const std::string prefix = std::string(kAreaDir) + "/" + kLabelPrefix;
  return path.rfind(prefix, 0) == 0;
}

// /dev/loopN → its backing file ("" if none).
std::string LoopBacking(const std::string& dev) {
  const auto slash = dev.rfind('/');
  auto b = ReadSmallFile("/sys/block/" + dev.substr(slash + 1) + "/loop/backing_file");
  return b.ok() ? Trim(*b) : "";
}

Status DetachLoop(const std::string& dev) {
  const int fd = open(dev.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open " + dev);
  const int rc = ioctl(fd, LOOP_CLR_FD, 0);
  const int err = errno;
  close(fd);
  if (rc != 0 && err != ENXIO) return Errno(err, "LOOP_CLR_FD " + dev);
  return Status::Ok();
}

Status ResetZram(int id) {
  const std::string dir = "/sys/block/zram" + std::to_string(id);
  Status st = WriteSmallFile(dir + "/reset", "1");
  Status rm = WriteSmallFile("/sys/class/zram-control/hot_remove", std::to_string(id));
  return st.ok() ? rm : st;
}

bool ProcessAlive(const std::string& pid) {
  const int p = std::atoi(pid.c_str());
  return p > 0 && (kill(p, 0) == 0 || errno == EPERM);
}

}  // namespace

const char* Name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kFile:
      return "file";
    case DeviceKind::kLoop:
      return "loop";
    case DeviceKind::kLoopSsd:
      return "loop-ssd";
    case DeviceKind::kZram:
      return "zram";
  }
  return "?";
}

Result<DeviceKind> ParseDeviceKind(const std::string& s) {
  for (DeviceKind k :
       {DeviceKind::kFile, DeviceKind::kLoop, DeviceKind::kLoopSsd, DeviceKind::kZram})
    if (s == Name(k)) return k;
  return Status(-EINVAL, "unknown device kind '" + s + "' (file, loop, loop-ssd, zram)");
}

Result<std::unique_ptr<KernelArea>> KernelArea::Create(const AreaSpec& spec) {
  if (spec.pages < area::kMinAreaPages)
    return Status(-EINVAL, "swap area of " + std::to_string(spec.pages) + " pages (at least 10)");
  std::unique_ptr<KernelArea> a(new KernelArea(spec));
  if (Status st = a->Build(); !st.ok()) {
    (void)a->Remove();
    return st;
  }
  return a;
}

// Creation order matters for cleanup: each object is recorded in the state
// file before it is created.
Status KernelArea::Build() {
  const std::string label =
      std::string(kLabelPrefix) + std::to_string(getpid()) + "-" + std::to_string(spec_.index);
  const uint64_t bytes = spec_.pages * area::kPageSize;
  if (spec_.kind == DeviceKind::kZram) {
    if (access("/sys/class/zram-control/hot_add", R_OK) != 0)
      return Status(-ENODEV,
                    "zram is not available on this kernel (no /sys/class/zram-control: module not "
                    "loaded or not built)");
    auto id = ReadSmallFile("/sys/class/zram-control/hot_add");
    if (!id.ok()) return id.status();
    zram_id_ = std::atoi(id->c_str());
    if (Status st = StateFile::Append({"zram", {std::to_string(zram_id_)}}); !st.ok()) return st;
    const std::string dir = "/sys/block/zram" + std::to_string(zram_id_);
    if (Status st = WriteSmallFile(dir + "/disksize", std::to_string(bytes)); !st.ok()) return st;
    swap_path_ = "/dev/zram" + std::to_string(zram_id_);
    area::FormatOptions fo;
    fo.label = label;
    if (Status st = area::FormatArea(swap_path_, fo); !st.ok()) return st;
    ssd_ = true;
    inflight_ = dir + "/inflight";
  } else {
    // A swap file written with zeros (never sparse or preallocated),
    // mode 600, on ext4 under /var/tmp.
    file_ = std::string(kAreaDir) + "/" + label + ".swap";
    if (Status st = StateFile::Append({"file", {file_}}); !st.ok()) return st;
    area::FormatOptions fo;
    fo.size_bytes = bytes;
    fo.label = label;
    if (Status st = area::FormatArea(file_, fo); !st.ok()) return st;
    if (chmod(file_.c_str(), 0600) != 0) return Errno(errno, "chmod 600 " + file_);
    if (spec_.kind == DeviceKind::kFile) {
      swap_path_ = file_;
      // The swap file's device decides SWP_SOLIDSTATE; find it via the
      // file's st_dev.
      struct stat sb {};
      if (stat(file_.c_str(), &sb) != 0) return Errno(errno, "stat " + file_);
      const std::string bdev = "/sys/dev/block/" + std::to_string(major(sb.st_dev)) + ":" +
                               std::to_string(minor(sb.st_dev));
      auto r = ReadSmallFile(bdev + "/queue/rotational");
      inflight_ = bdev + "/inflight";
      ssd_ = r.ok() && Trim(*r) == "0";
    } else {
      const int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
      if (ctl < 0) return Errno(errno, "open /dev/loop-control");
      const int n = ioctl(ctl, LOOP_CTL_GET_FREE);
      const int err = errno;
      close(ctl);
      if (n < 0) return Errno(err, "LOOP_CTL_GET_FREE");
      swap_path_ = "/dev/loop" + std::to_string(n);
      if (Status st = StateFile::Append({"loop", {swap_path_, file_}}); !st.ok()) return st;
      loop_fd_ = open(swap_path_.c_str(), O_RDWR | O_CLOEXEC);
      if (loop_fd_ < 0) return Errno(errno, "open " + swap_path_);
      const int ffd = open(file_.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
      if (ffd < 0) return Errno(errno, "open " + file_);
      loop_config cfg{};
      cfg.fd = static_cast<uint32_t>(ffd);
      cfg.block_size = alloc::kPageSize;  // a page a block: the swap file's pages
      cfg.info.lo_flags = LO_FLAGS_DIRECT_IO;
      const int rc = ioctl(loop_fd_, LOOP_CONFIGURE, &cfg);
      const int cerr = errno;
      close(ffd);
      if (rc != 0) return Errno(cerr, "LOOP_CONFIGURE " + swap_path_ + " over " + file_);
      const std::string q = "/sys/block/loop" + std::to_string(n);
      inflight_ = q + "/inflight";
      // queue/rotational decides SWP_SOLIDSTATE at swapon.
      ssd_ = spec_.kind == DeviceKind::kLoopSsd;
      if (Status st = WriteSmallFile(q + "/queue/rotational", ssd_ ? "0" : "1"); !st.ok())
        return st;
      auto dio = ReadSmallFile(q + "/loop/dio");
      note_ = std::string("dio ") + (dio.ok() && Trim(*dio) == "1" ? "on" : "off");
    }
  }
  if (Status st = StateFile::Append({"swap", {swap_path_}}); !st.ok()) return st;
  const int flags = SWAP_FLAG_PREFER | ((spec_.prio << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
  if (swapon(swap_path_.c_str(), flags) != 0) return Errno(errno, "swapon " + swap_path_);
  on_ = true;
  return Status::Ok();
}

Status KernelArea::Swapoff() {
  if (!on_) return Status::Ok();
  if (swapoff(swap_path_.c_str()) != 0) return Errno(errno, "swapoff " + swap_path_);
  on_ = false;
  return Status::Ok();
}

Status KernelArea::Remove() {
  Status first = Swapoff();
  auto keep = [&first](Status st) {
    if (first.ok() && !st.ok()) first = st;
  };
  if (loop_fd_ >= 0) {
    if (!on_) {
      if (ioctl(loop_fd_, LOOP_CLR_FD, 0) != 0 && errno != ENXIO)
        keep(Errno(errno, "LOOP_CLR_FD " + swap_path_));
    }
    close(loop_fd_);
    loop_fd_ = -1;
  }
  if (zram_id_ >= 0 && !on_) {
    keep(ResetZram(zram_id_));
    zram_id_ = -1;
  }
  if (!file_.empty() && !on_) {
    if (unlink(file_.c_str()) != 0 && errno != ENOENT) keep(Errno(errno, "unlink " + file_));
    file_.clear();
  }
  return first;
}

KernelArea::~KernelArea() { (void)Remove(); }

namespace {

// Active swap areas that are swaplab's: listed in the state file or a
// /var/tmp/swaplab-* file (or a loop over one), with a swaplab label.
std::vector<std::string> OurActiveAreas(const std::vector<StateEntry>& state) {
  std::set<std::string> listed;
  for (const auto& e : state)
    if (e.kind == "swap" && !e.args.empty()) listed.insert(e.args[0]);
  std::vector<std::string> out;
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return out;
  for (const auto& s : *swaps) {
    std::string backing = s.filename;
    if (s.filename.rfind("/dev/loop", 0) == 0) backing = LoopBacking(s.filename);
    const bool named = listed.count(s.filename) || IsOurFile(backing);
    if (named && AreaLabel(s.filename).rfind(kLabelPrefix, 0) == 0) out.push_back(s.filename);
  }
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> KernelArea::ReadSlot(uint64_t offset) const {
  if (offset == 0 || offset >= spec_.pages)
    return Status(-EINVAL, "slot " + std::to_string(offset) + " is outside " + swap_path_);
  const int fd = open(swap_path_.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) return Errno(errno, "open " + swap_path_);
  void* buf = nullptr;
  if (posix_memalign(&buf, area::kPageSize, area::kPageSize) != 0) {
    close(fd);
    return Status(-ENOMEM, "no memory for a page");
  }
  const ssize_t n = pread(fd, buf, area::kPageSize, static_cast<off_t>(offset * area::kPageSize));
  const int err = errno;
  close(fd);
  std::vector<uint8_t> out;
  if (n == static_cast<ssize_t>(area::kPageSize)) {
    const auto* b = static_cast<const uint8_t*>(buf);
    out.assign(b, b + area::kPageSize);
  }
  free(buf);
  if (out.empty())
    return n < 0
               ? Errno(err, "read slot " + std::to_string(offset) + " of " + swap_path_)
               : Status(-EIO, "short read of slot " + std::to_string(offset) + " of " + swap_path_);
  return out;
}

Status CheckNoLeftovers() {
  auto state = StateFile::Load();
  if (!state.ok()) return state.status();
  for (const auto& e : *state) {
    if (e.kind == "pid" && !e.args.empty() && ProcessAlive(e.args[0]) &&
        std::atoi(e.args[0].c_str()) != getpid())
      return Status(-EBUSY, "another swaplab kernel run is active (pid " + e.args[0] + ", " +
                                kStateFile + ")");
  }
  const auto active = OurActiveAreas(*state);
  if (!active.empty())
    return Status(
        -EBUSY,
        "swap area " + active.front() +
            " from an earlier swaplab run is still active; run `swaplab kernel cleanup` first");
  if (!state->empty())
    return Status(-EBUSY, std::string("a previous swaplab kernel run did not finish (") +
                              kStateFile + " exists); run `swaplab kernel cleanup` first");
  return Status::Ok();
}

namespace {

// `swaplab kernel cleanup` of what the state file records (and our areas,
// loops and files found on the machine): each step in turn, an error kept
// and logged and the next step tried all the same; the state file goes
// only when every step succeeded.
class RecordedCleanup {
 public:
  RecordedCleanup(std::vector<StateEntry> state, std::vector<std::string>* log)
      : state_(std::move(state)), log_(log) {}
  Status Run() {
    SwapoffAreas();
    DetachLoops();
    ResetZrams();
    RemoveAreaFiles();
    RestoreSettings();
    RemoveCgroups();
    if (first_.ok()) Keep(StateFile::Remove());
    return first_;
  }

 private:
  void Keep(Status st) {
    if (!st.ok()) {
      log_->push_back("error: " + st.ToString());
      if (first_.ok()) first_ = st;
    }
  }
  void SwapoffAreas();
  void DetachLoops();
  void ResetZrams();
  void RemoveAreaFiles();
  void RestoreSettings();
  void RemoveCgroups();

  const std::vector<StateEntry> state_;
  std::vector<std::string>* log_;
  Status first_ = Status::Ok();
};

void RecordedCleanup::SwapoffAreas() {
  for (const auto& path : OurActiveAreas(state_)) {
    if (swapoff(path.c_str()) != 0) {
      Keep(Errno(errno, "swapoff " + path));
    } else {
      log_->push_back("swapoff " + path);
    }
  }
}

// Loops over our files (recorded or found in sysfs).
void RecordedCleanup::DetachLoops() {
  std::set<std::string> loops;
  for (const auto& e : state_)
    if (e.kind == "loop" && !e.args.empty()) loops.insert(e.args[0]);
  if (DIR* d = opendir("/sys/block")) {
    while (dirent* de = readdir(d)) {
      const std::string n = de->d_name;
      if (n.rfind("loop", 0) == 0 && IsOurFile(LoopBacking("/dev/" + n))) loops.insert("/dev/" + n);
    }
    closedir(d);
  }
  for (const auto& l : loops) {
    if (!IsOurFile(LoopBacking(l))) continue;  // already detached or reused by someone else
    Status st = DetachLoop(l);
    Keep(st);
    if (st.ok()) log_->push_back("detach " + l);
  }
}

void RecordedCleanup::ResetZrams() {
  for (const auto& e : state_) {
    if (e.kind == "zram" && !e.args.empty()) {
      const std::string dev = "/dev/zram" + e.args[0];
      if (AreaLabel(dev).rfind(kLabelPrefix, 0) != 0) continue;  // not ours any more
      Keep(ResetZram(std::atoi(e.args[0].c_str())));
      log_->push_back("reset zram" + e.args[0]);
    }
  }
}

void RecordedCleanup::RemoveAreaFiles() {
  DIR* d = opendir(kAreaDir);
  if (!d) return;
  while (dirent* de = readdir(d)) {
    const std::string p = std::string(kAreaDir) + "/" + de->d_name;
    if (!IsOurFile(p) || p.size() < 5 || p.substr(p.size() - 5) != ".swap") continue;
    // a `swaplab run` temporary area (label swaplab-r<pid>): only once
    // its process is gone (workload/temp_files.h)
    const std::string label = AreaLabel(p);
    if (label.rfind("swaplab-r", 0) == 0 && ProcessAlive(label.substr(9))) continue;
    if (unlink(p.c_str()) != 0) {
      Keep(Errno(errno, "unlink " + p));
    } else {
      log_->push_back("remove " + p);
    }
  }
  closedir(d);
}

void RecordedCleanup::RestoreSettings() {
  // Settings: the first recorded value of a path is the original.
  std::vector<std::pair<std::string, std::string>> settings;
  std::set<std::string> seen;
  for (const auto& e : state_) {
    if (e.kind == "setting" && e.args.size() == 2 && seen.insert(e.args[0]).second)
      settings.emplace_back(e.args[0], e.args[1]);
  }
  for (const auto& [path, value] : settings) {
    auto cur = ReadSmallFile(path);
    if (cur.ok() && SelectedChoice(*cur) == value) continue;
    Keep(WriteSmallFile(path, value));
    log_->push_back("restore " + path + " = " + value);
  }
}

void RecordedCleanup::RemoveCgroups() {
  for (const auto& e : state_) {
    if (e.kind == "cgroup" && !e.args.empty() && access(e.args[0].c_str(), F_OK) == 0) {
      if (rmdir(e.args[0].c_str()) != 0) {
        Keep(Errno(errno, "rmdir " + e.args[0]));
      } else {
        log_->push_back("rmdir " + e.args[0]);
      }
    }
  }
}

Status CleanupRecorded(std::vector<std::string>* log) {
  auto state = StateFile::Load();
  if (!state.ok()) return state.status();
  for (const auto& e : *state) {
    if (e.kind == "pid" && !e.args.empty() && ProcessAlive(e.args[0]))
      return Status(
          -EBUSY, "a swaplab kernel run is still active (pid " + e.args[0] + "); not cleaning up");
  }
  return RecordedCleanup(std::move(state).value(), log).Run();
}

}  // namespace

Status Cleanup(std::vector<std::string>* log) {
  const Status st = CleanupRecorded(log);
  for (const auto& p : workload::RemoveDeadWorkDirs())
    log->push_back("remove " + Printable(p, kPathMax));
  return st;
}

}  // namespace swaplab::kernel
