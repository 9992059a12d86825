// SPDX-License-Identifier: MIT
// `swaplab doctor`: the findings of kernel::RunDoctor as text (one per
// line, what to do on the next) or one JSON document.
#include "doctor.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <deque>
#include <nlohmann/json.hpp>

#include "size_arg.h"
#include "swaplab/alloc/preset_for_release.h"
#include "swaplab/alloc/printable.h"
#include "swaplab/area/output_file.h"
#include "swaplab/kernel/doctor.h"
#include "swaplab/report/cluster_map.h"
#include "swaplab/report/map_sources.h"

namespace swaplab::tools {

CLI::App* AddDoctor(CLI::App& app, DoctorCmdOptions& o) {
  CLI::App* c = app.add_subcommand(
      "doctor",
      "Why will this machine not hibernate, or not resume: the kernel's hibernation support, "
      "where the image goes (resume=, resume_offset=, /sys/power), each swap area (a swap "
      "file's extents and its correct resume_offset), whether the image fits. Reads only; "
      "run as root to read swap files' extent maps. Exit 1 when a finding is an error");
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_option("--image-size", o.image_size,
                "the image to fit (e.g. 2G); default: estimated from /proc/meminfo and "
                "/sys/power/image_size");
  c->add_option("--root", o.root,
                "read DIR/proc, DIR/sys, DIR/dev (a copy of another machine's) instead of this "
                "machine's");
  c->add_option("--map", o.map,
                "write an SVG of each swap area's clusters now (the header, the slots the page "
                "tables show in use) and of the image as the model places it there");
  c->add_flag("--force", o.force, "--map may replace an existing file");
  c->add_flag("--no-layout", o.no_layout,
              "do not read the processes' page tables nor model the image's layout");
  return c;
}

namespace {

// The layout step's facts: the target's slots in use and the predictions.
nlohmann::ordered_json LayoutJson(const kernel::DoctorFacts& f) {
  using nlohmann::ordered_json;
  const kernel::DoctorLayout& l = f.layout;
  if (l.area_pages == 0) return nullptr;
  ordered_json predictions = ordered_json::array();
  for (const auto& p : l.predictions)
    predictions.push_back({{"allocator", p.allocator},
                           {"error", Printable(p.error)},
                           {"slots", p.slots},
                           {"runs", p.runs},
                           {"write_bios", p.write_bios},
                           {"read_bios", p.read_bios},
                           {"write_s", p.write_s},
                           {"read_s", p.read_s}});
  return {{"preset", l.preset},
          {"area_pages", l.area_pages},
          {"free_slots", l.free_slots},
          {"in_use_seen", l.in_use_seen},
          {"in_use_listed", l.in_use_listed},
          {"processes", l.processes},
          {"capped", l.capped},
          {"seconds", "modelled"},
          {"predictions", predictions}};
}

nlohmann::ordered_json Json(const kernel::DoctorReport& r) {
  using nlohmann::ordered_json;
  const kernel::DoctorFacts& f = r.facts;
  ordered_json j;
  j["worst"] = kernel::Name(r.worst);
  ordered_json findings = ordered_json::array();
  for (const auto& x : r.findings)
    findings.push_back({{"severity", kernel::Name(x.severity)},
                        {"check", x.check},
                        {"seen", x.seen},
                        {"todo", x.todo}});
  j["findings"] = findings;
  ordered_json swaps = ordered_json::array();
  for (const auto& s : f.swaps) {
    ordered_json w = {{"path", Printable(s.path, kPathMax)},
                      {"type", Printable(s.type)},
                      {"size_kib", s.size_kib},
                      {"used_kib", s.used_kib},
                      {"priority", s.priority},
                      {"zram", s.zram},
                      {"device", s.dev}};
    if (s.first_block) w["resume_offset"] = *s.first_block;
    if (s.in_use_read) w["in_use_seen"] = s.in_use.size();
    if (s.type == "file") {
      w["filesystem"] = s.fs_type;
      w["extents"] = s.extents;
      w["holes"] = s.holes;
      if (!s.unreadable.empty()) w["unreadable"] = Printable(s.unreadable);
      w["deleted"] = s.deleted;
    }
    swaps.push_back(w);
  }
  j["system"] = {
      {"release", Printable(f.release)},
      {"state", Printable(f.state)},
      {"disk", Printable(f.disk)},
      {"can_hibernate", f.can_hibernate},
      {"lockdown", Printable(f.lockdown)},
      {"compressor", Printable(f.compressor)},
      {"nocompress", f.nocompress},
      {"image_size", f.image_size},
      {"reserved_size", f.reserved_size},
      {"resume", f.resume_dev},
      {"resume_offset", f.resume_offset ? ordered_json(*f.resume_offset) : ordered_json()},
      {"cmdline_resume", Printable(f.cmdline_resume)},
      {"cmdline_resume_device", f.cmdline_resume_dev},
      {"cmdline_resume_offset", Printable(f.cmdline_resume_offset)}};
  j["swaps"] = swaps;
  j["target"] =
      f.target >= 0 ? ordered_json(Printable(f.swaps[f.target].path, kPathMax)) : ordered_json();
  j["inactive_swap_files"] = ordered_json::array();
  for (const auto& s : f.inactive)
    j["inactive_swap_files"].push_back({{"path", Printable(s.path, kPathMax)},
                                        {"extents", s.extents},
                                        {"holes", s.holes},
                                        {"unreadable", Printable(s.unreadable)}});
  j["layout"] = LayoutJson(f);
  j["image"] = {{"pages", f.image_pages},
                {"total_pages", f.image_total_pages},
                {"from_option", f.image_from_option},
                {"saveable_pages", f.saveable_pages},
                {"min_pages", f.min_image_pages},
                {"active_anon_kib", f.active_anon_kib}};
  return j;
}

std::string Text(const kernel::DoctorReport& r) {
  size_t counts[4] = {};
  for (const auto& x : r.findings) ++counts[static_cast<int>(x.severity)];
  std::string out =
      fmt::format("swaplab doctor: {}{}: {} error{}, {} warning{}\n",
                  r.facts.release.empty() ? "this system" : "Linux " + Printable(r.facts.release),
                  "", counts[3], counts[3] == 1 ? "" : "s", counts[2], counts[2] == 1 ? "" : "s");
  for (const auto& x : r.findings) {
    out += fmt::format("{:<8} {}: {}\n", kernel::Name(x.severity), x.check, x.seen);
    if (!x.todo.empty()) out += fmt::format("{:<8} -> {}\n", "", x.todo);
  }
  return out;
}

// --map's file: never an area swapped on nor a device, an existing file
// only with --force.
area::OutputOptions MapOutput(const DoctorCmdOptions& o, const kernel::DoctorFacts& f) {
  area::OutputOptions oo;
  oo.force = o.force;
  for (const auto& s : f.swaps) oo.inputs.push_back(s.path);
  return oo;
}

// --map: a panel per area whose header was read (its clusters now), and
// for the target one per predicted image.
std::string MapSvg(const kernel::DoctorFacts& f, std::string* why) {
  auto policy = alloc::Policy::Preset(f.layout.preset.empty() ? alloc::PresetForRelease(f.release)
                                                              : f.layout.preset);
  if (!policy.ok()) policy = alloc::Policy{};
  std::deque<report::ClusterMap> maps;
  std::vector<report::MapPanel> panels;
  for (size_t i = 0; i < f.swaps.size(); ++i) {
    const kernel::DoctorSwap& s = f.swaps[i];
    if (!s.area) continue;
    auto m = report::SwaponClusterMap(*s.area, s.in_use, *policy);
    if (!m.ok()) {
      *why = m.status().message();
      continue;
    }
    const report::ClusterMap& now = maps.emplace_back(std::move(m).value());
    panels.push_back({Printable(s.path, kPathMax) + ": now", &now});
    if (static_cast<int>(i) != f.target) continue;
    for (const auto& p : f.layout.predictions) {
      if (!p.error.empty()) continue;
      report::ClusterMap& img = maps.emplace_back(now);
      report::MarkImageSlots(img, p.stream, p.map, true);
      panels.push_back({"the image as " + p.allocator, &img});
    }
  }
  if (panels.empty()) return "";
  return report::ClusterMapSvg(
      "swaplab doctor: " + (f.release.empty() ? "this system" : "Linux " + Printable(f.release)),
      panels, {});
}

int WriteMap(const DoctorCmdOptions& o, const kernel::DoctorFacts& f) {
  std::string why = "no swap area whose header could be read";
  const std::string svg = MapSvg(f, &why);
  if (svg.empty()) {
    std::fprintf(stderr, "swaplab doctor: --map: nothing to draw: %s\n",
                 Printable(why, kPathMax).c_str());
    return 1;
  }
  if (Status s = area::WriteOutputFile(o.map, svg, MapOutput(o, f)); !s.ok()) {
    std::fprintf(stderr, "swaplab doctor: --map %s\n", Printable(s.message(), kPathMax).c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int RunDoctor(const DoctorCmdOptions& o) {
  kernel::DoctorOptions d;
  if (!o.image_size.empty()) {
    auto b = ParseSize(o.image_size, "--image-size");
    if (!b.ok()) {
      std::fprintf(stderr, "swaplab doctor: %s\n", b.status().message().c_str());
      return 2;
    }
    if (*b == 0 || *b > (uint64_t{1} << 50)) {
      std::fprintf(stderr, "swaplab doctor: --image-size %s: between 1 byte and 1 PiB\n",
                   Printable(o.image_size).c_str());
      return 2;
    }
    d.image_bytes = *b;
  }
  if (!o.root.empty()) {
    struct stat st {};
    if (::stat(o.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "swaplab doctor: --root %s: not a directory\n",
                   Printable(o.root).c_str());
      return 2;
    }
    d.root = o.root;
    while (d.root.size() > 1 && d.root.back() == '/') d.root.pop_back();
    if (d.root == "/") d.root.clear();
  }
  d.layout = !o.no_layout;
  if (!o.map.empty()) {
    if (o.no_layout) {
      std::fprintf(stderr, "swaplab doctor: --map draws the layout: not with --no-layout\n");
      return 2;
    }
    if (Status s = area::CheckOutputFile(o.map, MapOutput(o, {})); !s.ok()) {
      std::fprintf(stderr, "swaplab doctor: --map %s\n", Printable(s.message(), kPathMax).c_str());
      return 2;
    }
  }
  const kernel::DoctorReport r = kernel::RunDoctor(d);
  const std::string out = o.json ? Json(r).dump(2) + "\n" : Text(r);
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "swaplab doctor: cannot write to stdout\n");
    return 1;
  }
  if (!o.map.empty() && WriteMap(o, r.facts) != 0) return 1;
  return r.worst == kernel::Severity::kError ? 1 : 0;
}

}  // namespace swaplab::tools
