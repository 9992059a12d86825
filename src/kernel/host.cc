// SPDX-License-Identifier: MIT
// procfs / sysfs helpers and the state file (host.h).
#include "swaplab/kernel/host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "swaplab/alloc/types.h"

namespace swaplab::kernel {

namespace {
Status Errno(int err, const std::string& what) {
  return Status(-err, what + ": " + std::strerror(err));
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}
}  // namespace

bool IsRoot() { return geteuid() == 0; }

int PinThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : errno;
}

Result<std::string> ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open " + path);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      const int err = errno;
      close(fd);
      return Errno(err, "read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

Status WriteSmallFile(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open " + path);
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n < 0) return Errno(err, "write '" + value + "' to " + path);
  if (static_cast<size_t>(n) != value.size()) return Status(-EIO, "short write to " + path);
  return Status::Ok();
}

std::string SelectedChoice(const std::string& contents) {
  const auto b = contents.find('[');
  const auto e = contents.find(']');
  if (b == std::string::npos || e == std::string::npos || e < b) return Trim(contents);
  return contents.substr(b + 1, e - b - 1);
}

namespace {

// /proc/swaps, open for the process's life: a seq_file read from offset 0
// is made anew (seq_read_iter()), so each read is one pread instead of an
// open, a read and a close — a kernel run reads it after every step.
Result<std::string> ProcSwapsText() {
  static const int fd = open("/proc/swaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadSmallFile("/proc/swaps");
  std::string text;
  char buf[4096];
  for (off_t at = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "read /proc/swaps");
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

}  // namespace

Result<std::vector<ActiveSwap>> ReadProcSwaps() {
  auto text = ProcSwapsText();
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string line;
  std::getline(in, line);  // header
  std::vector<ActiveSwap> out;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    ActiveSwap a;
    if (!(l >> a.filename >> a.type >> a.size_kb >> a.used_kb >> a.prio))
      return Status(-EIO, "/proc/swaps: cannot parse '" + line + "'");
    a.index = static_cast<int>(out.size());
    out.push_back(a);
  }
  return out;
}

Result<uint64_t> ReadVmstat(const std::string& key) {
  auto text = ReadSmallFile("/proc/vmstat");
  if (!text.ok()) return text.status();
  std::istringstream in(*text);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return Status(-ENOENT, "/proc/vmstat has no " + key);
}

bool WaitForWriteback(int timeout_ms, const std::vector<std::string>& inflight) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool idle = true;
    for (const auto& f : inflight) {
      auto t = ReadSmallFile(f);
      if (!t.ok()) continue;
      std::istringstream in(*t);
      uint64_t r = 0, w = 0;
      in >> r >> w;
      idle &= r == 0 && w == 0;
    }
    if (idle) {
      (void)WriteSmallFile("/proc/sys/vm/stat_refresh", "1");
      auto v = ReadVmstat("nr_writeback");
      if (v.ok() && *v == 0) return true;
    }
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string MthpEnabledPath(int order) {
  return "/sys/kernel/mm/transparent_hugepage/hugepages-" + std::to_string(4 << order) +
         "kB/enabled";
}

MthpStats ReadMthpStats() {
  MthpStats s;
  for (int order = 1; order <= alloc::kMaxFolioOrder; ++order) {
    const std::string dir =
        "/sys/kernel/mm/transparent_hugepage/hugepages-" + std::to_string(4 << order) + "kB/stats/";
    auto out = ReadSmallFile(dir + "swpout");
    auto fb = ReadSmallFile(dir + "swpout_fallback");
    if (!out.ok() || !fb.ok()) continue;
    s.swpout[order] = std::stoull(*out);
    s.swpout_fallback[order] = std::stoull(*fb);
  }
  return s;
}

Result<std::vector<StateEntry>> StateFile::Load(const std::string& path) {
  std::ifstream in(path);
  std::vector<StateEntry> out;
  if (!in) {
    if (errno == ENOENT) return out;
    return Errno(errno, "open " + path);
  }
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    StateEntry e;
    if (!(l >> e.kind)) continue;
    std::string a;
    while (l >> a) e.args.push_back(a);
    out.push_back(std::move(e));
  }
  return out;
}

Status StateFile::Append(const StateEntry& e, const std::string& path) {
  if (mkdir(kStateDir, 0700) != 0 && errno != EEXIST)
    return Errno(errno, std::string("mkdir ") + kStateDir);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(errno, "open " + path);
  std::string line = e.kind;
  for (const auto& a : e.args) line += " " + a;
  line += "\n";
  const ssize_t n = write(fd, line.data(), line.size());
  const int err = errno;
  fsync(fd);
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) return Errno(err, "write " + path);
  return Status::Ok();
}

Status StateFile::Remove(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Errno(errno, "unlink " + path);
  return Status::Ok();
}

Result<SavedSetting> SavedSetting::Change(const std::string& path, const std::string& value) {
  auto cur = ReadSmallFile(path);
  if (!cur.ok()) return cur.status();
  const std::string original = SelectedChoice(*cur);
  if (Status st = StateFile::Append({"setting", {path, original}}); !st.ok()) return st;
  if (Status st = WriteSmallFile(path, value); !st.ok()) return st;
  return SavedSetting(path, original);
}

SavedSetting::SavedSetting(SavedSetting&& o) noexcept
    : path_(std::move(o.path_)), original_(std::move(o.original_)), active_(o.active_) {
  o.active_ = false;
}

SavedSetting::~SavedSetting() { (void)Restore(); }

Status SavedSetting::Restore() {
  if (!active_) return Status::Ok();
  active_ = false;
  return WriteSmallFile(path_, original_);
}

}  // namespace swaplab::kernel
