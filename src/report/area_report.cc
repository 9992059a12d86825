// SPDX-License-Identifier: MIT
// `swaplab area format|inspect`'s result (area_report.h).
#include "swaplab/report/area_report.h"

#include <fmt/core.h>
#include <sys/sysmacros.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "swaplab/alloc/printable.h"
#include "swaplab/area/swap_header.h"
#include "swaplab/hibernate/image_format.h"

namespace swaplab::report {

using area::AreaInfo;
using area::kPageSize;

namespace {

std::string Printable(const std::array<char, 10>& m) {
  return swaplab::Printable(std::string_view(m.data(), m.size()));
}

std::string DevName(uint64_t d) { return fmt::format("{}:{}", major(d), minor(d)); }

// The inspect report as ordered (field, value) rows, shared by text and CSV.
using FieldRows = std::vector<std::pair<std::string, std::string>>;

// Where the area is and what the block layer says of it.
void DeviceRows(const AreaInfo& a, FieldRows& r) {
  r.emplace_back("path", swaplab::Printable(a.path, kPathMax));
  r.emplace_back("type", a.blkdev ? "block device" : "regular file");
  r.emplace_back("bdev", DevName(a.bdev));
  r.emplace_back("rotational", a.limits.rotational ? "yes" : "no");
  r.emplace_back("discard", a.limits.discard ? "yes" : "no");
  r.emplace_back(
      "size",
      fmt::format(
          "{} bytes ({} pages{})", a.size_bytes, a.size_bytes / kPageSize,
          a.size_bytes % kPageSize ? fmt::format(" + {} bytes", a.size_bytes % kPageSize) : ""));
}

// The swap header's fields.
void HeaderRows(const area::DecodedHeader& h, FieldRows& r) {
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
}

// The page-to-block map (the first max_extents extents) and resume_offset.
void ExtentRows(const AreaInfo& a, uint64_t max_extents, FieldRows& r) {
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
  const auto resume_offset = area::ResumeOffset(a);
  r.emplace_back("resume_offset",
                 !resume_offset ? std::string("- (the file's page 0 is not mapped)")
                 : a.blkdev     ? std::string("0 (a block device)")
                                : fmt::format("{} (the block of the file's page 0: resume_offset= "
                                                  "for hibernating to it)",
                                              *resume_offset));
}

// The swsusp header, and the image it points at when one was read.
void HibernationRows(const hibernate::AreaWithImage& ai, FieldRows& r) {
  const auto& h = ai.area.header;
  const auto& img = ai.image;
  if (!h.hibernation) {
    r.emplace_back("hibernation", "no image");
    return;
  }
  const auto& s = *h.hibernation;
  r.emplace_back("hibernation", "image present (S1SUSPEND)");
  r.emplace_back("swsusp.image", fmt::format("{} (dblock of the first map page)", s.image));
  r.emplace_back("swsusp.flags",
                 fmt::format("0x{:x} ({})", s.flags, area::SwsuspFlagNames(s.flags)));
  r.emplace_back("swsusp.crc32", fmt::format("0x{:08x}", s.crc32));
  r.emplace_back("swsusp.hw_sig", fmt::format("0x{:08x}", s.hw_sig));
  r.emplace_back("swsusp.orig_sig", Printable(s.orig_sig));
  if (img && img->ok()) {
    const auto& i = (*img)->info;
    r.emplace_back("swsusp_info", fmt::format("{} image, {}", hibernate::Name(i.origin),
                                              hibernate::Name((*img)->compress)));
    r.emplace_back("swsusp_info.pages", fmt::format("{} (image_pages {} + meta pages {} + 1)",
                                                    i.pages, i.image_pages, i.meta_pages()));
    r.emplace_back("swsusp_info.num_physpages", std::to_string(i.num_physpages));
    r.emplace_back("image.stream_pages",
                   fmt::format("{} in {} map pages, {} runs on disk", (*img)->chain.entries.size(),
                               (*img)->chain.map_dblocks.size(), (*img)->layout.runs_disk_order));
  } else if (img) {
    r.emplace_back("image", "unreadable: " + swaplab::Printable(img->status().message(), kPathMax));
  }
}

FieldRows Rows(const hibernate::AreaWithImage& ai, uint64_t max_extents) {
  const Status& verdict = ai.swapon;
  FieldRows r;
  DeviceRows(ai.area, r);
  HeaderRows(ai.area.header, r);
  ExtentRows(ai.area, max_extents, r);
  HibernationRows(ai, r);
  r.emplace_back("swapon", verdict.ok()
                               ? "accepted"
                               : "refused: " + swaplab::Printable(verdict.message(), 1024));
  return r;
}

nlohmann::json Json(const hibernate::AreaWithImage& ai) {
  const AreaInfo& a = ai.area;
  const Status& verdict = ai.swapon;
  const auto& img = ai.image;
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
  const auto resume_offset = area::ResumeOffset(a);
  j["resume_offset"] = resume_offset ? nlohmann::json(*resume_offset) : nlohmann::json();
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

}  // namespace

std::string AreaText(const hibernate::AreaWithImage& a, uint64_t max_extents) {
  std::string out;
  for (const auto& [k, v] : Rows(a, max_extents)) out += fmt::format("{:<16} {}\n", k, v);
  return out;
}

std::string AreaCsv(const hibernate::AreaWithImage& a) {
  std::string out = "field,value\n";
  for (const auto& [k, v] : Rows(a, UINT64_MAX)) out += CsvField(k) + "," + CsvField(v) + "\n";
  return out;
}

std::string AreaJson(const hibernate::AreaWithImage& a) {
  return Json(a).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string AreaFormatText(const hibernate::AreaWithImage& a) {
  const auto& h = a.area.header.v1;
  const uint64_t usable = h.last_page - h.bad_pages.size();
  std::string out = fmt::format(
      "Set up swap space version 1 on {}: {} pages ({} KiB usable), LABEL={}, UUID={}\n",
      swaplab::Printable(a.area.path), uint64_t{h.last_page} + 1, usable * (kPageSize / 1024),
      h.label.empty() ? "(none)" : swaplab::Printable(h.label), area::UuidToString(h.uuid));
  if (!a.swapon.ok())
    out += fmt::format("warning: swapon would refuse it: {}\n",
                       swaplab::Printable(a.swapon.message(), 1024));
  return out;
}

}  // namespace swaplab::report
