// SPDX-License-Identifier: MIT
// `vm hibernate` rendered: text table and JSON.
#include "swaplab/report/vm_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "floor_text.h"
#include "report_text.h"
#include "swaplab/report/plots.h"
#include "swaplab/report/report.h"
#include "swaplab/workload/replay.h"
#include "swaplab/workload/shipped.h"

namespace swaplab::report {

namespace {

using nlohmann::ordered_json;

std::string Dump(const ordered_json& j) {
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

ordered_json Metrics(const vm::SideMetrics& m) {
  ordered_json j;
  j["snapshot_pages"] = m.snapshot_pages;
  j["stream_pages"] = m.stream_pages;
  j["map_pages"] = m.map_pages;
  j["slots"] = m.slots;
  j["runs_disk_order"] = m.runs_disk_order;
  j["runs_write_order"] =
      m.runs_write_order ? ordered_json(m.runs_write_order) : ordered_json(nullptr);
  j["runs_alloc_order"] =
      m.runs_alloc_order ? ordered_json(m.runs_alloc_order) : ordered_json(nullptr);
  j["bios_per_page"] = m.bios_per_page;
  j["bios_per_run"] = m.bios_per_run;
  j["alloc_calls"] = m.alloc_calls;
  j["write_s"] = m.write_s >= 0 ? ordered_json(m.write_s) : ordered_json(nullptr);
  j["read_s"] = m.read_s >= 0 ? ordered_json(m.read_s) : ordered_json(nullptr);
  j["write_mbps"] = m.write_mbps >= 0 ? ordered_json(m.write_mbps) : ordered_json(nullptr);
  auto opt = [](auto v) { return v >= 0 ? ordered_json(v) : ordered_json(nullptr); };
  j["kernel_write_bios"] = opt(m.kernel_write_bios);
  j["kernel_write_bio_pages"] = opt(m.kernel_write_bio_pages);
  j["kernel_read_bios"] = opt(m.kernel_read_bios);
  j["kernel_read_bio_pages"] = opt(m.kernel_read_bio_pages);
  j["write_s_per_run"] = opt(m.write_s_per_run);
  j["read_s_per_run"] = opt(m.read_s_per_run);
  return j;
}

double Agreement(const vm::ModelSideInfo& m) {
  return m.expected ? static_cast<double>(m.agree) / static_cast<double>(m.expected) : 1.0;
}

double ImageAgreement(const vm::ModelSideInfo& m) {
  return m.image_expected
             ? static_cast<double>(m.image_agree) / static_cast<double>(m.image_expected)
             : 1.0;
}

std::string Secs(double s) { return s >= 0 ? fmt::format("{:.3f}", s) : std::string("-"); }

ordered_json VmHibernateDoc(const vm::HibernateReport& r) {
  const auto& o = r.options;
  ordered_json j;
  j["options"] = {{"layout", workload::Name(o.layout)},
                  {"swap_pages", r.swap_pages},
                  {"image_pages_asked", r.image_pages_asked},
                  {"compress", hibernate::Name(o.compress)},
                  {"resume", o.resume},
                  {"seed", o.seed},
                  {"mem_mib", o.vm.mem_mib},
                  {"smp", o.vm.smp},
                  {"rotational", o.vm.rotational},
                  {"policy", o.policy}};
  ordered_json k = Metrics(r.kernel);
  k["release"] = r.kinfo.release;
  k["accel"] = r.kinfo.accel;
  k["accel_why"] = r.kinfo.accel_why;
  k["origin"] = r.kinfo.origin;
  k["compress"] = r.kinfo.compress;
  k["crc"] = r.kinfo.crc_verified ? "verified" : "none";
  k["clusters_touched"] = r.kernel.clusters_touched;
  k["seconds_kind"] =
      "the guest kernel's own console lines (guest clock under " + r.kinfo.accel + ")";
  k["layout_pages_swapped"] = r.kinfo.layout_swapped;
  k["layout_pages_not_in_swap"] = r.kinfo.layout_not_in_swap;
  k["layout_pages_freed"] = r.kinfo.layout_freed;
  k["boot_wall_s"] = r.kinfo.boot_wall_s;
  k["hang_retries"] = r.kinfo.retries.hang;
  k["kernel_failure_retries"] = r.kinfo.retries.kernel_failure;
  if (o.resume) {
    k["resume_wall_s"] = r.kinfo.resume_wall_s;
    k["resumed_intact"] = r.kinfo.resumed_intact;
  }
  k["pm_lines"] = r.kinfo.pm_lines;
  j["kernel"] = k;
  ordered_json m = Metrics(r.model);
  m["policy"] = r.minfo.policy;
  m["slot_source"] = hibernate::Name(o.model_source);
  m["seconds_kind"] = r.minfo.seconds_kind;
  m["trace_records"] = r.minfo.records;
  m["expected"] = r.minfo.expected;
  m["agree"] = r.minfo.agree;
  m["agreement"] = Agreement(r.minfo);
  m["disagreements"] = r.minfo.disagreements;
  m["image_slots_expected"] = r.minfo.image_expected;
  m["image_slots_agree"] = r.minfo.image_agree;
  m["image_agreement"] = ImageAgreement(r.minfo);
  m["image_disagreements"] = r.minfo.image_disagreements;
  m["model_wall_s"] = r.minfo.model_wall_s;
  j["model"] = m;
  return j;
}

}  // namespace

std::string VmHibernateJson(const vm::HibernateReport& r) { return Dump(VmHibernateDoc(r)); }

std::string VmHibernateText(const vm::HibernateReport& r) {
  const auto& o = r.options;
  std::string s;
  s += fmt::format(
      "vm hibernate: layout {}, swap {} pages, image ~{} pages asked, compress {}, seed {}\n",
      workload::Name(o.layout), r.swap_pages, r.image_pages_asked, hibernate::Name(o.compress),
      o.seed);
  s += fmt::format("kernel: Linux {} in qemu, accel {}, {} MiB, {} CPU; image origin {}, CRC {}\n",
                   PrintablePath(r.kinfo.release), PrintablePath(r.kinfo.accel_why), o.vm.mem_mib,
                   o.vm.smp, PrintablePath(r.kinfo.origin),
                   r.kinfo.crc_verified ? "verified" : "none");
  s += fmt::format("layout in the guest: {} pages swapped out, {} not in swap, {} freed\n",
                   r.kinfo.layout_swapped, r.kinfo.layout_not_in_swap, r.kinfo.layout_freed);
  s += fmt::format(
      "model: {} (slot source {}), trace {} records, placement agreement {}/{} ({:.2f}%)\n",
      r.minfo.policy, hibernate::Name(o.model_source), r.minfo.records, r.minfo.agree,
      r.minfo.expected, 100 * Agreement(r.minfo));
  s += fmt::format("image slots in allocation order: {}/{} agree ({:.2f}%)\n", r.minfo.image_agree,
                   r.minfo.image_expected, 100 * ImageAgreement(r.minfo));
  s += fmt::format("\n{:<22} {:>14} {:>14}\n", "", "kernel", "model");
  auto row = [&](const char* name, uint64_t k, uint64_t m) {
    s += fmt::format("{:<22} {:>14} {:>14}\n", name, k, m);
  };
  auto opt = [](uint64_t v) { return v ? std::to_string(v) : std::string("-"); };
  row("snapshot pages", r.kernel.snapshot_pages, r.model.snapshot_pages);
  row("stream pages", r.kernel.stream_pages, r.model.stream_pages);
  row("map pages", r.kernel.map_pages, r.model.map_pages);
  row("runs (disk order)", r.kernel.runs_disk_order, r.model.runs_disk_order);
  s += fmt::format("{:<22} {:>14} {:>14}\n", "runs (submit order)", opt(r.kernel.runs_write_order),
                   "-");
  s += fmt::format("{:<22} {:>14} {:>14}\n", "runs (alloc order)", "-",
                   opt(r.model.runs_alloc_order));
  row("bios per page", r.kernel.bios_per_page, r.model.bios_per_page);
  row("bios per run", r.kernel.bios_per_run, r.model.bios_per_run);
  if (r.kernel.kernel_write_bios >= 0)
    s += fmt::format("{:<22} {:>14} {:>14}\n", "kernel's write bios", r.kernel.kernel_write_bios,
                     "-");
  if (r.kernel.kernel_read_bios >= 0)
    s +=
        fmt::format("{:<22} {:>14} {:>14}\n", "kernel's read bios", r.kernel.kernel_read_bios, "-");
  s += fmt::format("{:<22} {:>14} {:>14}\n", "write, s", Secs(r.kernel.write_s),
                   Secs(r.model.write_s));
  s +=
      fmt::format("{:<22} {:>14} {:>14}\n", "read, s", Secs(r.kernel.read_s), Secs(r.model.read_s));
  s += "\nkernel seconds: its own console lines (guest clock under " +
       PrintablePath(r.kinfo.accel) + "); model seconds: " + r.minfo.seconds_kind + "\n";
  s += fmt::format("host wall: guest boot {:.2f} s", r.kinfo.boot_wall_s);
  if (o.resume) s += fmt::format(", resume boot {:.2f} s", r.kinfo.resume_wall_s);
  s += fmt::format(", model {:.2f} s\n", r.minfo.model_wall_s);
  for (const auto& l : r.kinfo.pm_lines) s += "  " + PrintablePath(l) + "\n";
  for (size_t i = 0; i < r.minfo.disagreements.size() && i < 5; ++i)
    s += "  disagreement: " + r.minfo.disagreements[i] + "\n";
  for (size_t i = 0; i < r.minfo.image_disagreements.size() && i < 5; ++i)
    s += "  image disagreement: " + r.minfo.image_disagreements[i] + "\n";
  return s;
}

namespace {

double VmWall(const vm::HibernateReport& r) {
  return r.kinfo.boot_wall_s + std::max(0.0, r.kinfo.resume_wall_s);
}

// The model's seconds with `cpu`'s prices on its counts, with a bio per
// page or (per_run: hibernate_bio=runs) per run; -1 (shown "-") when the
// model has none.
double ModelWrite(const vm::HibernateReport& r, const workload::HostCpuCost& cpu,
                  bool per_run = false) {
  const double s = per_run ? r.model.write_s_per_run : r.model.write_s;
  return s < 0 ? -1
               : cpu.Write(s, per_run ? r.model.bios_per_run : r.model.bios_per_page,
                           r.model.alloc_calls);
}
double ModelRead(const vm::HibernateReport& r, const workload::HostCpuCost& cpu,
                 bool per_run = false) {
  const double s = per_run ? r.model.read_s_per_run : r.model.read_s;
  return s < 0 ? -1 : cpu.Read(s, per_run ? r.model.bios_per_run : r.model.bios_per_page);
}

}  // namespace

std::string VmSeedTableText(const vm::SeedTableReport& t, const workload::HostCpuCost* cpu) {
  if (t.layouts.empty()) return "reproduce --vm: no layout ran\n";
  const auto& k0 = t.layouts[0];
  std::string s;
  s += fmt::format("seed 001 on a real kernel: Linux {} in qemu, accel {}, {} CPU, {} MiB\n",
                   PrintablePath(k0.kinfo.release), PrintablePath(k0.kinfo.accel_why),
                   k0.options.vm.smp, k0.options.vm.mem_mib);
  s += fmt::format("scale {:.6g} of the seed's sizes (5.0G image; 6G swap shuffled, 12G holes):",
                   t.options.scale);
  for (const auto& r : t.layouts)
    s += fmt::format(" {} swap {} MiB, image ~{} MiB;", workload::Name(r.options.layout),
                     r.options.swap_bytes >> 20, r.options.image_bytes >> 20);
  s += fmt::format(" compress {}\n", hibernate::Name(t.options.compress));
  s += fmt::format(
      "model: preset {}, slot source base, the guest's layout replayed from its trace\n",
      t.options.policy);
  if (cpu) s += "host CPU prices: " + cpu->label + "\n";
  s += fmt::format("\n{:<26}", "");
  for (const auto& r : t.layouts)
    s += fmt::format(" {:>10} {:>10}", workload::Name(r.options.layout), "");
  s += fmt::format("\n{:<26}", "");
  for (size_t i = 0; i < t.layouts.size(); ++i)
    s += fmt::format(" {:>10} {:>10}", "kernel", "model");
  s += "\n";
  auto row = [&](const char* name, auto kf, auto mf) {
    s += fmt::format("{:<26}", name);
    for (const auto& r : t.layouts) s += fmt::format(" {:>10} {:>10}", kf(r), mf(r));
    s += "\n";
  };
  auto dash = [](const vm::HibernateReport&) { return std::string("-"); };
  // A metric both sides have: the kernel's beside the model's.
  auto count = [&](const char* name, uint64_t vm::SideMetrics::*f) {
    row(
        name, [&](const auto& r) { return std::to_string(r.kernel.*f); },
        [&](const auto& r) { return std::to_string(r.model.*f); });
  };
  auto secs = [&](const char* name, double vm::SideMetrics::*f) {
    row(
        name, [&](const auto& r) { return Secs(r.kernel.*f); },
        [&](const auto& r) { return Secs(r.model.*f); });
  };
  count("stream pages", &vm::SideMetrics::stream_pages);
  count("runs (disk order)", &vm::SideMetrics::runs_disk_order);
  count("bios (one per page)", &vm::SideMetrics::bios_per_page);
  count("bios if one per run", &vm::SideMetrics::bios_per_run);
  count("allocator calls", &vm::SideMetrics::alloc_calls);
  secs("write, s", &vm::SideMetrics::write_s);
  if (cpu)
    row("write + host CPU, s", dash, [&](const auto& r) { return Secs(ModelWrite(r, *cpu)); });
  secs("read, s", &vm::SideMetrics::read_s);
  if (cpu) row("read + host CPU, s", dash, [&](const auto& r) { return Secs(ModelRead(r, *cpu)); });
  row(
      "host wall, s", [&](const auto& r) { return fmt::format("{:.2f}", VmWall(r)); },
      [&](const auto& r) { return fmt::format("{:.2f}", r.minfo.model_wall_s); });
  s += "\nkernel seconds: its own \"Wrote/Read ... in T seconds\" lines (guest clock under " +
       k0.kinfo.accel + ", 0.01 s steps); model seconds: " + k0.minfo.seconds_kind + "\n";
  s += "host wall: the VM's two boots (layout, hibernate; resume) against the model's replay of "
       "the guest's trace "
       "and its images\n";
  for (const auto& r : t.layouts)
    s += fmt::format(
        "{}: the model answered {:.0f}x faster than the VM ({:.2f} s against {:.2f} s); placement "
        "agreement {}/{}\n",
        workload::Name(r.options.layout),
        r.minfo.model_wall_s > 0 ? VmWall(r) / r.minfo.model_wall_s : 0.0, r.minfo.model_wall_s,
        VmWall(r), r.minfo.agree, r.minfo.expected);
  return s;
}

std::string VmSeedTableJson(const vm::SeedTableReport& t, const workload::HostCpuCost* cpu) {
  ordered_json j;
  j["scale"] = t.options.scale;
  j["compress"] = hibernate::Name(t.options.compress);
  j["policy"] = t.options.policy;
  if (cpu) j["host_cpu"] = HostCpuJson(*cpu);
  ordered_json layouts = ordered_json::object();
  for (const auto& r : t.layouts) {
    ordered_json d = VmHibernateDoc(r);
    if (cpu) {
      d["model"]["write_host_cpu_s"] = ModelWrite(r, *cpu);
      d["model"]["read_host_cpu_s"] = ModelRead(r, *cpu);
    }
    d["vm_wall_s"] = VmWall(r);
    d["vm_over_model_wall"] = r.minfo.model_wall_s > 0 ? VmWall(r) / r.minfo.model_wall_s : 0.0;
    layouts[workload::Name(r.options.layout)] = d;
  }
  j["layouts"] = layouts;
  return Dump(j);
}

std::string VmRunJson(const vm::VmRunOptions& o, const vm::VmRunResult& r) {
  ordered_json j;
  j["trace"] = o.trace;
  j["device"] = o.device;
  j["policy"] = r.policy;
  j["vm"] = {{"release", r.release},
             {"accel", r.accel},
             {"accel_why", r.accel_why},
             {"smp", o.vm.smp},
             {"mem_mib", o.vm.mem_mib},
             {"boot_wall_seconds", r.boot_wall_s},
             {"hang_retries", r.retries.hang},
             {"kernel_failure_retries", r.retries.kernel_failure},
             {"guest_run_seconds", r.guest_run_s}};
  j["host_replay"] = {{"expected", r.host_replay.expected},
                      {"agree", r.host_replay.agree},
                      {"agreement", workload::Agreement(r.host_replay)}};
  if (!o.out.empty()) j["out"] = o.out;
  j["kernel_run"] = ordered_json::parse(r.kernel_json, nullptr, false);
  return Dump(j);
}

std::string VmRunText(const vm::VmRunOptions& o, const vm::VmRunResult& r) {
  const ordered_json k = ordered_json::parse(r.kernel_json, nullptr, false);
  auto num = [&](const char* key) -> uint64_t {
    return k.contains(key) && k[key].is_number_unsigned() ? k[key].get<uint64_t>() : 0;
  };
  std::string out = fmt::format(
      "vm run {} on Linux {} ({}, {} CPUs, {} MiB), device {}: {} records in {:.1f} s in the "
      "guest, {:.1f} s with boot\n",
      PrintablePath(o.trace), PrintablePath(r.release), PrintablePath(r.accel), o.vm.smp,
      o.vm.mem_mib, PrintablePath(o.device), num("records"), r.guest_run_s, r.boot_wall_s);
  if (r.retries.hang > 0)
    out += fmt::format("note: the guest's block I/O hung ({} boot{} made again)\n", r.retries.hang,
                       r.retries.hang > 1 ? "s" : "");
  if (r.retries.kernel_failure > 0)
    out += fmt::format("note: the guest kernel failed before its init ({} boot{} made again)\n",
                       r.retries.kernel_failure, r.retries.kernel_failure > 1 ? "s" : "");
  if (k.contains("warnings") && k["warnings"].is_array())
    for (const auto& w : k["warnings"])
      if (w.is_string())
        out += "warning (in the guest): " + PrintablePath(w.get<std::string>()) + "\n";
  out += fmt::format("pages swapped {}  kept in memory {} (model {})\n", num("pages_swapped"),
                     num("pages_not_swapped"), num("model_pages_unplaced"));
  auto seconds = [&](const char* key) {
    return k.contains(key) && k[key].is_number() ? k[key].get<double>() : 0.0;
  };
  out +=
      FloorLine({seconds("records_seconds"), num("floor_pages_swapped"), seconds("floor_seconds"),
                 num("floor_folios"), num("floor_calls"), seconds("floor_calls_seconds")},
                "guest kernel");
  out += fmt::format("placement agreement with {}: {}/{} ({:.2f}%); the host's replay: {}/{}\n",
                     r.policy, num("agree"), num("expected"),
                     100.0 * workload::Agreement(r.host_replay), r.host_replay.agree,
                     r.host_replay.expected);
  if (k.contains("fallback") && k["fallback"].is_object())
    for (auto it = k["fallback"].begin(); it != k["fallback"].end(); ++it)
      out += fmt::format("  {} fallback: kernel {:.2f}%  model {:.2f}%\n", it.key(),
                         100 * it.value().value("kernel_rate", 0.0),
                         100 * it.value().value("model_rate", 0.0));
  if (k.contains("disagreements") && k["disagreements"].is_array())
    for (const auto& d : k["disagreements"])
      out += fmt::format("  line {}: folio {} page {}: kernel dev {} offset {}, model {}\n",
                         d.value("line", 0), d.value("folio", 0), d.value("page", 0),
                         d.value("kernel_dev", 0), d.value("kernel_offset", 0),
                         d.value("model", std::string()));
  const bool exact =
      k.contains("watch_exact") && k["watch_exact"].is_boolean() && k["watch_exact"].get<bool>();
  if (num("interference_total") && exact)
    out += fmt::format("interference: {} points, {} foreign slots, {} not accounted\n",
                       num("interference_total"), num("foreign_slots"),
                       num("interference_unaccounted"));
  else if (num("interference_total"))
    out += fmt::format(
        "slots in use differed from the model's count after {} records (no preset models this "
        "kernel exactly: not taken for interference)\n",
        num("interference_total"));
  if (num("kernel_on_its_own_total"))
    out += fmt::format("the kernel on its own: {} (see --json)\n", num("kernel_on_its_own_total"));
  return out;
}

namespace {

// The median and spread of one metric over a cell's runs (values < 0, "the
// kernel did not say", left out).
struct Spread {
  double median = -1, min = -1, max = -1;
  size_t n = 0;
};
// The median and range of the values that are >= 0 (the others: not measured).
Spread SpreadOfValues(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !(x >= 0); }), v.end());
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return s;
}
template <class F>
Spread SpreadOf(const vm::RfcCell& c, F f) {
  std::vector<double> v;
  for (const auto& r : c.runs) v.push_back(f(r));
  return SpreadOfValues(std::move(v));
}

