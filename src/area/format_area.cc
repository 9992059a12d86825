// SPDX-License-Identifier: MIT
// `swaplab area format`: writes a v1 swap header the way util-linux mkswap
// does (hibernation spec §1.2), creating the file with written zero blocks
// when it does not exist.
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "area/area_internal.h"
#include "swaplab/area/area_lock.h"
#include "swaplab/area/swap_area.h"

namespace swaplab::area {

using internal::Errno;

namespace {

constexpr uint64_t kMaxAreaPages = uint64_t{1} << 32;  // last_page is 32 bits

Status Invalid(std::string msg) { return Status(-EINVAL, std::move(msg)); }

// A random (version 4) UUID, as libuuid generates it for mkswap.
std::array<uint8_t, 16> RandomUuid() {
  std::random_device rd;
  std::array<uint8_t, 16> u{};
  for (size_t i = 0; i < u.size(); i += 4) {
    const uint32_t r = rd();
    std::memcpy(&u[i], &r, 4);
  }
  u[6] = static_cast<uint8_t>((u[6] & 0x0f) | 0x40);
  u[8] = static_cast<uint8_t>((u[8] & 0x3f) | 0x80);
  return u;
}

// Writes zeros to [from, to) of `fd`, 1 MiB at a time: real blocks, so the
// file has no holes and no unwritten (preallocated) extents.
Status WriteZeros(int fd, uint64_t from, uint64_t to, const std::string& path) {
  std::vector<char> zeros(uint64_t{1} << 20, 0);
  for (uint64_t off = from; off < to;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), to - off));
    if (Status s = internal::PwriteAll(fd, zeros.data(), n, off, path); !s.ok()) return s;
    off += n;
  }
  return Status::Ok();
}

// The zeros about to be written must fit: statvfs's blocks available to
// this user, checked before the first byte (else ENOSPC after minutes of
// writing, the filesystem full for everyone).
Status CheckFreeSpace(int fd, uint64_t need, const std::string& path) {
  struct statvfs v {};
  if (::fstatvfs(fd, &v) < 0) return Errno(errno, path + ": statvfs");
  const uint64_t avail = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  if (need <= avail) return Status::Ok();
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  return Status(-ENOSPC,
                fmt::format("{}: size: {} bytes ({:.2f} GiB) to write, the filesystem has {} bytes "
                            "({:.2f} GiB) free; nothing written",
                            path, need, static_cast<double>(need) / kGiB, avail,
                            static_cast<double>(avail) / kGiB));
}

// mkswap leaves the boot area [0, 1024) alone when it holds a partition
// table (an MBR boot signature, or a GPT header in sector 1).
bool HasPartitionTable(const std::array<std::byte, kPageSize>& p) {
  const bool mbr = p[510] == std::byte{0x55} && p[511] == std::byte{0xaa};
  const bool gpt = std::memcmp(p.data() + 512, "EFI PART", 8) == 0;
  return mbr || gpt;
}

// The target, opened for writing, with its size after any extension.
struct Target {
  int fd = -1;
  bool created = false;
  bool blkdev = false;
  uint64_t area_bytes = 0;  // what the header describes
  uint64_t old_bytes = 0;   // the existing file's or device's size
  AreaLock lock;            // released after ~Target closed fd
  ~Target() {
    if (fd >= 0) ::close(fd);
  }
};

