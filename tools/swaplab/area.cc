// `swaplab area format|inspect`: mkswap-compatible swap areas on files and
// block devices (issue 3; hibernation spec §1).
#include "area.h"

#include <fmt/core.h>
#include <sys/sysmacros.h>

#include <cctype>
#include <optional>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "swaplab/alloc/printable.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/area/swap_header.h"
#include "size_arg.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::tools {

using area::AreaInfo;
using area::kPageSize;

int AreaExitCode(const Status& s) {
  switch (-s.code()) {
    case EINVAL:        // a bad option value, or a path of the wrong type
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
    default:            // EBUSY (locked, swapped on, mounted, a signature), EIO, ...
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

// "5,9,100-103" → {5, 9, 100, 101, 102, 103}.
Result<std::vector<uint32_t>> ParseBadList(const std::string& s) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(pos, end - pos);
    const size_t dash = item.find('-');
    auto num = [&](const std::string& t) -> Result<uint32_t> {
      if (t.empty() || t.size() > 10 || t.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(t) > UINT32_MAX)
        return Status(-EINVAL, "--bad: \"" + item + "\" is not a page number or a range A-B");
      return static_cast<uint32_t>(std::stoull(t));
    };
    auto a = num(item.substr(0, dash));
    if (!a.ok()) return a.status();
    uint32_t b = *a;
    if (dash != std::string::npos) {
      auto r = num(item.substr(dash + 1));
      if (!r.ok()) return r.status();
      b = *r;
      if (b < *a || b - *a >= area::kMaxSwapBadpages)
        return Status(-EINVAL, "--bad: range \"" + item + "\" is empty or too long");
    }
    for (uint64_t p = *a; p <= b; ++p) out.push_back(static_cast<uint32_t>(p));
    pos = end + 1;
  }
  return out;
}

std::string Printable(const std::array<char, 10>& m) { return swaplab::Printable(std::string_view(m.data(), m.size())); }

std::string DevName(uint64_t d) { return fmt::format("{}:{}", major(d), minor(d)); }

// The inspect report as ordered (field, value) rows, shared by text and CSV.
// The image's swsusp_info and map chain, when page 0 says there is one
// (read-only; an unreadable image is reported, not an error of inspect).
using ImageFacts = std::optional<Result<hibernate::ImageInspection>>;
ImageFacts InspectImageOf(const AreaInfo& a) {
  if (!a.header.hibernation) return std::nullopt;
  area::EngineOptions eo;
  eo.limits = a.limits;
  eo.writable = false;
  auto engine = area::OpenPosixEngine(a.path, eo);
  if (!engine.ok()) return Result<hibernate::ImageInspection>(engine.status());
  return hibernate::InspectImage(**engine, 0, a.size_bytes / kPageSize);
}