// A cell's metrics, kernel and model, with the names the JSON uses.
struct CellMetrics {
  Spread k_write, k_read, k_runs, k_bios, k_agree;
  Spread m_write, m_read, m_runs, m_bios;
  Spread m_write_cpu, m_read_cpu;  // with the host CPU prices (none: n = 0)
};
CellMetrics MetricsOf(const vm::RfcCell& c, const workload::HostCpuCost* cpu) {
  using R = vm::HibernateReport;
  const bool runs = c.column.bio_runs;
  CellMetrics m;
  m.k_write = SpreadOf(c, [](const R& r) { return r.kernel.write_s; });
  m.k_read = SpreadOf(c, [](const R& r) { return r.kernel.read_s; });
  m.k_runs = SpreadOf(c, [](const R& r) { return double(r.kernel.runs_disk_order); });
  // The kernel's own count when it prints one, else the one the layout gives.
  m.k_bios = SpreadOf(c, [runs](const R& r) {
    return r.kernel.kernel_write_bios >= 0
               ? double(r.kernel.kernel_write_bios)
               : double(runs ? r.kernel.bios_per_run : r.kernel.bios_per_page);
  });
  m.k_agree = SpreadOf(c, [](const R& r) {
    return r.minfo.image_expected ? double(r.minfo.image_agree) / double(r.minfo.image_expected)
                                  : -1.0;
  });
  m.m_write =
      SpreadOf(c, [runs](const R& r) { return runs ? r.model.write_s_per_run : r.model.write_s; });
  m.m_read =
      SpreadOf(c, [runs](const R& r) { return runs ? r.model.read_s_per_run : r.model.read_s; });
  m.m_runs = SpreadOf(c, [](const R& r) { return double(r.model.runs_disk_order); });
  m.m_bios = SpreadOf(c, [runs](const R& r) {
    return double(runs ? r.model.bios_per_run : r.model.bios_per_page);
  });
  if (cpu) {
    m.m_write_cpu = SpreadOf(c, [runs, cpu](const R& r) { return ModelWrite(r, *cpu, runs); });
    m.m_read_cpu = SpreadOf(c, [runs, cpu](const R& r) { return ModelRead(r, *cpu, runs); });
  }
  return m;
}

