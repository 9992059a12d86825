// SPDX-License-Identifier: MIT
// A swap area on a regular file or a block device: inspecting it, opening it
// for use as swapon does, and its discard sink. Formatting is in
// format_area.cc.
#include "swaplab/area/swap_area.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "area/area_internal.h"
#include "swaplab/area/area_lock.h"

namespace swaplab::area {

using alloc::SwapExtent;
using internal::Errno;

namespace {

// Opens `path`, reads page 0 and maps it. The fd stays with the caller.
Result<AreaInfo> InspectFd(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) < 0) return Errno(errno, path + ": stat");
  AreaInfo info;
  info.path = path;
  if (S_ISBLK(st.st_mode)) {
    uint64_t size = 0;
    if (::ioctl(fd, BLKGETSIZE64, &size) < 0) return Errno(errno, path + ": BLKGETSIZE64");
    info.blkdev = true;
    info.size_bytes = size;
    info.bdev = st.st_rdev;
  } else if (S_ISREG(st.st_mode)) {
    info.size_bytes = static_cast<uint64_t>(st.st_size);
    info.bdev = st.st_dev;
  } else {
    return Status(-EINVAL,
                  fmt::format("{}: is {}; a swap area must be a regular file or a block device",
                              path, FileTypeName(st.st_mode)));
  }
  if (info.size_bytes < kPageSize)
    return Status(-EINVAL, fmt::format("{}: size: {} bytes, shorter than the {}-byte header page",
                                       path, info.size_bytes, kPageSize));
  // The queue limits of the device (io/limits.cc). Without a block device
  // behind the file (tmpfs, overlayfs) the kernel never sets SWP_SOLIDSTATE:
  // keep the defaults, rotational.
  if (auto l = ReadDeviceLimits(path); l.ok()) {
    info.limits = *l;
  } else {
    info.limits.rotational = true;
    info.limits.discard = false;
  }

  std::array<std::byte, kPageSize> page;
  if (Status s = internal::PreadAll(fd, page.data(), page.size(), 0, path + ": header page");
      !s.ok())
    return s;
  info.header = DecodeHeader(page);

  const uint64_t pages = info.size_bytes / kPageSize;
  if (info.blkdev) {
    info.extents.push_back(SwapExtent{0, pages, 0});  // slot s is block s
  } else {
    bool holes = false;
    auto ext = FileExtents(fd, info.size_bytes, &holes);
    if (!ext.ok()) return Status(ext.status().code(), path + ": " + ext.status().message());
    info.extents = std::move(ext).value();
  }
  info.extent_summary = internal::Summarize(info.extents, pages);
  return info;
}

}  // namespace

Result<AreaInfo> InspectArea(const std::string& path) {
  auto fd = internal::OpenAreaFd(path, O_RDONLY, nullptr);
  if (!fd.ok()) return fd.status();
  Result<AreaInfo> r = InspectFd(*fd, path);
  ::close(*fd);
  return r;
}

std::optional<uint64_t> ResumeOffset(const AreaInfo& info) {
  if (info.blkdev) return 0;
  for (const alloc::SwapExtent& e : info.extents)
    if (e.start_page == 0) return e.start_block;
  return std::nullopt;
}

Status ValidateArea(const AreaInfo& info) {
  if (Status s = ValidateForSwapon(info.header, info.size_bytes, !info.blkdev); !s.ok())
    return Status(s.code(), info.path + ": " + s.message());
  if (!info.blkdev && info.extent_summary.has_holes) {
    const uint64_t pages = info.size_bytes / kPageSize;
    if (info.extents.empty())
      return Status(-EINVAL, fmt::format("{}: extents: the file has no mapped blocks (sparse, "
                                         "or its filesystem has no FIEMAP); swapon refuses a "
                                         "file with holes",
                                         info.path));
    return Status(-EINVAL,
                  fmt::format("{}: extents: the file has a hole at page {} of {} (unallocated, "
                              "unwritten or otherwise unusable blocks); swapon refuses a file "
                              "with holes",
                              info.path, internal::FirstHole(info.extents, pages), pages));
  }
  return Status::Ok();
}

// The discard sink: slots → byte ranges of the file or device.
struct SwapArea::Sink final : alloc::DiscardSink {
  Sink(int fd_in, bool blkdev_in, uint64_t pages_in)
      : fd(fd_in), blkdev(blkdev_in), pages(pages_in) {}
  ~Sink() override { ::close(fd); }

