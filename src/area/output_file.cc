// SPDX-License-Identifier: MIT
// Output files and directories that cannot destroy data (output_file.h).
#include "swaplab/area/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <random>
#include <utility>

#include "area/area_internal.h"
#include "swaplab/area/area_lock.h"
#include "swaplab/area/swap_header.h"

namespace swaplab::area {

using internal::Errno;

namespace {

// The signature at the end of the first page, if the file has one.
Signature FirstPageSignature(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Signature::kUnknown;
  std::array<std::byte, kPageSize> page{};
  ssize_t got = 0;
  while (got < static_cast<ssize_t>(page.size())) {
    const ssize_t n = ::read(fd, page.data() + got, page.size() - static_cast<size_t>(got));
    if (n <= 0) break;
    got += n;
  }
  ::close(fd);
  if (got != static_cast<ssize_t>(page.size())) return Signature::kUnknown;
  return DecodeHeader(page).signature;
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status CheckOutputFile(const std::string& path, const OutputOptions& o) {
  if (path.empty()) return Status(-EINVAL, "output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) < 0) {
    if (errno == ENOENT) return Status::Ok();
    return Errno(errno, path);
  }
  for (const auto& in : o.inputs) {
    struct stat ist {};
    if (::stat(in.c_str(), &ist) == 0 && ist.st_dev == st.st_dev && ist.st_ino == st.st_ino)
      return Status(-EINVAL, path + ": the output is the input " + in + "; give another path");
  }
  if (!S_ISREG(st.st_mode))
    return Status(-EINVAL, fmt::format("{}: is {}; the output must be a regular file", path,
                                       FileTypeName(st.st_mode)));
  const Signature sig = FirstPageSignature(path);
  if (sig == Signature::kSwapSpace2 || sig == Signature::kSwapSpaceV0 || sig == Signature::kSuspend)
    return Status(-EBUSY, fmt::format("{}: is a swap area ({}); not overwritten, even with --force",
                                      path, Name(sig)));
  if (!o.force) return Status(-EEXIST, path + ": exists; use --force to replace it");
  return Status::Ok();
}

Result<std::unique_ptr<OutputFileWriter>> OutputFileWriter::Open(const std::string& path,
                                                                 const OutputOptions& o) {
  if (Status s = CheckOutputFile(path, o); !s.ok()) return s;
  std::unique_ptr<OutputFileWriter> w(new OutputFileWriter(path));
  std::random_device rd;
  for (int attempt = 0; attempt < 100 && w->fd_ < 0; ++attempt) {
    w->temp_ = fmt::format("{}/.swaplab-tmp.{:08x}{:08x}", DirOf(path), rd(), rd());
    w->fd_ = ::open(w->temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (w->fd_ < 0 && errno != EEXIST) return Errno(errno, w->temp_ + ": create");
  }
  if (w->fd_ < 0) return Errno(EEXIST, w->temp_ + ": create");
  return w;
}

OutputFileWriter::~OutputFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

Status OutputFileWriter::Write(std::string_view data) {
  if (fd_ < 0) return Status(-EBADF, path_ + ": written after it was committed");
  Status s = internal::PwriteAll(fd_, data.data(), data.size(), written_, path_);
  if (s.ok()) written_ += data.size();
  return s;
}

Status OutputFileWriter::Commit() {
  if (fd_ < 0) return Status(-EBADF, path_ + ": committed twice");
  const int fd = std::exchange(fd_, -1);
  if (::fsync(fd) < 0) {
    const int e = errno;
    ::close(fd);
    return Errno(e, path_ + ": fsync");
  }
  if (::close(fd) < 0) return Errno(errno, path_ + ": close");
  if (::rename(temp_.c_str(), path_.c_str()) < 0) return Errno(errno, path_ + ": rename");
  committed_ = true;
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, std::string_view content, const OutputOptions& o) {
  auto w = OutputFileWriter::Open(path, o);
  if (!w.ok()) return w.status();
  if (Status s = (*w)->Write(content); !s.ok()) return s;
  return (*w)->Commit();
}

Status PrepareOutputDir(const std::string& dir) {
  if (dir.empty()) return Status(-EINVAL, "output directory is empty");
  if (::mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST) return Errno(errno, dir + ": mkdir");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) < 0) return Errno(errno, dir);
  if (!S_ISDIR(st.st_mode))
    return Status(-EINVAL,
                  fmt::format("{}: is {}; give a directory", dir, FileTypeName(st.st_mode)));
  const std::string marker = dir + "/" + kOutputMarker;
  struct stat mst {};
  if (::lstat(marker.c_str(), &mst) == 0) {
    if (!S_ISREG(mst.st_mode)) return Status(-EINVAL, marker + ": not a regular file");
    return Status::Ok();  // ours
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Errno(errno, dir);
  std::string foreign;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") {
      foreign = n;
      break;
    }
  }
  ::closedir(d);
  if (!foreign.empty())
    return Status(-EEXIST, fmt::format("{}: not empty and not a swaplab output directory (holds "
                                       "{}, no {}); give a new or empty directory",
                                       dir, foreign, kOutputMarker));
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(errno, marker + ": create");
  static constexpr std::string_view kText = "swaplab writes into this directory\n";
  Status s = internal::PwriteAll(fd, kText.data(), kText.size(), 0, marker);
  ::close(fd);
  return s;
}

Status WriteOutputDirFile(const std::string& dir, const std::string& name,
                          std::string_view content) {
  const std::string path = dir + "/" + name;
  OutputOptions o;
  o.force = true;  // the directory is ours: an earlier run's file is replaced
  return WriteOutputFile(path, content, o);
}

}  // namespace swaplab::area