// Seed 001's own cells for the layout (scenarios/rfc-shuffled.json,
// rfc-holes.json: seed_reported), row -> column -> text; empty if absent.
std::map<std::string, std::map<std::string, std::string>> SeedCells(workload::RfcLayout l) {
  const std::string file = l == workload::RfcLayout::kShuffled ? "scenarios/rfc-shuffled.json"
                                                               : "scenarios/rfc-holes.json";
  for (const auto& s : workload::ShippedScenarios())
    if (file == s.file)
      if (auto sc = workload::ParseScenario(s.json, s.file); sc.ok())
        return sc->seed_reported.cells;
  return {};
}

const char* LayoutTitle(workload::RfcLayout l) {
  return l == workload::RfcLayout::kShuffled ? "Shuffled free list" : "Holes in nonfull clusters";
}

std::string SecsCell(const Spread& s, const Spread& base) {
  if (s.n == 0) return "-";
  std::string t = fmt::format("{:.2f}", s.median);
  if (base.n && base.median > 0 && &s != &base)
    t += fmt::format(" ({:+.0f}%)", 100.0 * (s.median - base.median) / base.median);
  if (s.n > 1) t += fmt::format(" [{:.2f}-{:.2f}]", s.min, s.max);
  return t;
}

std::string CountCell(const Spread& s) {
  if (s.n == 0) return "-";
  std::string t = FormatValue(s.median, workload::MetricKind::kCount);
  if (s.n > 1 && s.min != s.max)
    t += " [" + FormatValue(s.min, workload::MetricKind::kCount) + "-" +
         FormatValue(s.max, workload::MetricKind::kCount) + "]";
  return t;
}