Status OpenTarget(const std::string& path, const FormatOptions& o, Target* t) {
  struct stat st {};
  if (::stat(path.c_str(), &st) < 0) {
    if (errno != ENOENT) return Errno(errno, path);
    if (!o.size_bytes) return Invalid(path + ": does not exist; give --size to create it");
    if (*o.size_bytes % kPageSize != 0)
      return Invalid(fmt::format("{}: size: {} bytes is not a whole number of {}-byte pages", path,
                                 *o.size_bytes, kPageSize));
    // 0600: swapon warns about swap files others can read.
    t->fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (t->fd < 0) return Errno(errno, path + ": create");
    t->created = true;
    t->area_bytes = *o.size_bytes;
    auto lock = LockFd(t->fd, path);
    if (!lock.ok()) return lock.status();
    t->lock = std::move(lock).value();
    return Status::Ok();
  }
  // The type (never opening a FIFO or a character device), the running
  // kernel's use (swapped on, mounted: refused even with --force), and the
  // lock every writer takes, held until the header is on disk.
  auto lock = LockArea(path);
  if (!lock.ok()) return lock.status();
  t->lock = std::move(lock).value();
  if (S_ISBLK(st.st_mode)) {
    // Exclusive, as mkswap opens it: fails while mounted or swapped on.
    auto fd = internal::OpenAreaFd(path, O_RDWR | O_EXCL, &st);
    if (!fd.ok()) return fd.status();
    t->fd = *fd;
    t->blkdev = true;
    uint64_t dev_bytes = 0;
    if (::ioctl(t->fd, BLKGETSIZE64, &dev_bytes) < 0) return Errno(errno, path + ": BLKGETSIZE64");
    if (o.size_bytes && *o.size_bytes > dev_bytes)
      return Invalid(fmt::format("{}: size: {} bytes is larger than the device ({} bytes)", path,
                                 *o.size_bytes, dev_bytes));
    t->area_bytes = o.size_bytes.value_or(dev_bytes);
    t->old_bytes = dev_bytes;
    return Status::Ok();
  }
  auto fd = internal::OpenAreaFd(path, O_RDWR, &st);
  if (!fd.ok()) return fd.status();
  t->fd = *fd;
  const auto file_bytes = static_cast<uint64_t>(st.st_size);
  const uint64_t final_bytes = std::max(file_bytes, o.size_bytes.value_or(0));
  if (final_bytes % kPageSize != 0)
    return Invalid(
        fmt::format("{}: size: the file would be {} bytes, not a whole number of "
                    "{}-byte pages",
                    path, final_bytes, kPageSize));
  t->area_bytes = o.size_bytes.value_or(file_bytes);
  t->old_bytes = file_bytes;
  return Status::Ok();
}

// Refuses to write over what libblkid recognises (or over data it does not)
// unless forced: the rule is internal::ReformatWithoutForce.
Status CheckExisting(const std::string& path, const FormatOptions& o, const Target& t) {
  auto c = internal::ProbeExisting(t.fd, t.old_bytes, path);
  if (!c.ok()) return c.status();
  if (o.force || internal::ReformatWithoutForce(*c)) return Status::Ok();
  return Status(
      -EBUSY, fmt::format("{}: holds {}; use --force to overwrite", path, internal::Describe(*c)));
}

// What does not need the target: the label, the bad-page count and any
// size given (mkswap's 10-page floor and 2^32-page cap, §1.2 step 1).
Status CheckOptions(const FormatOptions& o) {
  if (o.label.size() > kMaxLabelBytes)
    return Invalid(
        fmt::format("label: \"{}\" is {} bytes, at most {} fit (mkswap keeps a "
                    "terminating NUL in the 16-byte field)",
                    o.label, o.label.size(), kMaxLabelBytes));
  if (o.bad_pages.size() > kMaxSwapBadpages)
    return Invalid(
        fmt::format("bad pages: {} listed, at most {}", o.bad_pages.size(), kMaxSwapBadpages));
  if (o.size_bytes && *o.size_bytes / kPageSize < kMinAreaPages)
    return Invalid(
        fmt::format("size: {} bytes is fewer than {} pages", *o.size_bytes, kMinAreaPages));
  if (o.size_bytes && *o.size_bytes / kPageSize > kMaxAreaPages)
    return Invalid(fmt::format(
        "size: {} bytes is {} pages, more than the format's limit of 2^32 pages ({} bytes, "
        "16 TiB): last_page is 32 bits",
        *o.size_bytes, *o.size_bytes / kPageSize, kMaxAreaPages * kPageSize));
  return Status::Ok();
}

// The area's `pages` against the target: at least mkswap's 10, and bad
// pages only on a block device, each within [1, last_page] and listed once.
Status CheckPages(const std::string& path, const FormatOptions& o, const Target& t,
                  uint64_t pages) {
  if (pages < kMinAreaPages)
    return Invalid(fmt::format("{}: size: {} bytes is {} pages, fewer than {}", path, t.area_bytes,
                               pages, kMinAreaPages));
  if (!t.blkdev && !o.bad_pages.empty())
    return Invalid(
        fmt::format("{}: bad pages: {} listed, but a swap file may not have bad "
                    "pages (swapon refuses it)",
                    path, o.bad_pages.size()));
  std::set<uint32_t> seen;
  for (uint32_t b : o.bad_pages) {
    if (b == 0 || b >= pages)
      return Invalid(
          fmt::format("{}: bad page {} is outside [1, last_page = {}]", path, b, pages - 1));
    if (!seen.insert(b).second)
      return Invalid(fmt::format("{}: bad page {} is listed twice", path, b));
  }
  return Status::Ok();
}