std::vector<std::pair<std::string, std::string>> Rows(const AreaInfo& a, const Status& verdict,
                                                      uint64_t max_extents, const ImageFacts& img) {
  const auto& h = a.header;
  std::vector<std::pair<std::string, std::string>> r;
  r.emplace_back("path", swaplab::Printable(a.path, 4096));
  r.emplace_back("type", a.blkdev ? "block device" : "regular file");
  r.emplace_back("bdev", DevName(a.bdev));
  r.emplace_back("rotational", a.limits.rotational ? "yes" : "no");
  r.emplace_back("discard", a.limits.discard ? "yes" : "no");
  r.emplace_back(
      "size",
      fmt::format(
          "{} bytes ({} pages{})", a.size_bytes, a.size_bytes / kPageSize,
          a.size_bytes % kPageSize ? fmt::format(" + {} bytes", a.size_bytes % kPageSize) : ""));
  r.emplace_back("signature",
                 fmt::format("{} (\"{}\")", area::Name(h.signature), Printable(h.magic)));
  r.emplace_back("byte_order",
                 h.byte_swapped ? "swapped (written on the other endianness)" : "native");
  r.emplace_back("version", std::to_string(h.v1.version));
  r.emplace_back("last_page", fmt::format("{} ({} pages, header included)", h.v1.last_page,
                                          uint64_t{h.v1.last_page} + 1));
  r.emplace_back("nr_badpages", std::to_string(h.nr_badpages));
  std::string bad;
  for (uint32_t b : h.v1.bad_pages) bad += (bad.empty() ? "" : ",") + std::to_string(b);
  r.emplace_back("badpages", bad.empty() ? "-" : bad);
  r.emplace_back("uuid", area::UuidToString(h.v1.uuid));
  r.emplace_back("label", h.v1.label.empty() ? "-" : swaplab::Printable(h.v1.label));
  r.emplace_back("extents", fmt::format("{} (largest {} pages), holes: {}",
                                        a.extent_summary.extents, a.extent_summary.largest_pages,
                                        a.extent_summary.has_holes ? "yes" : "no"));
  for (uint64_t i = 0; i < a.extents.size() && i < max_extents; ++i) {
    const auto& e = a.extents[i];
    r.emplace_back(
        fmt::format("extent[{}]", i),
        fmt::format("pages {}..{} -> blocks {}..{}", e.start_page, e.start_page + e.nr_pages - 1,
                    e.start_block, e.start_block + e.nr_pages - 1));
  }
  if (a.extents.size() > max_extents)
    r.emplace_back("extent[...]", fmt::format("{} more", a.extents.size() - max_extents));
  if (h.hibernation) {
    const auto& s = *h.hibernation;
    r.emplace_back("hibernation", "image present (S1SUSPEND)");
    r.emplace_back("swsusp.image", fmt::format("{} (dblock of the first map page)", s.image));
    r.emplace_back("swsusp.flags", fmt::format("0x{:x} ({})", s.flags, area::SwsuspFlagNames(s.flags)));
    r.emplace_back("swsusp.crc32", fmt::format("0x{:08x}", s.crc32));
    r.emplace_back("swsusp.hw_sig", fmt::format("0x{:08x}", s.hw_sig));
    r.emplace_back("swsusp.orig_sig", Printable(s.orig_sig));
    if (img && img->ok()) {
      const auto& i = (*img)->info;
      r.emplace_back("swsusp_info", fmt::format("{} image, {}", hibernate::Name(i.origin), hibernate::Name((*img)->compress)));
      r.emplace_back("swsusp_info.pages", fmt::format("{} (image_pages {} + meta pages {} + 1)", i.pages,
                                                      i.image_pages, i.meta_pages()));
      r.emplace_back("swsusp_info.num_physpages", std::to_string(i.num_physpages));
      r.emplace_back("image.stream_pages", fmt::format("{} in {} map pages, {} runs on disk", (*img)->chain.entries.size(),
                                                       (*img)->chain.map_dblocks.size(), (*img)->layout.runs_disk_order));
    } else if (img) {
      r.emplace_back("image", "unreadable: " + swaplab::Printable(img->status().message(), 4096));
    }
  } else {
    r.emplace_back("hibernation", "no image");
  }
  r.emplace_back("swapon", verdict.ok() ? "accepted" : "refused: " + swaplab::Printable(verdict.message(), 1024));
  return r;
}