ordered_json SpreadJson(const Spread& s) {
  if (s.n == 0) return nullptr;
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"n", s.n}};
}

}  // namespace

std::string VmRfcTableText(const vm::RfcTableReport& t, const workload::HostCpuCost* cpu) {
  if (t.layouts.empty() || t.layouts[0].cells.empty() || t.layouts[0].cells[0].runs.empty())
    return "reproduce --vm: nothing ran\n";
  const auto& r0 = t.layouts[0].cells[0].runs[0];
  std::string s = fmt::format(
      "seed 001 on real kernels: Linux {} in qemu ({}), {} CPU, {} MiB; {} run(s) per cell, "
      "medians [min-max]; scale {:.6g} of the seed's sizes, compress {}\n",
      PrintablePath(r0.kinfo.release), PrintablePath(r0.kinfo.accel), r0.options.vm.smp,
      r0.options.vm.mem_mib, t.options.runs, t.options.table.scale,
      hibernate::Name(t.options.table.compress));
  s += "columns: one kernel (kernel-patches/rfc-6.12), booted with:";
  for (const auto& c : t.options.columns)
    s += fmt::format(" {} = {};", c.name, c.append.empty() ? "(no parameter)" : c.append);
  s += "\n";
  for (const auto& lt : t.layouts) {
    const auto& first = lt.cells[0].runs[0];
    s += fmt::format("\n{} (swap {} MiB, image ~{} MiB asked, {} stream pages)\n",
                     LayoutTitle(lt.layout), first.options.swap_bytes >> 20,
                     first.options.image_bytes >> 20, first.kernel.stream_pages);
    std::vector<CellMetrics> cm;
    for (const auto& c : lt.cells) cm.push_back(MetricsOf(c, cpu));
    const int w = 26;
    s += fmt::format("{:<24}", "");
    for (const auto& c : lt.cells) s += fmt::format("{:>{}}", c.column.name, w);
    s += "\n";
    auto row = [&](const char* name, auto cell) {
      s += fmt::format("{:<24}", name);
      for (size_t i = 0; i < cm.size(); ++i) s += fmt::format("{:>{}}", cell(i), w);
      s += "\n";
    };
    s += "kernel\n";
    row("  write, s", [&](size_t i) { return SecsCell(cm[i].k_write, cm[0].k_write); });
    row("  read, s", [&](size_t i) { return SecsCell(cm[i].k_read, cm[0].k_read); });
    row("  runs", [&](size_t i) { return CountCell(cm[i].k_runs); });
    row("  bios", [&](size_t i) { return CountCell(cm[i].k_bios); });
    s += fmt::format("model ({})\n", first.minfo.policy);
    row("  write, s", [&](size_t i) { return SecsCell(cm[i].m_write, cm[0].m_write); });
    row("  read, s", [&](size_t i) { return SecsCell(cm[i].m_read, cm[0].m_read); });
    if (cpu) {
      row("  write + host CPU, s",
          [&](size_t i) { return SecsCell(cm[i].m_write_cpu, cm[0].m_write_cpu); });
      row("  read + host CPU, s",
          [&](size_t i) { return SecsCell(cm[i].m_read_cpu, cm[0].m_read_cpu); });
    }
    row("  runs", [&](size_t i) { return CountCell(cm[i].m_runs); });
    row("  bios", [&](size_t i) { return CountCell(cm[i].m_bios); });
    row("  image slots agree", [&](size_t i) {
      return cm[i].k_agree.n ? fmt::format("{:.2f}%", 100 * cm[i].k_agree.min) : "-";
    });
    const auto seed = SeedCells(lt.layout);
    if (!seed.empty()) {
      s += "seed 001 (5.0G image, 4 CPUs)\n";
      for (const char* r : {"write, s", "read, s", "runs", "bios"}) {
        auto it = seed.find(r);
        row(fmt::format("  {}", r).c_str(), [&](size_t i) {
          if (it == seed.end()) return std::string("-");
          auto c = it->second.find(lt.cells[i].column.name);
          return c == it->second.end() ? std::string("-") : c->second;
        });
      }
    }
  }
  s += "\nkernel seconds: its own \"Wrote/Read ... in T seconds\" lines (guest clock under " +
       r0.kinfo.accel +
       ", 0.01 s steps); kernel bios: its \"Image I/O: N bios\" line; model seconds: " +
       r0.minfo.seconds_kind + "; image slots agree: the lowest of the cell's runs\n" +
       (cpu ? "host CPU prices (+ host CPU rows): " + cpu->label + "\n" : std::string());
  return s;
}