// The header page of an area of `pages` pages (§1.2 step 4).
std::array<std::byte, kPageSize> HeaderPage(const FormatOptions& o, uint64_t pages) {
  SwapHeaderV1 h;
  h.version = 1;
  h.last_page = static_cast<uint32_t>(pages - 1);
  h.bad_pages = o.bad_pages;
  h.uuid = o.uuid.value_or(RandomUuid());
  h.label = o.label;
  return EncodeHeader(h);
}

// An existing file grown to --size with written zeros.
Status GrowFile(const std::string& path, const FormatOptions& o, const Target& t,
                uint64_t old_size) {
  if (t.blkdev || !o.size_bytes || *o.size_bytes <= old_size) return Status::Ok();
  if (o.growing) o.growing(old_size);
  Status s = WriteZeros(t.fd, old_size, *o.size_bytes, path);
  // the file back to what it was: its data is untouched until the header page
  if (!s.ok() && ::ftruncate(t.fd, static_cast<off_t>(old_size)) < 0)
    s = Status(s.code(), fmt::format("{}; truncating it back to {} bytes failed too: {}",
                                     s.message(), old_size, std::strerror(errno)));
  if (o.growing) o.growing(std::nullopt);
  return s;
}

// An existing target made ready for the header: grown if asked, and its
// boot area [0, 1024) copied into `page` when forced over something else
// or when it holds a partition table, as mkswap keeps it (§1.2 steps 3, 5).
Status PrepareExisting(const std::string& path, const FormatOptions& o, const Target& t,
                       std::array<std::byte, kPageSize>& page) {
  struct stat st {};
  if (::fstat(t.fd, &st) < 0) return Errno(errno, path + ": stat");
  if (Status s = GrowFile(path, o, t, static_cast<uint64_t>(st.st_size)); !s.ok()) return s;
  std::array<std::byte, kPageSize> old{};
  if (Status s = internal::PreadAll(t.fd, old.data(), old.size(), 0, path); !s.ok()) return s;
  // Forced over something else, keep its boot area as mkswap does.
  if (o.force || HasPartitionTable(old)) std::copy(old.begin(), old.begin() + 1024, page.begin());
  return Status::Ok();
}

}  // namespace

// Mirrors util-linux disk-utils/mkswap.c as described in hibernation spec
// §1.2 (own code; nothing of mkswap is copied).
Status FormatArea(const std::string& path, const FormatOptions& o) {
  // Validate what does not need the target first.
  if (Status s = CheckOptions(o); !s.ok()) return s;
  Target t;
  if (Status s = OpenTarget(path, o, &t); !s.ok()) return s;
  if (!t.created)
    if (Status s = CheckExisting(path, o, t); !s.ok()) return s;
  auto fail = [&](Status s) {  // a file created here is removed again
    if (t.created) ::unlink(path.c_str());
    return s;
  };
  if (!t.blkdev && t.area_bytes > t.old_bytes)
    if (Status s = CheckFreeSpace(t.fd, t.area_bytes - t.old_bytes, path); !s.ok()) return fail(s);
  const uint64_t pages = std::min(t.area_bytes / kPageSize, kMaxAreaPages);
  if (Status s = CheckPages(path, o, t, pages); !s.ok()) return fail(s);
  std::array<std::byte, kPageSize> page = HeaderPage(o, pages);
  if (t.created) {
    if (Status s = WriteZeros(t.fd, kPageSize, t.area_bytes, path); !s.ok()) return fail(s);
  } else if (Status s = PrepareExisting(path, o, t, page); !s.ok()) {
    return s;
  }
  if (Status s = internal::PwriteAll(t.fd, page.data(), page.size(), 0, path + ": header page");
      !s.ok())
    return fail(s);
  if (::fsync(t.fd) < 0) return fail(Errno(errno, path + ": fsync"));
  return Status::Ok();
}

}  // namespace swaplab::area
