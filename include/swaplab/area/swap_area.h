// SPDX-License-Identifier: MIT
// A swap area on real storage: a regular file or a block device in the
// format mkswap writes. Creating, inspecting, and opening one for use (the
// checks swapon makes), with its page → disk block map.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_header.h"

namespace swaplab::area {

struct FormatOptions {
  std::optional<uint64_t> size_bytes;  // create / extend a file to this size
  std::string label;
  std::optional<std::array<uint8_t, 16>> uuid;  // random if absent
  std::vector<uint32_t> bad_pages;
  // Write over whatever the target holds (never a mounted or swapped-on
  // one); its boot area [0, 1024) is kept, as mkswap keeps it.
  bool force = false;
  // Called with an existing file's length just before it is extended to
  // size_bytes, and with nullopt once the zeros are written: the command
  // line registers the file to be truncated back if a signal comes in
  // between (workload::GrowingFile). A failed write truncates it back here.
  std::function<void(std::optional<uint64_t>)> growing;
};
// Writes a v1 header like util-linux mkswap. A file that does not exist is
// created with written zero blocks (never sparse, never preallocated);
// size must then be given and be a whole number of pages ≥ 10 pages.
// The target is locked (LockArea) until the header is on disk. An existing
// target is probed first (libblkid) and, unless o.force, refused with
// −EBUSY "PATH: holds WHAT; use --force to overwrite" when it holds any
// signature other than an unlabelled swap area (swaplab's own, or mkswap's
// without -L), or no signature but a non-zero byte in its first 64 KiB.
// Nothing is written before these checks pass. −EBUSY also for an area the
// kernel swaps on, a mounted device, or one another swaplab holds locked.
Status FormatArea(const std::string& path, const FormatOptions& o);

// A summary of the page → disk block map.
struct ExtentSummary {
  uint64_t extents = 0;
  uint64_t largest_pages = 0;
  bool has_holes = false;  // unwritten or unallocated ranges (files)
};

struct AreaInfo {
  std::string path;
  bool blkdev = false;
  uint64_t size_bytes = 0;
  uint64_t bdev = 0;  // dev_t of the block device holding it
  DeviceLimits limits{};
  DecodedHeader header;
  std::vector<alloc::SwapExtent> extents;  // slot → disk block (4 KiB)
  ExtentSummary extent_summary;
};
// Reads any swap area (ours or mkswap's), or any file: never refuses a
// header, reports what it found.
Result<AreaInfo> InspectArea(const std::string& path);
// The dblock of the area's page 0, the resume_offset= hibernation needs
// for it (../shared/spec/hibernation.md §2.5): 0 for a block device, the
// 4 KiB block of a file's first page from its extent map; none when that
// page is not mapped.
std::optional<uint64_t> ResumeOffset(const AreaInfo& info);
// The checks SwapArea::Open makes, on an inspected area: the header as
// swapon validates it (ValidateForSwapon) and, for files, no holes.
Status ValidateArea(const AreaInfo& info);

// The pages swapon uses of an inspected area: last_page + 1, within the
// file or device's size.
uint64_t AreaPages(const AreaInfo& info);
// SwaponOptions of the model for an inspected area, as SwapArea has them
// (AreaPages, the header's bad pages, SSD / block device, extents, bdev);
// no discard sink. The header must pass ValidateForSwapon (holes are not
// checked: a map may show such a file).
Result<alloc::SwaponOptions> ModelSwaponOptions(const AreaInfo& info);

// An area opened for use: validated as swapon validates it.
class SwapArea {
 public:
  // Errors: −EINVAL with a message naming the field and value (signature
  // found, version, last_page vs size, bad pages, holes, size not a whole
  // number of pages), −ENOENT / −EACCES from opening.
  static Result<std::unique_ptr<SwapArea>> Open(const std::string& path);
  ~SwapArea();

  const AreaInfo& info() const { return info_; }
  // SwaponOptions for SwapSystem::Swapon (pages, bad pages, SSD / block
  // device, extents, bdev); the DiscardSink is this area's.
  alloc::SwaponOptions ToSwaponOptions(alloc::DiscardMode discard = alloc::DiscardMode::kNone,
                                       std::optional<int> prio = {});
  // BLKDISCARD on block devices, FALLOC_FL_PUNCH_HOLE|KEEP_SIZE on files;
  // never the header page.
  alloc::DiscardSink& discard_sink();

 private:
  SwapArea() = default;
  AreaInfo info_;
  struct Sink;
  std::unique_ptr<Sink> sink_;
};

// FIEMAP of an open file: slot (4 KiB page of the file) → disk block.
Result<std::vector<alloc::SwapExtent>> FileExtents(int fd, uint64_t size_bytes, bool* has_holes);

}  // namespace swaplab::area
#pragma GCC visibility pop