std::string VmRfcTableJson(const vm::RfcTableReport& t, const workload::HostCpuCost* cpu) {
  ordered_json j;
  j["scale"] = t.options.table.scale;
  j["compress"] = hibernate::Name(t.options.table.compress);
  j["runs_per_cell"] = t.options.runs;
  j["kernel"] = t.options.table.vm.kernel;
  if (cpu) j["host_cpu"] = HostCpuJson(*cpu);
  ordered_json layouts = ordered_json::object();
  for (const auto& lt : t.layouts) {
    ordered_json l = ordered_json::object();
    const auto seed = SeedCells(lt.layout);
    for (const auto& c : lt.cells) {
      const CellMetrics m = MetricsOf(c, cpu);
      ordered_json cell;
      cell["boot_parameters"] = c.column.append;
      cell["model_slot_source"] = hibernate::Name(c.column.model_source);
      cell["kernel"] = {{"write_s", SpreadJson(m.k_write)},
                        {"read_s", SpreadJson(m.k_read)},
                        {"runs", SpreadJson(m.k_runs)},
                        {"bios", SpreadJson(m.k_bios)}};
      cell["model"] = {{"write_s", SpreadJson(m.m_write)},
                       {"read_s", SpreadJson(m.m_read)},
                       {"runs", SpreadJson(m.m_runs)},
                       {"bios", SpreadJson(m.m_bios)},
                       {"image_agreement", SpreadJson(m.k_agree)}};
      if (cpu) {
        cell["model"]["write_host_cpu_s"] = SpreadJson(m.m_write_cpu);
        cell["model"]["read_host_cpu_s"] = SpreadJson(m.m_read_cpu);
      }
      ordered_json sd = ordered_json::object();
      for (const auto& [row, cols] : seed)
        if (auto it = cols.find(c.column.name); it != cols.end()) {
          const double v = ParseSeedNumber(it->second);
          sd[row == "write, s"  ? "write_s"
             : row == "read, s" ? "read_s"
                                : row] = std::isnan(v) ? ordered_json(it->second) : ordered_json(v);
        }
      cell["seed"] = sd;
      ordered_json runs = ordered_json::array();
      for (const auto& r : c.runs) runs.push_back(VmHibernateDoc(r));
      cell["runs"] = runs;
      l[c.column.name] = cell;
    }
    layouts[workload::Name(lt.layout)] = l;
  }
  j["layouts"] = layouts;
  return Dump(j);
}

