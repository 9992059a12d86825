// SPDX-License-Identifier: MIT
// `swaplab area format|inspect`: mkswap-compatible swap areas on files and
// block devices (hibernation spec §1).
#include "area.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "size_arg.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/bad_pages.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/area/swap_header.h"
#include "swaplab/hibernate/area_image.h"
#include "swaplab/report/area_report.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::tools {

int AreaExitCode(const Status& s) {
  switch (-s.code()) {
    case EINVAL:  // a bad option value, or a path of the wrong type
    case ENOENT:
    case EEXIST:
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
    case EACCES:
    case EPERM:
    case ELOOP:
    case ENXIO:
    case EROFS:
      return 2;
    default:  // EBUSY (locked, swapped on, mounted, a signature), EIO, ...
      return 1;
  }
}

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

int Fail(const Status& s) {
  fmt::print(stderr, "swaplab area: {}\n", swaplab::Printable(s.ToString(), 1024));
  return AreaExitCode(s);
}

// Prints the report; returns the swapon verdict.
Status Report(const hibernate::AreaWithImage& a, const AreaOptions& o) {
  if (o.json) {
    fmt::print("{}", report::AreaJson(a));
  } else {
    fmt::print("{}", o.csv ? report::AreaCsv(a) : report::AreaText(a, o.max_extents));
  }
  return a.swapon;
}

// A file this command creates is removed if INT, TERM, HUP or QUIT comes
// while its zeros are written (FormatArea removes it on its own errors); an
// existing file it extends is truncated back to its old length.
Status FormatCleanedUpOnSignal(const std::string& path, area::FormatOptions f) {
  workload::InstallTempFileCleanup();
  std::optional<workload::GrowingFile> grown;
  f.growing = [&](std::optional<uint64_t> old_length) {
    if (old_length)
      grown.emplace(path, *old_length);
    else
      grown.reset();
  };
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return area::FormatArea(path, f);
  workload::TempFile partial(path);
  Status s = area::FormatArea(path, f);
  partial.keep();
  return s;
}

int RunFormat(const AreaOptions& o) {
  area::FormatOptions f;
  f.label = o.label;
  f.force = o.force;
  if (!o.size.empty()) {
    auto s = ParseSize(o.size, "--size");
    if (!s.ok()) return Fail(s.status());
    f.size_bytes = *s;
  }
  if (!o.uuid.empty()) {
    auto u = area::ParseUuid(o.uuid);
    if (!u.ok()) return Fail(u.status());
    f.uuid = *u;
  }
  if (!o.bad.empty()) {
    auto b = area::ParseBadPageList(o.bad);
    if (!b.ok()) return Fail(b.status());
    f.bad_pages = *b;
  }
  if (Status s = FormatCleanedUpOnSignal(o.path, f); !s.ok()) return Fail(s);
  auto info = hibernate::InspectAreaWithImage(o.path);
  if (!info.ok()) return Fail(info.status());
  if (o.json || o.csv) {
    (void)Report(*info, o);  // format succeeded; a swapon refusal is in the report
    return 0;
  }
  fmt::print("{}", report::AreaFormatText(*info));
  return 0;
}

}  // namespace

AreaCommands AddArea(CLI::App& app, AreaOptions& o) {
  AreaCommands c;
  c.area = app.add_subcommand("area", "mkswap-compatible swap areas on files and block devices");
  c.area->require_subcommand(1);
  c.format = c.area->add_subcommand("format",
                                    "write a v1 swap header (as mkswap does); create "
                                    "the file with written blocks if it does not exist");
  c.format->add_option("path", o.path, "swap file or block device")->required();
  c.format->add_option("--size", o.size,
                       "area size in bytes (K, M, G, T suffixes); required to create a file");
  c.format->add_option("--label,-L", o.label, "volume label, at most 16 bytes");
  c.format->add_option("--uuid,-U", o.uuid, "UUID (random if absent)");
  c.format->add_option("--bad", o.bad, "bad pages, e.g. 5,9,100-103 (block devices only)");
  c.format->add_flag("--force", o.force,
                     "write over what the target holds. Without it an existing target is "
                     "probed (libblkid) and refused (exit 1) when it holds a filesystem, a "
                     "partition table, a RAID / LVM member, a hibernation image, a swap area "
                     "with a label, or no signature but non-zero bytes in its first 64 KiB; an "
                     "all-zero file or an unlabelled swap area is formatted. Never a mounted "
                     "or swapped-on target, even with --force; the boot area (bytes 0..1023) "
                     "is kept");
  c.format->add_flag("--json", o.json, "report the new area as one JSON document");
  c.format->add_flag("--csv", o.csv, "report the new area as field,value CSV");
  c.inspect = c.area->add_subcommand("inspect",
                                     "print every header field, the extent map and any "
                                     "hibernation image of a swap area (or any file)");
  c.inspect->add_option("path", o.path, "swap file or block device")->required();
  c.inspect->add_flag("--json", o.json, "one JSON document on stdout");
  c.inspect->add_flag("--csv", o.csv, "field,value CSV");
  c.inspect->add_option("--max-extents", o.max_extents, "extents listed in the text output");
  return c;
}

int RunArea(const AreaCommands& c, const AreaOptions& o) {
  if (o.json && o.csv) {
    fmt::print(stderr, "swaplab area: --json and --csv exclude each other\n");
    return kExitBadInput;
  }
  if (c.format->parsed()) return RunFormat(o);
  auto info = hibernate::InspectAreaWithImage(o.path);
  if (!info.ok()) return Fail(info.status());
  // The report is printed either way; an area swapon would refuse exits 1.
  return Report(*info, o).ok() ? 0 : kExitFailed;
}

}  // namespace swaplab::tools
