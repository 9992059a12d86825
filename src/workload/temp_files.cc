// SPDX-License-Identifier: MIT
// Temporary areas removed on every exit path but SIGKILL.
#include "swaplab/workload/temp_files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "swaplab/alloc/printable.h"  // kPathMax

namespace swaplab::workload {

namespace fs = std::filesystem;

namespace {

constexpr int kSlots = 16;
// A slot is written only while `used` is false for everyone else, and read
// by the handler only when `used` is true: the handler needs no lock.
char g_paths[kSlots][kPathMax];
// -1: unlink the path; else truncate it to this length (a file grown).
int64_t g_lengths[kSlots];
std::atomic<bool> g_used[kSlots];
std::atomic<bool> g_claimed[kSlots];  // owned by a TempFile (filled or being filled)

void OnSignal(int sig) {
  for (int i = 0; i < kSlots; ++i) {
    if (!g_used[i].load(std::memory_order_acquire)) continue;
    // truncate(2) is a system call, safe here like unlink
    if (g_lengths[i] < 0)
      ::unlink(g_paths[i]);
    else
      (void)::truncate(g_paths[i], static_cast<off_t>(g_lengths[i]));
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string Clean(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

}  // namespace

std::string TempAreaLabel() { return "swaplab-r" + std::to_string(::getpid()); }

Result<std::string> CreateTempArea(const std::string& dir, const std::string& what) {
  static constexpr char kSuffix[] = ".swap";
  const std::string tmpl = dir + "/" + TempAreaLabel() + "-" + Clean(what) + ".XXXXXX" + kSuffix;
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const int fd = ::mkostemps(buf.data(), sizeof(kSuffix) - 1, O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Status(-errno, "create " + tmpl + ": " + std::strerror(errno));
  ::close(fd);
  return std::string(buf.data());
}

// A slot for `path` (-1 when none is free or the path is too long): the
// handler unlinks it (length -1) or truncates it to `length`.
static int Claim(const std::string& path, int64_t length) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    // claim the slot first (never visible to the handler until filled)
    if (!g_claimed[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_lengths[i] = length;
    g_used[i].store(true, std::memory_order_release);
    return i;
  }
  return -1;
}

static void Release(int slot) {
  if (slot < 0) return;
  g_used[slot].store(false, std::memory_order_release);
  g_claimed[slot].store(false, std::memory_order_release);
}

TempFile::TempFile(std::string path) : path_(std::move(path)), slot_(Claim(path_, -1)) {}

void TempFile::keep() {
  Release(slot_);
  slot_ = -1;
  path_.clear();
}

GrowingFile::GrowingFile(const std::string& path, uint64_t length)
    : slot_(length <= static_cast<uint64_t>(INT64_MAX) ? Claim(path, static_cast<int64_t>(length))
                                                       : -1) {}

GrowingFile::~GrowingFile() { Release(slot_); }

TempFile::~TempFile() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  keep();
}

Result<WorkDir> WorkDir::Create() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/var/tmp") + "/" + kWorkDirPrefix +
                     std::to_string(getpid()) + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    return Status(-errno, "mkdtemp " + tmpl + ": " + std::strerror(errno));
  return WorkDir(std::string(buf.data()));
}

WorkDir::~WorkDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> RemoveDeadWorkDirs() {
  std::vector<std::string> dirs = {"/var/tmp"};
  if (const char* t = std::getenv("TMPDIR"); t && *t && std::string(t) != "/var/tmp")
    dirs.emplace_back(t);
  std::vector<std::string> removed;
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(kWorkDirPrefix, 0) != 0 || !e.is_directory(ec)) continue;
      const std::string rest = name.substr(std::strlen(kWorkDirPrefix));
      const size_t dot = rest.find('.');
      if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot)
        continue;
      const pid_t pid = static_cast<pid_t>(std::atol(rest.substr(0, dot).c_str()));
      if (pid <= 0 || kill(pid, 0) == 0 || errno == EPERM) continue;  // its swaplab still runs
      if (fs::remove_all(e.path(), ec) != static_cast<std::uintmax_t>(-1) && !ec)
        removed.push_back(e.path().string());
    }
  }
  return removed;
}

void InstallTempFileCleanup() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  // SIGABRT too: an exception no one catches (in a worker thread, say)
  // ends in abort(), which would leave the files behind.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace swaplab::workload
