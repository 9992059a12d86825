// SPDX-License-Identifier: MIT
// `swaplab map AREA|TRACE|--scenario S -o map.svg`: where each cluster is,
// which list it is on, which hold the image's slots.
#include "map.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "finite_range.h"
#include "policy_arg.h"
#include "size_arg.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/output_file.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/report/map_sources.h"
#include "swaplab/workload/scenario_batch.h"
#include "swaplab/workload/shipped.h"
#include "swaplab/workload/trace.h"

namespace swaplab::tools {

namespace {

int Fail(const std::string& msg, int code) {
  fmt::print(stderr, "swaplab map: {}\n", Printable(msg, kPathMax));
  return code;
}

// Whether `path` starts as a trace does (text or binary); reads only that
// many bytes (an area or a block device may hold no newline for gigabytes).
bool IsTrace(const std::string& path) {
  static constexpr std::string_view kMagic = "swaplab-trace";
  static_assert(kMagic.size() >= sizeof(workload::kBinaryTraceMagic));
  std::ifstream f(path, std::ios::binary);
  std::string first(kMagic.size(), '\0');
  f.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<size_t>(f.gcount()));
  return first == kMagic || workload::IsBinaryTrace(first);
}

// The scenario: a shipped name, else a file.
Result<workload::Scenario> FindScenario(const std::string& name) {
  auto all = workload::ShippedInReportOrder();
  if (!all.ok()) return all.status();
  for (auto& sc : *all)
    if (sc.name == name) return sc;
  return workload::LoadScenario(name);
}

// -o: checked before any work (the input, an area, a device, an existing
// file without --force), then written through a temporary file.
area::OutputOptions OutputOf(const MapOptions& o) {
  area::OutputOptions oo;
  oo.force = o.force;
  for (const auto& in : {o.source, o.scenario})
    if (!in.empty()) oo.inputs.push_back(in);
  return oo;
}

int WriteSvg(const MapOptions& o, const std::string& svg) {
  if (Status s = area::WriteOutputFile(o.out, svg, OutputOf(o)); !s.ok())
    return Fail("-o " + s.message(), s.code() == -EIO || s.code() == -ENOSPC ? 1 : 2);
  return 0;
}

int ScenarioMap(const MapOptions& o, const report::MapSvgOptions& so) {
  auto found = FindScenario(o.scenario);
  if (!found.ok()) return Fail(found.status().message(), 2);
  workload::Scenario sc = std::move(found).value();
  bool has_image = false;
  for (const auto& st : sc.measured)
    has_image |= std::holds_alternative<workload::ImageStepSpec>(st);
  const std::string at = o.at.empty() ? (has_image ? "after" : "aging") : o.at;
  if (at != "aging" && !has_image)
    return Fail("--at " + at + ": scenario " + sc.name + " writes no image (its maps: --at aging)",
                2);
  if (!o.variant.empty()) {
    std::vector<workload::VariantSpec> keep;
    for (const auto& v : sc.variants)
      if (v.label == o.variant) keep.push_back(v);
    if (keep.empty()) {
      std::string labels;
      for (const auto& v : sc.variants) labels += (labels.empty() ? "" : ", ") + v.label;
      return Fail("--variant " + o.variant + ": scenario " + sc.name + " has " + labels, 2);
    }
    sc.variants = keep;
  }
  sc.repetitions = 1;
  if (o.scale != 1.0) workload::ScaleScenario(sc, o.scale);
  report::MapCapture cap;
  workload::RunOptions ro;
  ro.structural = true;
  ro.observe = cap.Observer();
  auto r = workload::RunScenario(sc, ro);
  if (!r.ok()) return Fail(r.status().message(), 1);
  if (!cap.status().ok()) return Fail(cap.status().message(), 1);
  std::vector<report::MapPanel> panels;
  for (const auto& v : sc.variants) {
    const auto* m = cap.Find(sc.name, v.label, at);
    if (m == nullptr) return Fail("no map of " + v.label + " at " + at, 1);
    panels.push_back({v.label + ", " + at, m});
  }
  return WriteSvg(o, report::ClusterMapSvg(sc.name + ": " + sc.title, panels, so));
}

}  // namespace

