// SPDX-License-Identifier: MIT
// The file-type check every open of an area makes, the writers' flock, and
// the running kernel's use of an area (/proc/swaps, /proc/self/mountinfo).
#include "swaplab/area/area_lock.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "area/area_internal.h"

namespace swaplab::area {

using internal::Errno;

const char* FileTypeName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "an unknown file type";
}

Status CheckAreaType(const std::string& path, mode_t mode) {
  if (S_ISREG(mode) || S_ISBLK(mode)) return Status::Ok();
  return Status(S_ISDIR(mode) ? -EISDIR : -EINVAL,
                fmt::format("{}: is {}; a swap area must be a regular file or a block device", path,
                            FileTypeName(mode)));
}

Status CheckAreaPath(const std::string& path, struct stat* out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) < 0) return Errno(errno, path);
  if (out != nullptr) *out = st;
  return CheckAreaType(path, st.st_mode);
}

namespace internal {

Result<int> OpenAreaFd(const std::string& path, int flags, struct stat* out) {
  struct stat before {};
  if (Status s = CheckAreaPath(path, &before); !s.ok()) return s;
  // O_NONBLOCK: should the path be swapped for a FIFO between the stat and
  // the open, the open still returns at once, and the fstat below refuses it.
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, path + ": open");
  struct stat st {};
  if (::fstat(fd, &st) < 0) {
    const int e = errno;
    ::close(fd);
    return Errno(e, path + ": fstat");
  }
  Status s = CheckAreaType(path, st.st_mode);
  if (s.ok() && (st.st_dev != before.st_dev || st.st_ino != before.st_ino))
    s = Status(-EAGAIN, path + ": replaced while it was being opened; try again");
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (out != nullptr) *out = st;
  return fd;
}

}  // namespace internal

namespace {

// /proc/swaps and /proc/self/mountinfo escape space, tab, newline and
// backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool SameArea(const struct stat& a, const struct stat& b) {
  if (S_ISBLK(a.st_mode) || S_ISBLK(b.st_mode))
    return S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

Status CheckNotInUseByKernel(const std::string& path, const struct stat& st) {
  if (std::ifstream swaps("/proc/swaps"); swaps) {
    std::string line;
    std::getline(swaps, line);  // the column titles
    while (std::getline(swaps, line)) {
      std::istringstream in(line);
      std::string name;
      if (!(in >> name)) continue;
      name = Unescape(name);
      struct stat s {};
      if (::stat(name.c_str(), &s) == 0 && SameArea(s, st))
        return Status(-EBUSY, fmt::format("{}: the running kernel swaps on it (/proc/swaps: {}); "
                                          "swapoff it first",
                                          path, name));
    }
  }
  if (!S_ISBLK(st.st_mode)) return Status::Ok();
  if (std::ifstream mounts("/proc/self/mountinfo"); mounts) {
    const std::string dev = fmt::format("{}:{}", major(st.st_rdev), minor(st.st_rdev));
    std::string line;
    while (std::getline(mounts, line)) {
      std::istringstream in(line);
      std::string id, parent, majmin, root, mountpoint;
      if (!(in >> id >> parent >> majmin >> root >> mountpoint)) continue;
      if (majmin == dev)
        return Status(-EBUSY, fmt::format("{}: mounted at {} (device {}); swaplab never writes "
                                          "to a mounted device, not even with --force",
                                          path, Unescape(mountpoint), dev));
    }
  }
  return Status::Ok();
}

AreaLock::AreaLock(AreaLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

AreaLock& AreaLock::operator=(AreaLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

AreaLock::~AreaLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Result<AreaLock> LockFd(int fd, const std::string& path) {
  const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return Errno(errno, path + ": dup");
  if (::flock(dup, LOCK_EX | LOCK_NB) < 0) {
    const int e = errno;
    ::close(dup);
    if (e == EWOULDBLOCK) return Status(-EBUSY, path + ": in use by another swaplab (locked)");
    return Errno(e, path + ": flock");
  }
  AreaLock l;
  l.fd_ = dup;
  l.path_ = path;
  return l;
}

Result<AreaLock> LockArea(const std::string& path) {
  struct stat st {};
  auto fd = internal::OpenAreaFd(path, O_RDONLY, &st);
  if (!fd.ok()) return fd.status();
  Status s = CheckNotInUseByKernel(path, st);
  Result<AreaLock> l = s.ok() ? LockFd(*fd, path) : Result<AreaLock>(s);
  ::close(*fd);
  return l;
}

}  // namespace swaplab::area
