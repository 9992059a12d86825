// SPDX-License-Identifier: MIT
// The page → disk block map of a swap file (FIEMAP) and small I/O helpers
// for the area sources.
#include <fcntl.h>
#include <fmt/core.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "area/area_internal.h"

namespace swaplab::area {

using alloc::SwapExtent;

namespace internal {

Status Errno(int err, const std::string& what) {
  return Status(-err, what + ": " + std::strerror(err));
}

Status PreadAll(int fd, void* buf, size_t n, uint64_t off, const std::string& what) {
  auto* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno(errno, fmt::format("{}: read at byte {}", what, off + done));
    if (r == 0)
      return Status(-EIO,
                    fmt::format("{}: read at byte {}: unexpected end of file", what, off + done));
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status PwriteAll(int fd, const void* buf, size_t n, uint64_t off, const std::string& what) {
  const auto* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pwrite(fd, p + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Errno(errno, fmt::format("{}: write at byte {}", what, off + done));
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

uint64_t FirstHole(const std::vector<SwapExtent>& extents, uint64_t pages) {
  std::vector<SwapExtent> e = extents;
  std::sort(e.begin(), e.end(),
            [](const SwapExtent& a, const SwapExtent& b) { return a.start_page < b.start_page; });
  uint64_t next = 0;
  for (const SwapExtent& x : e) {
    if (x.start_page > next) break;
    next = std::max(next, x.start_page + x.nr_pages);
  }
  return std::min(next, pages);
}

ExtentSummary Summarize(const std::vector<SwapExtent>& extents, uint64_t pages) {
  ExtentSummary s;
  s.extents = extents.size();
  for (const SwapExtent& e : extents) s.largest_pages = std::max(s.largest_pages, e.nr_pages);
  s.has_holes = FirstHole(extents, pages) < pages;
  return s;
}

}  // namespace internal

namespace {

// Extent flags that make a range unusable for swap: not yet on disk
// (delalloc, unknown), preallocated but unwritten, or not a plain run of
// whole blocks on the device (inline, tail-packed, encoded, unaligned),
// or shared with another file (reflink; the kernel refuses those too).
constexpr uint32_t kUnusableFlags = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                    FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_ENCODED |
                                    FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE |
                                    FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_SHARED;

struct ByteRange {
  uint64_t logical = 0, physical = 0, length = 0;
};

// Appends the whole 4 KiB pages of a usable byte range, merging with the
// previous extent when both the page and the block continue it.
void AddPages(const ByteRange& r, uint64_t size_bytes, std::vector<SwapExtent>* out) {
  if (r.physical % kPageSize != r.logical % kPageSize) return;  // pages straddle blocks
  const uint64_t first = (r.logical + kPageSize - 1) / kPageSize;
  const uint64_t end = std::min(r.logical + r.length, size_bytes) / kPageSize;
  if (end <= first) return;
  const SwapExtent e{first, end - first, (r.physical + first * kPageSize - r.logical) / kPageSize};
  if (!out->empty()) {
    SwapExtent& b = out->back();
    if (b.start_page + b.nr_pages == e.start_page && b.start_block + b.nr_pages == e.start_block) {
      b.nr_pages += e.nr_pages;
      return;
    }
  }
  out->push_back(e);
}

}  // namespace

// Mirrors the kernel's swap-file activation (iomap_swapfile_activate /
// generic_swapfile_activate): walk the file's blocks, keep whole pages
// whose blocks are mapped and written, merge contiguous runs.
Result<std::vector<SwapExtent>> FileExtents(int fd, uint64_t size_bytes, bool* has_holes) {
  constexpr uint32_t kBatch = 256;
  std::vector<uint64_t> storage((sizeof(fiemap) + kBatch * sizeof(fiemap_extent)) / 8 + 1);
  auto* fm = reinterpret_cast<fiemap*>(storage.data());
  std::vector<SwapExtent> out;
  ByteRange run;  // usable bytes not yet turned into pages
  uint64_t start = 0;
  bool last = false;
  while (!last && start < size_bytes) {
    std::memset(fm, 0, sizeof(fiemap));
    fm->fm_start = start;
    fm->fm_length = size_bytes - start;
    fm->fm_flags = FIEMAP_FLAG_SYNC;  // flush delayed allocation first
    fm->fm_extent_count = kBatch;
    if (::ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
      const int err = errno;
      if (err == EOPNOTSUPP || err == ENOTTY) {
        // No block map (tmpfs, some network filesystems): the kernel
        // reports such a file as having holes.
        if (has_holes != nullptr) *has_holes = size_bytes >= kPageSize;
        return std::vector<SwapExtent>{};
      }
      return internal::Errno(err, fmt::format("FIEMAP from byte {}", start));
    }
    if (fm->fm_mapped_extents == 0) break;
    for (uint32_t i = 0; i < fm->fm_mapped_extents; ++i) {
      const fiemap_extent& x = fm->fm_extents[i];
      last = last || (x.fe_flags & FIEMAP_EXTENT_LAST) != 0;
      start = x.fe_logical + x.fe_length;
      if ((x.fe_flags & kUnusableFlags) != 0) {
        AddPages(run, size_bytes, &out);
        run = ByteRange{};
        continue;
      }
      if (run.length != 0 && run.logical + run.length == x.fe_logical &&
          run.physical + run.length == x.fe_physical) {
        run.length += x.fe_length;  // sub-page blocks: join before cutting pages
      } else {
        AddPages(run, size_bytes, &out);
        run = ByteRange{x.fe_logical, x.fe_physical, x.fe_length};
      }
    }
  }
  AddPages(run, size_bytes, &out);
  if (has_holes != nullptr) *has_holes = internal::Summarize(out, size_bytes / kPageSize).has_holes;
  return out;
}

}  // namespace swaplab::area
