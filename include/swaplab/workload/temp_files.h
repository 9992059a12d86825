// Temporary swap files a run creates (a scenario's real-file device):
// named and labelled so they are recognisable (/var/tmp/swaplab-r<pid>-…,
// label "swaplab-r<pid>"), removed when the run ends, on SIGINT, SIGTERM,
// SIGHUP and SIGABRT too once the command line installed the handlers, and found
// by `swaplab kernel cleanup` after a SIGKILL (the pid no longer runs).
#pragma once

#include <string>

namespace swaplab::workload {

// The label of this process's temporary areas ("swaplab-r<pid>", ≤ 16 bytes).
std::string TempAreaLabel();
// Path for a temporary area in `dir` for `what` (a scenario name, reduced
// to [A-Za-z0-9_.-]).
std::string TempAreaPath(const std::string& dir, const std::string& what);

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

 private:
  std::string path_;
  int slot_ = -1;
};

// SIGINT / SIGTERM / SIGHUP / SIGABRT: unlink every registered file, then
// die of the signal as before. Called once by the command line.
void InstallTempFileCleanup();

}  // namespace swaplab::workload