  // Mirrors mm/swapfile.c: discard_swap_cluster() / discard_swap(); errors
  // are counted and otherwise ignored, as the kernel ignores them.
  void Discard(int /*type*/, uint64_t first, uint64_t nr) override {
    if (first == 0) {  // never the header page
      if (nr <= 1) return;
      first = 1;
      --nr;
    }
    if (first >= pages) return;
    nr = std::min(nr, pages - first);
    int rc;
    if (blkdev) {
      uint64_t range[2] = {first * kPageSize, nr * kPageSize};
      rc = ::ioctl(fd, BLKDISCARD, range);
    } else {
      rc = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                       static_cast<off_t>(first * kPageSize), static_cast<off_t>(nr * kPageSize));
    }
    if (rc < 0) {
      errors.fetch_add(1, std::memory_order_relaxed);
    } else {
      calls.fetch_add(1, std::memory_order_relaxed);
      discarded_pages.fetch_add(nr, std::memory_order_relaxed);
    }
  }

  int fd;
  bool blkdev;
  uint64_t pages;
  std::atomic<uint64_t> calls{0}, discarded_pages{0}, errors{0};
};

Result<std::unique_ptr<SwapArea>> SwapArea::Open(const std::string& path) {
  struct stat st {};
  if (Status s = CheckAreaPath(path, &st); !s.ok()) return s;
  // swapon claims a block device exclusively (as a mount would).
  auto fd = internal::OpenAreaFd(path, O_RDWR | (S_ISBLK(st.st_mode) ? O_EXCL : 0), nullptr);
  if (!fd.ok()) return fd.status();
  char* real = ::realpath(path.c_str(), nullptr);
  const std::string name = real != nullptr ? real : path;
  std::free(real);
  Result<AreaInfo> info = InspectFd(*fd, name);
  Status s = info.ok() ? ValidateArea(*info) : info.status();
  if (!s.ok()) {
    ::close(*fd);
    return s;
  }
  std::unique_ptr<SwapArea> a(new SwapArea());
  a->info_ = std::move(info).value();
  a->sink_ = std::make_unique<Sink>(*fd, a->info_.blkdev, AreaPages(a->info_));
  return a;
}

SwapArea::~SwapArea() = default;

namespace {

// The model's view of `info` as `pages` pages: everything but discard and prio.
alloc::SwaponOptions SwaponOptionsOf(const AreaInfo& info, uint64_t pages) {
  alloc::SwaponOptions o;
  o.name = info.path;
  o.pages = pages;
  for (uint32_t b : info.header.v1.bad_pages) o.bad_pages.push_back(b);
  o.ssd = !info.limits.rotational;
  o.blkdev = info.blkdev;
  o.discard_supported = info.limits.discard;
  o.bdev = info.bdev;
  for (const SwapExtent& e : info.extents) {  // only the area's pages
    if (e.start_page >= o.pages) continue;
    SwapExtent c = e;
    c.nr_pages = std::min(c.nr_pages, o.pages - c.start_page);
    o.extents.push_back(c);
  }
  o.first_block = o.extents.empty() ? 0 : o.extents.front().start_block;
  return o;
}

}  // namespace

alloc::SwaponOptions SwapArea::ToSwaponOptions(alloc::DiscardMode discard,
                                               std::optional<int> prio) {
  alloc::SwaponOptions o = SwaponOptionsOf(info_, sink_->pages);
  o.discard = discard;
  o.prio = prio;
  o.discard_sink = sink_.get();
  return o;
}

uint64_t AreaPages(const AreaInfo& info) {
  return std::min<uint64_t>(uint64_t{info.header.v1.last_page} + 1, info.size_bytes / kPageSize);
}

Result<alloc::SwaponOptions> ModelSwaponOptions(const AreaInfo& info) {
  if (Status s = ValidateForSwapon(info.header, info.size_bytes, !info.blkdev); !s.ok())
    return Status(s.code(), info.path + ": " + s.message());
  return SwaponOptionsOf(info, AreaPages(info));
}

alloc::DiscardSink& SwapArea::discard_sink() { return *sink_; }

}  // namespace swaplab::area
