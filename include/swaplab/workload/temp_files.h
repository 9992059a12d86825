// SPDX-License-Identifier: MIT
// Temporary swap files a run creates (a scenario's real-file device):
// named and labelled so they are recognisable (/var/tmp/swaplab-r<pid>-…,
// label "swaplab-r<pid>"), removed when the run ends, on SIGINT, SIGTERM,
// SIGHUP, SIGQUIT and SIGABRT too once the command line installed the handlers, and found
// by `swaplab kernel cleanup` after a SIGKILL (the pid no longer runs).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::workload {

// The label of this process's temporary areas ("swaplab-r<pid>", ≤ 16 bytes).
std::string TempAreaLabel();
// A new empty file for a temporary area in `dir` for `what` (a scenario
// name, reduced to [A-Za-z0-9_.-]): dir/swaplab-r<pid>-<what>.XXXXXX.swap,
// the X random, created with O_CREAT | O_EXCL | O_NOFOLLOW (mkostemps) so a
// file or link planted at a guessed name is never opened. Its path, or
// -errno naming the directory.
Result<std::string> CreateTempArea(const std::string& dir, const std::string& what);

// A registered temporary file: unlinked by the destructor, or by the
// signal handlers if the process is interrupted first. At most 16 at once
// (Register refuses more: the file is then removed by its owner only).
class TempFile {
 public:
  TempFile() = default;
  explicit TempFile(std::string path);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  // Keeps the file: no longer removed by the destructor or a signal.
  void keep();

 private:
  std::string path_;
  int slot_ = -1;
};

// An existing file about to grow (`area format --size` over a smaller
// file): a signal while it grows truncates it back to `length`, the size it
// had, instead of leaving the growth. Registered until destroyed; shares
// TempFile's 16 slots (none free: not registered).
class GrowingFile {
 public:
  GrowingFile(const std::string& path, uint64_t length);
  ~GrowingFile();
  GrowingFile(const GrowingFile&) = delete;
  GrowingFile& operator=(const GrowingFile&) = delete;

 private:
  int slot_ = -1;
};

// Work directories (a `vm` run's guest files): private directories
// $TMPDIR (default /var/tmp)/swaplab-vm-<pid>.XXXXXX made by mkdtemp and
// removed with everything in them by WorkDir's destructor unless keep() was
// called: when the run ends, SIGINT and SIGTERM included. One left by a
// SIGKILLed run is found by its dead pid: RemoveDeadWorkDirs, called by
// `swaplab kernel cleanup` (the run's qemu died with it: PR_SET_PDEATHSIG).
inline constexpr char kWorkDirPrefix[] = "swaplab-vm-";
// Removes every work directory in $TMPDIR and /var/tmp whose swaplab is no
// longer running; returns their paths.
std::vector<std::string> RemoveDeadWorkDirs();

class WorkDir {
 public:
  static Result<WorkDir> Create();
  WorkDir(WorkDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir();
  const std::string& path() const { return path_; }
  void keep() { path_.clear(); }

 private:
  explicit WorkDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

// SIGINT / SIGTERM / SIGHUP / SIGQUIT / SIGABRT: unlink every registered
// TempFile and truncate every GrowingFile back (unlink and truncate only:
// system calls, async-signal-safe), then die of the signal as before.
// Called once by the command line.
void InstallTempFileCleanup();

}  // namespace swaplab::workload
#pragma GCC visibility pop
