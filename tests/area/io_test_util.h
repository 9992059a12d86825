// SPDX-License-Identifier: MIT
// Helpers for the I/O engine tests: a scratch directory on a real
// filesystem, aligned random pages, a fragmented file, FIEMAP.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "swaplab/area/io_engine.h"

namespace swaplab::area::testing {

inline constexpr size_t kPg = 4096;

// A directory under /var/tmp (a real disk here, not tmpfs), removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = "/var/tmp/swaplab_io_test.XXXXXX";
    char* p = mkdtemp(tmpl.data());
    if (p != nullptr) path_ = p;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// n pages, 4096-aligned, freed at the end.
class Pages {
 public:
  explicit Pages(size_t n, size_t misalign = 0) : n_(n), misalign_(misalign) {
    void* p = nullptr;
    if (posix_memalign(&p, kPg, n * kPg + kPg) == 0) mem_ = static_cast<std::byte*>(p);
  }
  ~Pages() { std::free(mem_); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  // Page i; misaligned by `misalign` bytes when asked for.
  std::byte* operator[](size_t i) const { return mem_ + misalign_ + i * kPg; }
  size_t size() const { return n_; }
  void Fill(std::mt19937_64& rng) {
    for (size_t i = 0; i < n_ * kPg; i += 8) {
      const uint64_t v = rng();
      std::memcpy(mem_ + misalign_ + i, &v, 8);
    }
  }
  void Zero() { std::memset(mem_ + misalign_, 0, n_ * kPg); }
  bool PageEquals(size_t i, const Pages& o, size_t j) const {
    return std::memcmp((*this)[i], o[j], kPg) == 0;
  }

 private:
  std::byte* mem_ = nullptr;
  size_t n_, misalign_;
};

// A file of `pages` written pages (zeros): blocks allocated, no holes.
inline bool MakeFile(const std::string& path, size_t pages) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::vector<char> zero(64 * kPg, 0);
  bool ok = true;
  for (size_t done = 0; done < pages && ok;) {
    const size_t n = std::min<size_t>(64, pages - done);
    ok = pwrite(fd, zero.data(), n * kPg, static_cast<off_t>(done * kPg)) ==
         static_cast<ssize_t>(n * kPg);
    done += n;
  }
  ok = ok && fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// Physical extents of a file (FIEMAP), merged when physically contiguous.
inline size_t CountExtents(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  constexpr unsigned kMax = 512;
  std::vector<char> buf(sizeof(fiemap) + kMax * sizeof(fiemap_extent));
  auto* fm = reinterpret_cast<fiemap*>(buf.data());
  fm->fm_start = 0;
  fm->fm_length = FIEMAP_MAX_OFFSET;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = kMax;
  size_t n = 0;
  if (ioctl(fd, FS_IOC_FIEMAP, fm) == 0) {
    uint64_t next_phys = UINT64_MAX, next_log = UINT64_MAX;
    for (unsigned i = 0; i < fm->fm_mapped_extents; ++i) {
      const fiemap_extent& e = fm->fm_extents[i];
      if (e.fe_physical != next_phys || e.fe_logical != next_log) ++n;
      next_phys = e.fe_physical + e.fe_length;
      next_log = e.fe_logical + e.fe_length;
    }
  }
  ::close(fd);
  return n;
}

// EXT4_IOC_MOVE_EXT (the ioctl e4defrag uses): not in the uapi headers.
struct MoveExtent {
  uint32_t reserved;
  uint32_t donor_fd;
  uint64_t orig_start, donor_start, len, moved_len;
};
inline constexpr unsigned long kExt4IocMoveExt = _IOWR('f', 15, MoveExtent);

// Makes `path` a file of `pages` written pages whose blocks are scattered:
// every 4th page gets a block of a neighbour file written elsewhere
// (EXT4_IOC_MOVE_EXT swaps the blocks, data included), so the file has
// about one extent per 2 pages. Returns 0, or the errno of the swap (e.g.
// ENOTTY / EOPNOTSUPP off ext4). Punching holes and letting another file
// grow into them is not reliable on ext4: its block goal depends on the
// PID, its preallocation and, mounted with "discard", on when discards end.
inline int MakeFragmentedFile(const std::string& path, const std::string& other, size_t pages) {
  if (!MakeFile(path, pages) || !MakeFile(other, pages)) return EIO;
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  const int fo = ::open(other.c_str(), O_RDWR | O_CLOEXEC);
  int err = fd < 0 || fo < 0 ? errno : 0;
  // Pages still in the cache (with journal buffers) make the swap EBUSY.
  if (err == 0) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    posix_fadvise(fo, 0, 0, POSIX_FADV_DONTNEED);
  }
  for (size_t p = 0; p < pages && err == 0; p += 4) {
    MoveExtent m{0, static_cast<uint32_t>(fo), p, p, 1, 0};
    for (int tries = 0; tries < 100; ++tries) {
      err = ioctl(fd, kExt4IocMoveExt, &m) == 0 ? 0 : errno;
      if (err != EBUSY) break;
      usleep(10 * 1000);
    }
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (fd >= 0) ::close(fd);
  if (fo >= 0) ::close(fo);
  return err;
}

// Requests covering pages [first, first + n) of `bufs` (page i of the target
// in bufs[i - first]), cut into runs of `run` pages; tag = index.
inline std::vector<IoRequest> Requests(bool write, uint64_t first, const Pages& bufs, size_t n,
                                       size_t run) {
  std::vector<IoRequest> out;
  for (size_t i = 0; i < n; i += run) {
    IoRequest r;
    r.write = write;
    r.page = first + i;
    r.tag = out.size();
    for (size_t j = i; j < std::min(n, i + run); ++j) r.bufs.push_back(bufs[j]);
    out.push_back(std::move(r));
  }
  return out;
}

// Tag → how many completions carried it.
inline std::map<uint64_t, int> TagCounts(const std::vector<IoCompletion>& done) {
  std::map<uint64_t, int> m;
  for (const IoCompletion& c : done) ++m[c.tag];
  return m;
}

}  // namespace swaplab::area::testing
