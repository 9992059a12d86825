// SPDX-License-Identifier: MIT
// Device limits from sysfs, as the block layer exposes them under
// /sys/block/<disk>/queue: the device of a block special file, or the
// filesystem's device for anything else (st_dev → /sys/dev/block/MAJ:MIN);
// a partition uses its disk's queue.
#include <fmt/core.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "swaplab/area/io_engine.h"

namespace swaplab::area {
namespace {

namespace fs = std::filesystem;

// Reads one unsigned decimal from a sysfs file. missing_ok: a missing file
// yields `fallback`.
Status ReadNumber(const fs::path& file, bool missing_ok, uint64_t fallback, uint64_t* out) {
  std::error_code ec;
  if (missing_ok && !fs::exists(file, ec)) {
    *out = fallback;
    return Status::Ok();
  }
  std::ifstream in(file);
  if (!in) {
    const int err = fs::exists(file, ec) ? EACCES : ENOENT;
    return Status(-err, fmt::format("{}: {}", file.string(), std::strerror(err)));
  }
  std::string text;
  std::getline(in, text);
  const auto end = text.find_last_not_of(" \t\r\n");
  text.erase(end == std::string::npos ? 0 : end + 1);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return Status(-EINVAL, fmt::format("{}: not an unsigned number: \"{}\"", file.string(), text));
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return Status(-EINVAL, fmt::format("{}: out of range: {}", file.string(), text));
  *out = v;
  return Status::Ok();
}

}  // namespace

uint32_t DeviceLimits::MaxPagesPerRequest() const {
  return std::max<uint32_t>(1, std::min(max_sectors_kb / 4, max_segments));
}

Result<DeviceLimits> ReadDeviceLimits(const std::string& path) {
  return ReadDeviceLimits(path, "/sys");
}

Result<DeviceLimits> ReadDeviceLimits(const std::string& path, const std::string& sysfs_root) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return Status(-errno, fmt::format("stat {}: {}", path, std::strerror(errno)));
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  const fs::path link =
      fs::path(sysfs_root) / "dev" / "block" / fmt::format("{}:{}", major(dev), minor(dev));
  std::error_code ec;
  const fs::path node = fs::canonical(link, ec);
  if (ec)
    return Status(-ENODEV, fmt::format("{}: no block device behind {} ({}: {})", path, path,
                                       link.string(), ec.message()));
  // A partition has a "partition" file; its queue is its disk's (the parent).
  const fs::path queue = (fs::exists(node / "partition", ec) ? node.parent_path() : node) / "queue";
  uint64_t segs = 0, kb = 0, lbs = 0, rot = 0, discard_max = 0;
  for (auto [name, out, missing_ok, fallback] :
       {std::tuple{"max_segments", &segs, false, uint64_t{0}},
        std::tuple{"max_sectors_kb", &kb, false, uint64_t{0}},
        std::tuple{"logical_block_size", &lbs, false, uint64_t{0}},
        std::tuple{"rotational", &rot, true, uint64_t{0}},
        std::tuple{"discard_max_bytes", &discard_max, true, uint64_t{0}}}) {
    if (Status s = ReadNumber(queue / name, missing_ok, fallback, out); !s.ok()) return s;
  }
  if (segs == 0 || segs > UINT32_MAX)
    return Status(-EINVAL, fmt::format("{}: max_segments {} out of range", queue.string(), segs));
  if (kb < 4 || kb > UINT32_MAX)
    return Status(-EINVAL, fmt::format("{}: max_sectors_kb {} is below one page or out of range",
                                       queue.string(), kb));
  if (lbs < 512 || lbs > 65536 || (lbs & (lbs - 1)) != 0)
    return Status(-EINVAL, fmt::format("{}: logical_block_size {} is not a power of two in [512, "
                                       "65536]",
                                       queue.string(), lbs));
  DeviceLimits l;
  l.max_segments = static_cast<uint32_t>(segs);
  l.max_sectors_kb = static_cast<uint32_t>(kb);
  l.logical_block_size = static_cast<uint32_t>(lbs);
  l.rotational = rot != 0;
  l.discard = discard_max != 0;
  return l;
}

}  // namespace swaplab::area