namespace {

// A row's cell: the kernel's median [min-max] of its runs.
std::string NonfullCell(const Spread& s, bool percent) {
  if (s.n == 0) return "-";
  if (!percent) return CountCell(s);
  std::string t = fmt::format("{:.1f}", s.median);
  if (s.n > 1 && s.min != s.max) t += fmt::format(" [{:.1f}-{:.1f}]", s.min, s.max);
  return t;
}

Spread KernelSpread(const vm::NonfullTableReport& t, size_t col, const std::string& row) {
  std::vector<double> v;
  for (const auto& r : t.kernel[col]) {
    const auto rows = vm::KernelRows(r);
    auto it = rows.find(row);
    v.push_back(it == rows.end() ? -1 : it->second);
  }
  return SpreadOfValues(std::move(v));
}

double ModelCell(const vm::NonfullTableReport& t, const std::string& row, const std::string& col) {
  auto r = t.model.find(row);
  if (r == t.model.end()) return NAN;
  auto c = r->second.find(col);
  return c == r->second.end() ? NAN : c->second;
}

std::string SeedCell(const vm::NonfullTableReport& t, const std::string& row,
                     const std::string& col) {
  const auto& cells = t.options.scenario.seed_reported.cells;
  auto r = cells.find(row);
  if (r == cells.end()) return "-";
  auto c = r->second.find(col);
  return c == r->second.end() ? "-" : c->second;
}

bool IsPercentRow(const std::string& row) { return row.find('%') != std::string::npos; }

}  // namespace

