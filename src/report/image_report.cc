// `swaplab image write`'s result (image_report.h).
#include "swaplab/report/image_report.h"

#include <fmt/core.h>

#include "swaplab/alloc/printable.h"
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
  j["area"] = Printable(o.area, 4096);
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
  j["bytes"] = rep.stream_pages * 4096;
  j["snapshot_bytes"] = rep.T * 4096;
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

}  // namespace swaplab::report