CLI::App* AddMap(CLI::App& app, MapOptions& o) {
  CLI::App* c = app.add_subcommand(
      "map", "a device's clusters as an SVG picture: list, fill, the image's slots");
  c->add_option("source", o.source,
                "a swap area (the clusters of its hibernation image; without one, the clusters "
                "as swapon sets them up from its header), or a trace (swaplab-trace 1)");
  c->add_option("--scenario", o.scenario, "a shipped scenario's name or a scenario file");
  c->add_option("--variant", o.variant, "--scenario: only this variant (default: each, stacked)");
  c->add_option("--at", o.at,
                "--scenario: after aging, or before / after the measured image write (default: "
                "after if it writes one)")
      ->check(CLI::IsMember({"aging", "before", "after"}));
  c->add_option("--scale", o.scale, "--scenario: multiply its sizes by this factor")
      ->check(FiniteRange(1e-4, 16.0));
  c->add_option("--at-record", o.at_record,
                "trace: the state after this many records (default: "
                "the end)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  c->add_option("--dev", o.dev, "trace: the device (its dev=; default: the first)")
      ->check(CLI::Range(int64_t{0}, INT64_MAX));
  c->add_option("--policy", o.policy, "trace, or an area without an image: policy preset")
      ->capture_default_str();
  AddKnobOption(c, &o.knobs);
  c->add_option("--cpus", o.cpus, "trace: CPUs in the model")->check(CLI::Range(1, 1024));
  c->add_option("--cluster-shift", o.cluster_shift, "trace: log2 slots per cluster")
      ->check(CLI::Range(1, 15));
  c->add_option("--memory-limit", o.memory_limit,
                "trace: refuse one whose swapon records need a model larger than this (K, M, G "
                "suffixes; default: the memory available, MemAvailable)");
  c->add_option("-o,--output", o.out, "the SVG file to write")->required();
  c->add_flag("--force", o.force,
              "-o may replace an existing file (never the input, a swap area or a device)");
  c->add_option("--cells", o.cells,
                "at most this many cells; more clusters are aggregated (the legend says so)")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 20));
  c->add_flag("--no-runs", o.no_runs, "no overlay numbering the image's runs");
  return c;
}

int RunMap(const MapOptions& o) {
  report::MapSvgOptions so;
  so.max_cells = o.cells;
  so.number_runs = !o.no_runs;
  if (Status s = area::CheckOutputFile(o.out, OutputOf(o)); !s.ok())
    return Fail("-o " + s.message(), 2);
  if (!o.scenario.empty()) {
    if (!o.source.empty())
      return Fail("give a SOURCE (an area or a trace) or --scenario, not both", 2);
    return ScenarioMap(o, so);
  }
  if (o.source.empty()) return Fail("give a SOURCE (an area or a trace) or --scenario", 2);
  if (!o.variant.empty() || !o.at.empty()) return Fail("--variant and --at go with --scenario", 2);
  // Never opened blocking: a FIFO would hang IsTrace, a character device
  // read forever; an area is a file or a block device, a trace a file.
  struct stat st {};
  if (::stat(o.source.c_str(), &st) < 0) return Fail(o.source + ": " + std::strerror(errno), 2);
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    return Fail(o.source + ": not a regular file or a block device (an area or a trace)", 2);
  Result<report::ClusterMap> m = Status(-EINVAL, "");
  std::string caption;
  if (IsTrace(o.source)) {
    auto policy = PolicyFromArgs(o.policy, o.knobs);
    if (!policy.ok()) return Fail(policy.status().message(), 2);
    report::TraceMapOptions to;
    to.trace = o.source;
    to.policy = *policy;
    to.cpus = o.cpus;
    to.cluster_shift = o.cluster_shift;
    to.at_record = o.at_record;
    if (!o.memory_limit.empty()) {
      auto l = ParseSize(o.memory_limit, "--memory-limit");
      if (!l.ok()) return Fail(l.status().message(), 2);
      to.memory_limit = *l;
    }
    if (o.dev >= 0) to.dev = static_cast<uint64_t>(o.dev);
    m = report::TraceClusterMap(to);
    caption = o.at_record ? fmt::format("after record {}", o.at_record) : "at the end";
  } else {
    if (o.at_record || o.dev >= 0) return Fail("--at-record and --dev go with a trace", 2);
    auto info = area::InspectArea(o.source);
    if (!info.ok()) return Fail(info.status().message(), 2);
    if (info->header.hibernation) {
      m = report::AreaClusterMap(o.source);
      caption = "hibernation image on the area";
    } else {
      auto policy = PolicyFromArgs(o.policy, o.knobs);
      if (!policy.ok()) return Fail(policy.status().message(), 2);
      m = report::SwaponClusterMap(*info, {}, *policy);
      caption = "no image: the area as swapon sets it up";
    }
  }
  // a model larger than the memory allows: 1, as replay has it; bad input: 2
  if (!m.ok()) return Fail(m.status().message(), m.status().code() == -ENOMEM ? 1 : 2);
  return WriteSvg(o, report::ClusterMapSvg(o.source, {{caption, &*m}}, so));
}

}  // namespace swaplab::tools