std::string VmNonfullTableText(const vm::NonfullTableReport& t) {
  if (t.kernel.empty() || t.kernel[0].empty()) return "reproduce --vm: nothing ran\n";
  const auto& r0 = t.kernel[0][0];
  const auto& sc = t.options.scenario;
  const vm::ChurnLoad& l = t.load;
  std::string s = fmt::format(
      "seed 003 on a real kernel: {} (Linux {}) in qemu ({}), {} CPU, {} MiB; {} run(s) per "
      "column, medians [min-max]; scale {:.6g} of {}\n",
      PrintablePath(t.options.vm.kernel), PrintablePath(r0.release), PrintablePath(r0.accel),
      t.options.vm.smp, t.options.vm.mem_mib, t.options.runs, sc.scale, sc.name);
  s += fmt::format(
      "load: {} processes of {}..{} MiB, {} growing at once, {} alive at most, folios {} "
      "(pages:weight), {:.1f}% zapped; swap {} MiB zram (no discard), kept below {} MiB in use; "
      "memcg memory.max {} MiB; mTHP sizes always: {} kB\n",
      l.processes, l.min_pages >> 8, l.max_pages >> 8, l.growing, l.concurrent, l.MixArg(),
      l.zap_permille / 10.0, t.zram_bytes >> 20, l.swapped_pages >> 8, t.options.memcg_bytes >> 20,
      [&] {
        std::string k;
        for (unsigned kb : t.mthp_kb) k += (k.empty() ? "" : ",") + std::to_string(kb);
        return k.empty() ? std::string("none") : k;
      }());
  s += "columns: one kernel, booted with:";
  for (const auto& c : t.columns) s += fmt::format(" {} = {};", c.label, c.append);
  s += "\n\n";
  const int w = 28;
  s += fmt::format("{:<26}", "");
  for (const auto& c : t.columns) s += fmt::format("{:>{}}", c.label, w);
  s += "\n";
  auto row = [&](const std::string& name, auto cell) {
    s += fmt::format("{:<26}", name);
    for (size_t i = 0; i < t.columns.size(); ++i) s += fmt::format("{:>{}}", cell(i), w);
    s += "\n";
  };
  s += "kernel\n";
  for (const auto& r : t.rows)
    row("  " + r, [&](size_t i) { return NonfullCell(KernelSpread(t, i, r), IsPercentRow(r)); });
  for (unsigned kb : t.mthp_kb)
    row(fmt::format("  {}kB faulted [fell back]", kb), [&](size_t i) {
      std::vector<double> a, f;
      for (const auto& k : t.kernel[i])
        if (const vm::MthpStat* st = k.Stat(kb)) {
          a.push_back(static_cast<double>(st->anon_fault_alloc));
          f.push_back(static_cast<double>(st->anon_fault_fallback));
        }
      const Spread sa = SpreadOfValues(a), sf = SpreadOfValues(f);
      if (!sa.n || !sf.n) return std::string("-");
      return FormatValue(sa.median, workload::MetricKind::kCount) + " [" +
             FormatValue(sf.median, workload::MetricKind::kCount) + "]";
    });
  row("  seconds (guest)", [&](size_t i) {
    std::vector<double> v;
    for (const auto& k : t.kernel[i]) v.push_back(k.guest_s);
    const Spread sp = SpreadOfValues(v);
    return sp.n ? fmt::format("{:.1f}", sp.median) : std::string("-");
  });
  s += "model (linux-6.12)\n";
  for (const auto& r : t.rows)
    row("  " + r, [&](size_t i) {
      const double v = ModelCell(t, r, t.columns[i].label);
      if (std::isnan(v)) return std::string("-");
      return IsPercentRow(r) ? fmt::format("{:.1f}", v)
                             : FormatValue(v, workload::MetricKind::kCount);
    });
  if (!sc.seed_reported.cells.empty()) {
    s += fmt::format("{} (full size)\n", sc.seed_reported.source);
    for (const auto& r : t.rows)
      row("  " + r, [&](size_t i) { return SeedCell(t, r, t.columns[i].label); });
  }
  s += "\nkernel: /sys/kernel/mm/transparent_hugepage/hugepages-*/stats at the end of each boot "
       "(faulted: anon_fault_alloc, fell back: anon_fault_fallback, medians); "
       "model: the scenario at the same scale with the guest's CPUs, medians of as many seeds; "
       "seed: full size, compare the rates\n";
  return s;
}

