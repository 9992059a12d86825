// SPDX-License-Identifier: MIT
// Refusing what must not be opened or written: the file-type check every
// open of an area makes (never blocking on a FIFO or a device that is not
// a disk), the advisory lock a writer holds for its whole run, and the
// running kernel's own use of the area (swapped on, mounted).
#pragma once
#pragma GCC visibility push(default)

#include <sys/stat.h>

#include <string>

#include "swaplab/alloc/status.h"

namespace swaplab::area {

// "a FIFO", "a character device", "a directory", "a socket", "a regular
// file", "a block device", "an unknown file type".
const char* FileTypeName(mode_t mode);

// stat(2)s `path` and refuses anything but a regular file or a block device
// before it is opened: −EINVAL "PATH: is a FIFO; a swap area must be a
// regular file or a block device" (a directory: −EISDIR). −ENOENT, −EACCES,
// −ELOOP, −ENOTDIR from stat, naming the path. Fills *st when given.
Status CheckAreaPath(const std::string& path, struct stat* st = nullptr);

// An exclusive flock(2) on a swap area, held until destruction (or until
// the object it was moved into is destroyed). Empty when default-made.
class AreaLock {
 public:
  AreaLock() = default;
  AreaLock(AreaLock&& o) noexcept;
  AreaLock& operator=(AreaLock&& o) noexcept;
  AreaLock(const AreaLock&) = delete;
  AreaLock& operator=(const AreaLock&) = delete;
  ~AreaLock();
  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  friend Result<AreaLock> LockArea(const std::string& path);
  friend Result<AreaLock> LockFd(int fd, const std::string& path);
  int fd_ = -1;
  std::string path_;
};

// For a command that writes the area (image write, image read --consume,
// area format), before it opens it for writing:
//   1. CheckAreaPath (type; never opens a FIFO or a character device);
//   2. refuses an area the running kernel swaps on (/proc/swaps, compared by
//      device and inode, or by device number for a block device, never by
//      name): −EBUSY "PATH: the running kernel swaps on it (/proc/swaps:
//      NAME); swapoff it first";
//   3. refuses a mounted block device (/proc/self/mountinfo, by
//      major:minor): −EBUSY "PATH: mounted at DIR";
//   4. opens it read-only, non-blocking, and takes flock(LOCK_EX|LOCK_NB):
//      −EBUSY "PATH: in use by another swaplab (locked)".
// Block devices are also opened O_EXCL by the writers, as before.
Result<AreaLock> LockArea(const std::string& path);
// LockArea when `wanted`, else an empty lock (one call site for commands
// that write only with an option, such as image read --consume).
inline Result<AreaLock> LockAreaIf(bool wanted, const std::string& path) {
  if (!wanted) return AreaLock();
  return LockArea(path);
}
// Steps 2 and 3 alone, for an open file's stat.
Status CheckNotInUseByKernel(const std::string& path, const struct stat& st);
// Step 4 on an already open fd (a file format just created); the lock
// duplicates the fd and keeps the duplicate.
Result<AreaLock> LockFd(int fd, const std::string& path);

}  // namespace swaplab::area
#pragma GCC visibility pop
