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

// `content` into a new file beside `path`, then renamed over it.
Status ReplaceAtomically(const std::string& path, std::string_view content) {
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = fmt::format("{}/.swaplab-tmp.{:08x}{:08x}", DirOf(path), rd(), rd());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) return Errno(errno, tmp + ": create");
  }
  if (fd < 0) return Errno(EEXIST, tmp + ": create");
  auto fail = [&](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  if (Status s = internal::PwriteAll(fd, content.data(), content.size(), 0, path); !s.ok())
    return fail(s);
  if (::fsync(fd) < 0) return fail(Errno(errno, path + ": fsync"));
  if (::close(fd) < 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return Errno(e, path + ": close");
  }
  if (::rename(tmp.c_str(), path.c_str()) < 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return Errno(e, path + ": rename");
  }
  return Status::Ok();
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

Status WriteOutputFile(const std::string& path, std::string_view content, const OutputOptions& o) {
  if (Status s = CheckOutputFile(path, o); !s.ok()) return s;
  return ReplaceAtomically(path, content);
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