std::string VmNonfullTableJson(const vm::NonfullTableReport& t) {
  ordered_json j;
  const auto& sc = t.options.scenario;
  j["scenario"] = sc.name;
  j["scale"] = sc.scale;
  j["kernel"] = t.options.vm.kernel;
  j["release"] = t.kernel.empty() || t.kernel[0].empty() ? "" : t.kernel[0][0].release;
  j["runs_per_column"] = t.options.runs;
  j["cpus"] = t.options.vm.smp;
  j["mem_mib"] = t.options.vm.mem_mib;
  j["memcg_bytes"] = t.options.memcg_bytes;
  j["zram_bytes"] = t.zram_bytes;
  j["mthp_kb"] = t.mthp_kb;
  const vm::ChurnLoad& l = t.load;
  j["load"] = {{"processes", l.processes},
               {"concurrent", l.concurrent},
               {"growing", l.growing},
               {"min_pages", l.min_pages},
               {"max_pages", l.max_pages},
               {"zap_permille", l.zap_permille},
               {"swapped_pages", l.swapped_pages},
               {"mix", l.MixArg()}};
  ordered_json cols = ordered_json::object();
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& c = t.columns[i];
    ordered_json col;
    col["boot_parameters"] = c.append;
    col["model_knobs"] = c.model_knobs;
    ordered_json k = ordered_json::object(), m = ordered_json::object(),
                 sd = ordered_json::object();
    for (const auto& r : t.rows) {
      k[r] = SpreadJson(KernelSpread(t, i, r));
      const double v = ModelCell(t, r, c.label);
      m[r] = std::isnan(v) ? ordered_json(nullptr) : ordered_json(v);
      const std::string seed = SeedCell(t, r, c.label);
      if (seed != "-") sd[r] = ParseSeedNumber(seed);
    }
    col["kernel"] = k;
    col["model"] = m;
    col["seed"] = sd;
    ordered_json runs = ordered_json::array();
    for (const auto& r : t.kernel[i]) {
      ordered_json stats = ordered_json::object();
      for (const auto& st : r.stats) {
        ordered_json one = {{"swpout", st.swpout}, {"swpout_fallback", st.swpout_fallback}};
        if (st.anon_fault_alloc >= 0) {
          one["anon_fault_alloc"] = st.anon_fault_alloc;
          one["anon_fault_fallback"] = st.anon_fault_fallback;
        }
        stats[std::to_string(st.kb) + "kB"] = one;
      }
      runs.push_back({{"processes", r.processes},
                      {"pages", r.pages},
                      {"zapped", r.zapped},
                      {"kills", r.kills},
                      {"died", r.died},
                      {"held", r.held},
                      {"max_swap_used_pages", r.max_swap_used},
                      {"guest_s", r.guest_s},
                      {"boot_wall_s", r.boot_wall_s},
                      {"prefer_nonfull", r.prefer_nonfull},
                      {"pswpout", r.pswpout},
                      {"thp_swpout", r.thp_swpout},
                      {"thp_swpout_fallback", r.thp_swpout_fallback},
                      {"stats", stats}});
    }
    col["runs"] = runs;
    cols[c.label] = col;
  }
  j["columns"] = cols;
  return Dump(j);
}

}  // namespace swaplab::report