nlohmann::json Json(const AreaInfo& a, const Status& verdict, const ImageFacts& img) {
  const auto& h = a.header;
  nlohmann::json j;
  j["path"] = a.path;
  j["blkdev"] = a.blkdev;
  j["bdev"] = DevName(a.bdev);
  j["rotational"] = a.limits.rotational;
  j["discard"] = a.limits.discard;
  j["size_bytes"] = a.size_bytes;
  j["size_pages"] = a.size_bytes / kPageSize;
  j["signature"] = area::Name(h.signature);
  j["magic"] = Printable(h.magic);
  j["byte_swapped"] = h.byte_swapped;
  j["version"] = h.v1.version;
  j["last_page"] = h.v1.last_page;
  j["nr_badpages"] = h.nr_badpages;
  j["badpages"] = h.v1.bad_pages;
  j["uuid"] = area::UuidToString(h.v1.uuid);
  j["label"] = h.v1.label;
  j["extent_summary"] = {{"extents", a.extent_summary.extents},
                         {"largest_pages", a.extent_summary.largest_pages},
                         {"has_holes", a.extent_summary.has_holes}};
  nlohmann::json ext = nlohmann::json::array();
  for (const auto& e : a.extents)
    ext.push_back(
        {{"start_page", e.start_page}, {"nr_pages", e.nr_pages}, {"start_block", e.start_block}});
  j["extents"] = ext;
  if (h.hibernation) {
    const auto& s = *h.hibernation;
    j["hibernation"] = {
        {"image", s.image}, {"flags", s.flags},   {"flag_names", area::SwsuspFlagNames(s.flags)},
        {"crc32", s.crc32}, {"hw_sig", s.hw_sig}, {"orig_sig", Printable(s.orig_sig)}};
    if (img && img->ok()) {
      const auto& i = (*img)->info;
      j["hibernation"]["swsusp_info"] = {{"origin", hibernate::Name(i.origin)},
                                         {"num_physpages", i.num_physpages},
                                         {"image_pages", i.image_pages},
                                         {"meta_pages", i.meta_pages()},
                                         {"pages", i.pages},
                                         {"size", i.size}};
      j["hibernation"]["compress"] = hibernate::Name((*img)->compress);
      j["hibernation"]["stream_pages"] = (*img)->chain.entries.size();
      j["hibernation"]["map_pages"] = (*img)->chain.map_dblocks.size();
      j["hibernation"]["runs_disk_order"] = (*img)->layout.runs_disk_order;
    } else if (img) {
      j["hibernation"]["unreadable"] = img->status().message();
    }
  } else {
    j["hibernation"] = nullptr;
  }
  j["swapon"] = {{"accepted", verdict.ok()}, {"message", verdict.ok() ? "" : verdict.message()}};
  return j;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Prints the report; returns the swapon verdict.
Status Report(const AreaInfo& a, const AreaOptions& o) {
  Status verdict = area::ValidateArea(a);
  const ImageFacts img = InspectImageOf(a);
  if (o.json) {
    fmt::print("{}\n",
               Json(a, verdict, img).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else if (o.csv) {
    fmt::print("field,value\n");
    for (const auto& [k, v] : Rows(a, verdict, UINT64_MAX, img))
      fmt::print("{},{}\n", CsvField(k), CsvField(v));
  } else {
    for (const auto& [k, v] : Rows(a, verdict, o.max_extents, img)) fmt::print("{:<16} {}\n", k, v);
  }
  return verdict;
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
    auto b = ParseBadList(o.bad);
    if (!b.ok()) return Fail(b.status());
    f.bad_pages = *b;
  }
  if (Status s = area::FormatArea(o.path, f); !s.ok()) return Fail(s);
  auto info = area::InspectArea(o.path);
  if (!info.ok()) return Fail(info.status());
  if (o.json || o.csv) {
    (void)Report(*info, o);  // format succeeded; a swapon refusal is in the report
    return 0;
  }
  const auto& h = info->header.v1;
  const uint64_t usable = h.last_page - h.bad_pages.size();
  fmt::print("Set up swap space version 1 on {}: {} pages ({} KiB usable), LABEL={}, UUID={}\n",
             swaplab::Printable(o.path), uint64_t{h.last_page} + 1, usable * (kPageSize / 1024),
             h.label.empty() ? "(none)" : swaplab::Printable(h.label), area::UuidToString(h.uuid));
  if (Status v = area::ValidateArea(*info); !v.ok())
    fmt::print("warning: swapon would refuse it: {}\n", swaplab::Printable(v.message(), 1024));
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
  auto info = area::InspectArea(o.path);
  if (!info.ok()) return Fail(info.status());
  // The report is printed either way; an area swapon would refuse exits 1.
  return Report(*info, o).ok() ? 0 : kExitFailed;
}

}  // namespace swaplab::tools
