// `vm hibernate` rendered: text table and JSON.
#include "swaplab/report/vm_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "swaplab/workload/replay.h"

namespace swaplab::report {

namespace {

using nlohmann::ordered_json;

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
  k["hang_retries"] = r.kinfo.hang_retries;
  if (o.resume) {
    k["resume_wall_s"] = r.kinfo.resume_wall_s;
    k["resumed_intact"] = r.kinfo.resumed_intact;
  }
  k["pm_lines"] = r.kinfo.pm_lines;
  j["kernel"] = k;
  ordered_json m = Metrics(r.model);
  m["policy"] = r.minfo.policy;
  m["slot_source"] = "base";
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

std::string VmHibernateJson(const vm::HibernateReport& r) {
  return VmHibernateDoc(r).dump(2) + "\n";
}

std::string VmHibernateText(const vm::HibernateReport& r) {
  const auto& o = r.options;
  std::string s;
  s += fmt::format(
      "vm hibernate: layout {}, swap {} pages, image ~{} pages asked, compress {}, seed {}\n",
      workload::Name(o.layout), r.swap_pages, r.image_pages_asked, hibernate::Name(o.compress),
      o.seed);
  s += fmt::format("kernel: Linux {} in qemu, accel {}, {} MiB, {} CPU; image origin {}, CRC {}\n",
                   r.kinfo.release, r.kinfo.accel_why, o.vm.mem_mib, o.vm.smp, r.kinfo.origin,
                   r.kinfo.crc_verified ? "verified" : "none");
  s += fmt::format("layout in the guest: {} pages swapped out, {} not in swap, {} freed\n",
                   r.kinfo.layout_swapped, r.kinfo.layout_not_in_swap, r.kinfo.layout_freed);
  s += fmt::format(
      "model: {} (slot source base), trace {} records, placement agreement {}/{} ({:.2f}%)\n",
      r.minfo.policy, r.minfo.records, r.minfo.agree, r.minfo.expected, 100 * Agreement(r.minfo));
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
  s += fmt::format("{:<22} {:>14} {:>14}\n", "write, s", Secs(r.kernel.write_s),
                   Secs(r.model.write_s));
  s +=
      fmt::format("{:<22} {:>14} {:>14}\n", "read, s", Secs(r.kernel.read_s), Secs(r.model.read_s));
  s += "\nkernel seconds: its own console lines (guest clock under " + r.kinfo.accel +
       "); model seconds: " + r.minfo.seconds_kind + "\n";
  s += fmt::format("host wall: guest boot {:.2f} s", r.kinfo.boot_wall_s);
  if (o.resume) s += fmt::format(", resume boot {:.2f} s", r.kinfo.resume_wall_s);
  s += fmt::format(", model {:.2f} s\n", r.minfo.model_wall_s);
  for (const auto& l : r.kinfo.pm_lines) s += "  " + l + "\n";
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

// The model's seconds with `cpu`'s prices on its counts; -1 (shown "-")
// when the model has none.
double ModelWrite(const vm::HibernateReport& r, const workload::HostCpuCost& cpu) {
  return r.model.write_s < 0
             ? -1
             : cpu.Write(r.model.write_s, r.model.bios_per_page, r.model.alloc_calls);
}
double ModelRead(const vm::HibernateReport& r, const workload::HostCpuCost& cpu) {
  return r.model.read_s < 0 ? -1 : cpu.Read(r.model.read_s, r.model.bios_per_page);
}

}  // namespace

std::string VmSeedTableText(const vm::SeedTableReport& t, const workload::HostCpuCost* cpu) {
  if (t.layouts.empty()) return "reproduce --vm: no layout ran\n";
  const auto& k0 = t.layouts[0];
  std::string s;
  s += fmt::format("seed 001 on a real kernel: Linux {} in qemu, accel {}, {} CPU, {} MiB\n",
                   k0.kinfo.release, k0.kinfo.accel_why, k0.options.vm.smp, k0.options.vm.mem_mib);
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
  if (cpu)
    j["host_cpu"] = {{"label", cpu->label},
                     {"write_bio_us", cpu->write_bio_us},
                     {"read_bio_us", cpu->read_bio_us},
                     {"alloc_call_us", cpu->alloc_call_us}};
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
  return j.dump(2) + "\n";
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
             {"guest_run_seconds", r.guest_run_s}};
  j["host_replay"] = {{"expected", r.host_replay.expected},
                      {"agree", r.host_replay.agree},
                      {"agreement", workload::Agreement(r.host_replay)}};
  if (!o.out.empty()) j["out"] = o.out;
  j["kernel_run"] = ordered_json::parse(r.kernel_json, nullptr, false);
  return j.dump(2) + "\n";
}

std::string VmRunText(const vm::VmRunOptions& o, const vm::VmRunResult& r) {
  const ordered_json k = ordered_json::parse(r.kernel_json, nullptr, false);
  auto num = [&](const char* key) -> uint64_t {
    return k.contains(key) && k[key].is_number_unsigned() ? k[key].get<uint64_t>() : 0;
  };
  std::string out = fmt::format(
      "vm run {} on Linux {} ({}, {} CPUs, {} MiB), device {}: {} records in {:.1f} s in the "
      "guest, {:.1f} s with boot\n",
      o.trace, r.release, r.accel, o.vm.smp, o.vm.mem_mib, o.device, num("records"), r.guest_run_s,
      r.boot_wall_s);
  if (k.contains("warnings") && k["warnings"].is_array())
    for (const auto& w : k["warnings"])
      if (w.is_string()) out += "warning (in the guest): " + w.get<std::string>() + "\n";
  out += fmt::format("pages swapped {}  kept in memory {} (model {})\n", num("pages_swapped"),
                     num("pages_not_swapped"), num("model_pages_unplaced"));
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

}  // namespace swaplab::report
