// SPDX-License-Identifier: MIT
// `swaplab image write|read|inspect`'s results (image_report.h).
#include "swaplab/report/image_report.h"

#include <fmt/core.h>

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_format.h"
#include "swaplab/report/policy_json.h"

namespace swaplab::report {

using nlohmann::ordered_json;

ordered_json BatchJson(const hibernate::BatchStats& b) {
  ordered_json sizes = ordered_json::object();
  for (auto [pages, n] : b.bio_sizes) sizes[std::to_string(pages)] = n;
  return {{"bios", b.bios},     {"sync_ios", b.sync_ios},           {"pages", b.pages},
          {"drains", b.drains}, {"partial_waits", b.partial_waits}, {"bio_sizes", sizes}};
}

ordered_json ImageWriteJson(const workload::ImageWriteResult& r) {
  const auto& o = r.options;
  const auto& rep = r.report;
  ordered_json j;
  j["area"] = Printable(o.area, kPathMax);
  j["batch"] = o.batch_name;
  j["bio_capacity"] = o.capacity_name;
  j["max_pages"] = r.max_pages;
  j["source"] = o.source_name;
  j["layout"] = o.layout_name;
  j["policy"] = o.policy.name;
  j["knobs"] = KnobsJson(o.policy);
  j["seed"] = o.seed;
  j["compress"] = o.compress_name;
  j["stream_pages"] = rep.stream_pages;
  j["snapshot_pages"] = rep.T;
  j["map_pages"] = rep.Q + 1;
  j["data_pages"] = rep.N;
  j["meta_pages"] = rep.M;
  j["runs"] = rep.device_runs;
  j["alloc_runs"] = rep.session.alloc_runs;
  j["extents"] = rep.extents;
  if (o.compress != hibernate::Compressor::kNone) {
    j["units"] = rep.units;
    j["compressed_bytes"] = rep.compressed_bytes;
    j["crc32"] = rep.crc32;
  }
  j.update(BatchJson(rep.batch));
  j["bytes"] = rep.stream_pages * alloc::kPageSize;
  j["snapshot_bytes"] = rep.T * alloc::kPageSize;
  j["write_seconds_measured"] = r.write_seconds;
  j["write_cpu_seconds"] = r.write_cpu_seconds;
  j["snapshot_materialized"] = r.snapshot_materialized;
  j["snapshot_build_seconds"] = r.snapshot_build_seconds;  // outside write_seconds_measured
  j["copy_arena_pages"] = r.copy_arena_pages;
  j["fixed_buffers"] = r.fixed_buffers;
  return j;
}

std::string ImageWriteText(const workload::ImageWriteResult& r) {
  const ordered_json j = ImageWriteJson(r);
  std::string out;
  for (auto it = j.begin(); it != j.end(); ++it)
    out += fmt::format("{:<24} {}\n", it.key(),
                       it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  return out;
}

namespace {

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

ordered_json HeaderJson(const area::SwsuspHeader& h) {
  return {{"image", h.image},
          {"flags", h.flags},
          {"flag_names", area::SwsuspFlagNames(h.flags)},
          {"crc32", Hex(h.crc32)},
          {"hw_sig", Hex(h.hw_sig)},
          {"orig_sig", Printable(std::string_view(h.orig_sig.data(), h.orig_sig.size()))}};
}

// swsusp_info field by field (strings escaped: they come from the image).
ordered_json InfoJson(const hibernate::SwsuspInfo& i) {
  ordered_json j;
  j["origin"] = hibernate::Name(i.origin);
  switch (i.origin) {
    case hibernate::ImageOrigin::kKernelX86_64:
      j["arch"] = {{"record", "x86-64 restore_data_record"},
                   {"magic", Hex(i.x86.magic)},
                   {"jump_address", Hex(i.x86.jump_address)},
                   {"jump_address_phys", Hex(i.x86.jump_address_phys)},
                   {"cr3", Hex(i.x86.cr3)},
                   {"e820_checksum", Hex(i.x86.e820_checksum)}};
      break;
    case hibernate::ImageOrigin::kKernelGeneric:
      j["uts"] = {{"sysname", Printable(i.sysname)},
                  {"nodename", Printable(i.nodename)},
                  {"release", Printable(i.release)},
                  {"version", Printable(i.version)},
                  {"machine", Printable(i.machine)}};
      j["version_code"] = Hex(i.version_code);
      break;
    case hibernate::ImageOrigin::kUnknown:
      j["arch"] = {{"record", "not recognised"}, {"first_40_bytes", i.arch_head_hex}};
      break;
    case hibernate::ImageOrigin::kSwaplab:
      j["uts"] = "swaplab synthetic snapshot tag";
      break;
  }
  j["num_physpages"] = i.num_physpages;
  j["cpus"] = i.cpus;
  j["image_pages"] = i.image_pages;
  j["pages"] = i.pages;
  j["size"] = i.size;
  return j;
}

ordered_json LayoutJson(const hibernate::ImageLayout& l) {
  return {{"slots", l.slots},
          {"runs_disk_order", l.runs_disk_order},
          {"runs_write_order", l.runs_write_order},
          {"largest_run", l.largest_run},
          {"smallest_run", l.smallest_run},
          {"clusters_touched", l.clusters_touched},
          {"first_dblock", l.first_dblock},
          {"last_dblock", l.last_dblock},
          {"max_pages", l.max_pages},
          {"bios_per_page", l.bios_per_page},
          {"bios_per_run", l.bios_per_run},
          {"bios_one_run", l.bios_one_run}};
}

// Text: one "key  value" line per leaf, nested keys joined with '.'.
void PrintText(const ordered_json& j, std::string& out, const std::string& prefix = "") {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object() && !it.value().empty() && key != "bio_sizes") {
      PrintText(it.value(), out, key);
    } else {
      out +=
          fmt::format("{:<28} {}\n", key,
                      it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
  }
}

}  // namespace

ordered_json ImageReadJson(const workload::ImageReadResult& res) {
  ordered_json j;
  j["area"] = Printable(res.options.area, kPathMax);
  if (res.inspection) {
    const auto& r = *res.inspection;
    j["origin"] = hibernate::Name(r.info.origin);
    j["compress"] = hibernate::Name(r.compress);
    j["header"] = HeaderJson(r.chain.header);
    j["swsusp_info"] = InfoJson(r.info);
    j["snapshot_pages"] = r.info.pages;
    j["data_pages"] = r.info.image_pages;
    j["meta_pages"] = r.info.meta_pages();
    j["stream_pages"] = r.chain.entries.size();
    j["map_pages"] = r.chain.map_dblocks.size();
    j["map_dblocks"] = r.chain.map_dblocks;  // the chain, in order
    j["info_dblock"] = r.chain.entries[0];   // swsusp_info, stream page 0
    j["first_data_dblock"] = r.chain.entries.size() > 1 ? r.chain.entries[1] : 0;
    j["runs_disk_order"] = r.layout.runs_disk_order;
    j["runs_write_order"] = r.layout.runs_write_order;
    j["layout"] = LayoutJson(r.layout);
    j["inspect_seconds_measured"] = res.seconds;
    return j;
  }
  const auto& rep = *res.read;
  const bool lzo_or_lz4 = rep.compress != hibernate::Compressor::kNone;
  j["origin"] = hibernate::Name(rep.info.origin);
  j["compress"] = hibernate::Name(rep.compress);
  j["crc"] = rep.crc_checked ? "verified" : "none";
  j["crc_note"] =
      rep.crc_checked ? "the kernel's CRC32 over the decompressed stream matches the header"
      : lzo_or_lz4 ? "compressed without SF_CRC32_MODE: structure and decompression checked, no CRC"
                   : "uncompressed images carry no CRC: only the structure was checked";
  j["header"] = {{"flags", rep.flags},
                 {"flag_names", area::SwsuspFlagNames(rep.flags)},
                 {"crc32", Hex(rep.header_crc32)},
                 {"hw_sig", Hex(rep.hw_sig)}};
  j["swsusp_info"] = InfoJson(rep.info);
  j["snapshot_pages"] = rep.T;
  j["data_pages"] = rep.N;
  j["meta_pages"] = rep.M;
  j["pfns"] = rep.pfns;
  j["zero_pages"] = rep.zero_pages;
  j["stream_pages"] = rep.stream_pages;
  j["map_pages"] = rep.map_pages;
  if (lzo_or_lz4) {
    j["units"] = rep.units;
    j["crc32"] = Hex(rep.crc32);
    j["read_ring_pages"] = rep.ring_pages;
  }
  j["pages_verified"] = rep.pages_verified;  // against swaplab's snapshot
  if (!rep.kernel_banner.empty()) {
    j["kernel_banner"] = Printable(rep.kernel_banner);
    j["kernel_banner_page"] = rep.banner_page;
  }
  j["consumed"] = rep.consumed;
  j["io"] = res.options.kernel_io ? "kernel" : "pipelined";
  j.update(BatchJson(rep.batch));
  j["bytes"] = rep.stream_pages * area::kPageSize;
  j["chain_seconds"] = rep.chain_seconds;    // header, map chain, swsusp_info
  j["stream_seconds"] = rep.stream_seconds;  // every other stream page
  j["read_seconds_measured"] = res.seconds;
  j["read_cpu_seconds"] = res.cpu_seconds;
  if (!res.options.dump.empty()) j["dump"] = Printable(res.options.dump, kPathMax);
  return j;
}

std::string ImageReadText(const workload::ImageReadResult& r) {
  std::string out;
  PrintText(ImageReadJson(r), out);
  return out;
}

}  // namespace swaplab::report
