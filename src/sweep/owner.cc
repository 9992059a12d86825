// SPDX-License-Identifier: MIT
// A sweep directory owned (sweep_internal.h): the marker written first,
// the lock held for a whole run, and the joblog checked against the point
// files before a resume trusts it.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "swaplab/alloc/printable.h"
#include "swaplab/workload/json_file.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

// Whether `dir` holds any entry (an unreadable directory counts as full).
bool HasEntries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return true;
  bool any = false;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") {
      any = true;
      break;
    }
  }
  ::closedir(d);
  return any;
}

bool IsMarked(const std::string& dir) {
  struct stat st;
  return ::lstat((dir + "/" + kMarker).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status NotOurs(const std::string& dir) {
  return Status(-EEXIST, Printable(dir) + " holds files but is not a sweep directory (no " +
                             kMarker + "); a sweep never writes over them: use a new --out DIR");
}

// The fields of one joblog line (tab-separated; the command is the rest).
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> f;
  size_t at = 0;
  while (f.size() < 8) {
    const size_t tab = line.find('\t', at);
    if (tab == std::string::npos) break;
    f.push_back(line.substr(at, tab - at));
    at = tab + 1;
  }
  f.push_back(line.substr(at));
  return f;
}

// Why `dir`'s joblog cannot be trusted to resume from ("": it can). A line
// parallel counts as done must be ours (its seq's id at the end of the
// command) and its point must have a complete result.
std::string JoblogProblem(const std::string& dir, const std::vector<std::string>& ids) {
  auto text = workload::ReadTextFile(dir + "/joblog", workload::kMaxSweepJson);
  if (!text.ok()) return text.status().code() == -ENOENT ? "" : text.status().message();
  size_t at = 0;
  bool header = true;
  while (at < text->size()) {
    size_t nl = text->find('\n', at);
    if (nl == std::string::npos) nl = text->size();
    const std::string line = text->substr(at, nl - at);
    at = nl + 1;
    if (header) {
      header = false;
      if (line.rfind("Seq\t", 0) != 0) return "it is not a GNU parallel joblog";
      continue;
    }
    const auto f = Fields(line);
    if (f.size() < 9 || f[6] != "0" || f[7] != "0") continue;  // not done: parallel runs it again
    char* end = nullptr;
    const unsigned long seq = std::strtoul(f[0].c_str(), &end, 10);
    if (*end != '\0' || seq < 1 || seq > ids.size() || f[8].size() < ids[seq - 1].size() + 1 ||
        f[8].compare(f[8].size() - ids[seq - 1].size() - 1, std::string::npos,
                     " " + ids[seq - 1]) != 0)
      return fmt::format("line {} is another job's", Printable(f[0], 16));
    if (!PointDone(dir, ids[seq - 1]))
      return "point " + ids[seq - 1] + " is done there but its result is missing or incomplete";
  }
  return "";
}

}  // namespace

Status ClaimDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return Status(-errno, "cannot create " + Printable(dir) + ": " + std::strerror(errno));
  if (IsMarked(dir)) return Status::Ok();
  if (HasEntries(dir)) return NotOurs(dir);
  const std::string marker = dir + "/" + kMarker;
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(-errno, "cannot create " + Printable(marker) + ": " + std::strerror(errno));
  ::close(fd);
  return Status::Ok();
}

Status CheckOwned(const std::string& dir) {
  if (IsMarked(dir)) return Status::Ok();
  return Status(-EINVAL, Printable(dir) + ": not a sweep directory (no " + kMarker +
                             "; `swaplab sweep SPEC --out DIR` makes one)");
}

Result<int> LockSweep(const std::string& dir) {
  if (Status st = ClaimDir(dir); !st.ok()) return st;
  const std::string marker = dir + "/" + kMarker;
  const int fd = ::open(marker.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return Status(-errno, "cannot open " + Printable(marker) + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK)
      return Status(-EBUSY, Printable(dir) + ": another sweep is running in it (" + kMarker +
                                " is locked); wait for it or use another --out DIR");
    return Status(-e, "cannot lock " + Printable(marker) + ": " + std::strerror(e));
  }
  return fd;
}

bool SweepRunning(const std::string& dir) {
  const std::string marker = dir + "/" + kMarker;
  const int fd = ::open(marker.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // a shared lock taken is dropped with it
  return held;
}

bool PointDone(const std::string& dir, const std::string& id) {
  return ValidId(id) && ReadPointResult(dir, id).ok();
}

Result<std::string> RetireStaleJoblog(const std::string& dir, const std::vector<std::string>& ids) {
  const std::string why = JoblogProblem(dir, ids);
  if (why.empty()) return std::string();
  const std::string from = dir + "/joblog", to = dir + "/joblog.stale";
  if (::rename(from.c_str(), to.c_str()) != 0)
    return Status(-errno, "cannot move " + Printable(from) + ": " + std::strerror(errno));
  return Printable(from) + " cannot be resumed from (" + why + "); moved to joblog.stale, every " +
         "point without a complete result runs again";
}

}  // namespace swaplab::sweep
