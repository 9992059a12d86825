// `swaplab image read|inspect AREA`: any hibernation image, the kernel's or
// swaplab's (hibernation spec §1.4, §3.3, §4.8, §7, §10), read-only unless
// --consume.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "image.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/area_lock.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_chain.h"
#include "swaplab/hibernate/image_reader.h"
#include "swaplab/report/image_report.h"
#include "swaplab/workload/image_write.h"

namespace swaplab::tools {

using nlohmann::ordered_json;

namespace {

std::string Hex(uint64_t v) { return fmt::format("0x{:x}", v); }

ordered_json HeaderJson(const area::SwsuspHeader& h) {
  return {{"image", h.image},
          {"flags", h.flags},
          {"flag_names", hibernate::SwsuspFlagNames(h.flags)},
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
      j["uts"] = {{"sysname", Printable(i.sysname)}, {"nodename", Printable(i.nodename)},
                  {"release", Printable(i.release)}, {"version", Printable(i.version)},
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
void PrintText(const ordered_json& j, const std::string& prefix = "") {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it.value().is_object() && !it.value().empty() && key != "bio_sizes") {
      PrintText(it.value(), key);
    } else {
      fmt::print("{:<28} {}\n", key, it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
  }
}

// 1: the image (or the area) failed a check or could not be read;
// 2: the command line was wrong or the path cannot be used at all.
int Fail(const Status& st, const char* what, int code) {
  fmt::print(stderr, "swaplab image {}: {}\n", what, Printable(st.ToString(), 4096));
  return code;
}

// A file the dump goes to: never one that exists (it could be the area).
struct Dump {
  std::FILE* f = nullptr;
  ~Dump() {
    if (f) std::fclose(f);
  }
};

}  // namespace

int RunImageReadInspect(const ImageCommands& c, const ImageOptions& o) {
  const bool inspect = c.inspect->parsed();
  const char* what = inspect ? "inspect" : "read";
  auto capacity = hibernate::ParseCapacityMode(o.bio_capacity);
  auto batch_mode = hibernate::ParseBatchMode(o.batch);
  if (!capacity.ok()) return Fail(capacity.status(), what, 2);
  if (!batch_mode.ok()) return Fail(batch_mode.status(), what, 2);
  auto info = area::InspectArea(o.area);
  if (!info.ok()) return Fail(info.status(), what, 2);
  // --consume writes: lock the area as every writer does (area_lock.h)
  auto lock = area::LockAreaIf(o.consume, o.area);
  if (!lock.ok()) return Fail(lock.status(), what, lock.status().code() == -EBUSY ? 1 : 2);
  area::EngineOptions eo;
  eo.limits = info->limits;
  eo.writable = o.consume;  // read-only unless the image is to be consumed
  auto engine = area::OpenUringEngine(o.area, eo);
  if (!engine.ok()) return Fail(engine.status(), what, 2);
  const uint64_t device_pages = info->size_bytes / area::kPageSize;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = workload::ProcessCpuSeconds();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  ordered_json j;
  j["area"] = Printable(o.area, 4096);

  if (inspect) {
    auto r = hibernate::InspectImage(**engine, 0, device_pages, *capacity);
    if (!r.ok()) return Fail(r.status(), what, 1);
    j["origin"] = hibernate::Name(r->info.origin);
    j["compress"] = hibernate::Name(r->compress);
    j["header"] = HeaderJson(r->chain.header);
    j["swsusp_info"] = InfoJson(r->info);
    j["snapshot_pages"] = r->info.pages;
    j["data_pages"] = r->info.image_pages;
    j["meta_pages"] = r->info.meta_pages();
    j["stream_pages"] = r->chain.entries.size();
    j["map_pages"] = r->chain.map_dblocks.size();
    j["map_dblocks"] = r->chain.map_dblocks;  // the chain, in order
    j["info_dblock"] = r->chain.entries[0];  // swsusp_info, stream page 0
    j["first_data_dblock"] = r->chain.entries.size() > 1 ? r->chain.entries[1] : 0;
    j["runs_disk_order"] = r->layout.runs_disk_order;
    j["runs_write_order"] = r->layout.runs_write_order;
    j["layout"] = LayoutJson(r->layout);
    j["inspect_seconds_measured"] = seconds();
  } else {
    Dump dump;
    if (!o.dump.empty()) {
      dump.f = std::fopen(o.dump.c_str(), "wx");  // O_EXCL: never overwrite
      if (dump.f == nullptr)
        return Fail(Status(-errno, "--dump " + o.dump + ": " + std::strerror(errno) + " (it must not exist)"), what, 2);
    }
    hibernate::ReaderOptions ro;
    ro.batch = {*batch_mode, *capacity, o.max_pages};
    ro.device_pages = device_pages;
    ro.threads = o.threads;
    ro.consume = o.consume;
    ro.pipelined = !o.kernel_io;
    if (dump.f != nullptr) {
      ro.on_page = [&](uint64_t p, const std::byte* page) {
        if (std::fwrite(page, 1, area::kPageSize, dump.f) != area::kPageSize)
          return Status(-EIO, "--dump " + o.dump + ": write failed at stream page " + std::to_string(p));
        return Status::Ok();
      };
    }
    auto rep = hibernate::ReadImage(**engine, 0, ro);
    if (!rep.ok()) {
      if (dump.f != nullptr) ::unlink(o.dump.c_str());
      return Fail(rep.status(), what, 1);
    }
    const bool lzo_or_lz4 = rep->compress != hibernate::Compressor::kNone;
    j["origin"] = hibernate::Name(rep->info.origin);
    j["compress"] = hibernate::Name(rep->compress);
    j["crc"] = rep->crc_checked ? "verified" : "none";
    j["crc_note"] = rep->crc_checked ? "the kernel's CRC32 over the decompressed stream matches the header"
                    : lzo_or_lz4     ? "compressed without SF_CRC32_MODE: structure and decompression checked, no CRC"
                                     : "uncompressed images carry no CRC: only the structure was checked";
    j["header"] = {{"flags", rep->flags}, {"flag_names", hibernate::SwsuspFlagNames(rep->flags)},
                   {"crc32", Hex(rep->header_crc32)}, {"hw_sig", Hex(rep->hw_sig)}};
    j["swsusp_info"] = InfoJson(rep->info);
    j["snapshot_pages"] = rep->T;
    j["data_pages"] = rep->N;
    j["meta_pages"] = rep->M;
    j["pfns"] = rep->pfns;
    j["zero_pages"] = rep->zero_pages;
    j["stream_pages"] = rep->stream_pages;
    j["map_pages"] = rep->map_pages;
    if (lzo_or_lz4) {
      j["units"] = rep->units;
      j["crc32"] = Hex(rep->crc32);
      j["read_ring_pages"] = rep->ring_pages;
    }
    j["pages_verified"] = rep->pages_verified;  // against swaplab's snapshot
    if (!rep->kernel_banner.empty()) {
      j["kernel_banner"] = Printable(rep->kernel_banner);
      j["kernel_banner_page"] = rep->banner_page;
    }
    j["consumed"] = rep->consumed;
    j["io"] = o.kernel_io ? "kernel" : "pipelined";
    j.update(report::BatchJson(rep->batch));
    j["bytes"] = rep->stream_pages * area::kPageSize;
    j["chain_seconds"] = rep->chain_seconds;    // header, map chain, swsusp_info
    j["stream_seconds"] = rep->stream_seconds;  // every other stream page
    j["read_seconds_measured"] = seconds();
    j["read_cpu_seconds"] = workload::ProcessCpuSeconds() - cpu0;
    if (dump.f != nullptr) {
      if (std::fclose(dump.f) != 0) return Fail(Status(-EIO, "--dump " + o.dump + ": close failed"), what, 1);
      dump.f = nullptr;
      j["dump"] = Printable(o.dump, 4096);
    }
  }
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
  } else {
    PrintText(j);
  }
  return 0;
}

}  // namespace swaplab::tools
