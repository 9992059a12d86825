// SPDX-License-Identifier: MIT
// `swaplab kernel run|cleanup`'s results (kernel_report.h).
#include "swaplab/report/kernel_report.h"

#include <fmt/core.h>

#include <set>

#include "floor_text.h"
#include "report_text.h"
#include "swaplab/report/policy_json.h"
#include "swaplab/workload/replay.h"

namespace swaplab::report {

namespace {

// Per mTHP size the trace allocated, the kernel's swpout / swpout_fallback
// (hugepages-<size>kB/stats) and the model's, with each side's rate.
nlohmann::ordered_json FallbackJson(const kernel::KernelComparison& k) {
  const auto& r = k.kernel;
  const auto& m = k.model;
  nlohmann::ordered_json fj = nlohmann::ordered_json::object();
  std::set<int> orders;
  for (const auto& [o, v] : r.folios_by_order)
    if (o > 0) orders.insert(o);
  auto get = [](const std::map<int, uint64_t>& mp, int o) {
    return mp.count(o) ? mp.at(o) : uint64_t{0};
  };
  for (int o : orders) {
    const std::string size = std::to_string(4 << o) + "kB";
    fj[size] = {{"kernel_swpout", get(r.swpout, o)},
                {"kernel_swpout_fallback", get(r.swpout_fallback, o)},
                {"model_swpout", get(m.swpout, o)},
                {"model_swpout_fallback", get(m.swpout_fallback, o)},
                {"kernel_rate", kernel::FallbackRate(r.swpout, r.swpout_fallback, o)},
                {"model_rate", kernel::FallbackRate(m.swpout, m.swpout_fallback, o)}};
  }
  return fj;
}

// The swap areas the run made, one object each.
nlohmann::ordered_json AreasJson(const kernel::RunReport& r) {
  nlohmann::ordered_json aj = nlohmann::ordered_json::array();
  for (const auto& a : r.areas)
    aj.push_back({{"dev", a.dev},
                  {"path", PrintablePath(a.path)},
                  {"kind", kernel::Name(a.kind)},
                  {"pages", a.pages},
                  {"prio", a.prio},
                  {"ssd", a.ssd},
                  {"blkdev", a.blkdev},
                  {"swap_type", a.swap_type},
                  {"note", PrintablePath(a.note)}});
  return aj;
}

// Where the model put a page the kernel put elsewhere.
nlohmann::ordered_json DisagreementsJson(const workload::ReplaySummary& s) {
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& d : s.disagreements)
    dj.push_back({{"line", d.line},
                  {"folio", d.folio},
                  {"page", d.page},
                  {"kernel_dev", d.expected_dev},
                  {"kernel_offset", d.expected_offset},
                  {"model", d.got}});
  return dj;
}

// What the kernel did that the trace did not ask for.
nlohmann::ordered_json AnomaliesJson(const kernel::RunReport& r) {
  nlohmann::ordered_json nj = nlohmann::ordered_json::array();
  for (const auto& a : r.anomalies)
    nj.push_back({{"line", a.line}, {"folio", a.folio}, {"what", PrintablePath(a.what)}});
  return nj;
}

// Slots of the run's areas taken or given back outside the trace.
nlohmann::ordered_json InterferenceJson(const kernel::RunReport& r) {
  nlohmann::ordered_json ij = nlohmann::ordered_json::array();
  for (const auto& i : r.interference) {
    nlohmann::ordered_json e = {{"line", i.line},
                                {"dev", i.dev},
                                {"slots", i.slots},
                                {"accounted", i.accounted},
                                {"cpu", i.cpu},
                                {"before_record", i.before_record},
                                {"content_other", i.content_other},
                                {"how", PrintablePath(i.how)}};
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const auto& [off, n] : i.runs) runs.push_back({{"offset", off}, {"slots", n}});
    e["runs"] = std::move(runs);
    ij.push_back(std::move(e));
  }
  return ij;
}

}  // namespace

nlohmann::ordered_json KernelRunJson(const kernel::KernelComparison& k) {
  const auto& r = k.kernel;
  const auto& s = k.model.summary;
  nlohmann::ordered_json j = {{"trace", PrintablePath(k.trace)},
                              {"device", PrintablePath(k.device)},
                              {"policy", k.policy.name},
                              {"knobs", KnobsJson(k.policy)}};
  if (!k.out.empty()) j["out"] = PrintablePath(k.out);
  j["areas"] = AreasJson(r);
  // Where the pages went, on each side.
  j.update({{"records", r.records},
            {"folios", r.folios},
            {"pages_swapped", r.pages_swapped},
            {"pages_not_swapped", r.pages_not_swapped},
            {"expected", s.expected},
            {"agree", s.agree},
            {"agreement", workload::Agreement(s)},
            {"fallback", FallbackJson(k)},
            {"kernel_pswpout", r.pswpout},
            {"model_pswpout", k.model.pswpout},
            {"kernel_pgdeactivate", r.lru_deactivated},
            {"disagreements", DisagreementsJson(s)},
            {"kernel_on_its_own", AnomaliesJson(r)},
            {"kernel_on_its_own_total", r.anomalies_total}});
  // What the kernel did beside the trace, and how the model took it.
  j.update({{"unexplained_slots", r.unexplained_slots},
            {"worker_pages_swapped", r.worker_pages_swapped},
            {"drop_cache_made_global", r.drop_cache_global},
            {"uncached_at_pageout", r.uncached_at_pageout},
            {"pageout_calls", r.pageout_calls},
            {"steps", r.steps},
            {"swapin_bypassed_cache", r.swapin_bypassed_cache},
            {"swapin_extra_pages", r.swapin_extra_pages},
            {"model_pages_unplaced", s.pages_unplaced},
            {"interference", InterferenceJson(r)},
            {"interference_total", r.interference_total},
            {"interference_unaccounted", r.interference_unaccounted},
            {"foreign_slots", r.foreign_slots},
            {"scan_bases", r.scan_bases},
            {"watch_policy", r.watch_policy},
            {"watch_exact", r.watch_exact},
            {"model_foreign_agree", s.foreign_agree}});
  j.update({{"warnings", PrintablePaths(r.warnings)},
            {"runs", r.runs},
            {"rerun_reasons", PrintablePaths(r.rerun_reasons)},
            {"seconds", r.seconds},
            {"records_seconds", r.records_seconds},
            {"floor_seconds", r.floor_seconds},
            {"floor_pages_swapped", r.floor_pages_swapped},
            {"floor_folios", r.floor_folios},
            {"floor_calls", r.floor_calls},
            {"floor_calls_seconds", r.floor_calls_seconds},
            {"floor_calls_pages_swapped", r.floor_calls_pages_swapped}});
  return j;
}

std::string KernelRunText(const kernel::KernelComparison& k) {
  const auto& r = k.kernel;
  const auto& s = k.model.summary;
  std::string out =
      fmt::format("kernel run {} on {} ({} records, {} folios, {:.2f} s)\n", PrintablePath(k.trace),
                  PrintablePath(k.device), r.records, r.folios, r.seconds);
  for (const auto& a : r.areas)
    out += fmt::format("  dev {}: {} ({}, {} pages, prio {}, {}, {}) = swap type {}\n", a.dev,
                       PrintablePath(a.path), kernel::Name(a.kind), a.pages, a.prio,
                       a.ssd ? "ssd" : "rotational", a.blkdev ? "blkdev" : "file", a.swap_type);
  for (const auto& w : r.warnings) out += "warning: " + PrintablePath(w) + "\n";
  out += FloorLine({r.records_seconds, r.floor_pages_swapped, r.floor_seconds, r.floor_folios,
                    r.floor_calls, r.floor_calls_seconds},
                   "kernel");
  if (r.scan_bases)
    out += fmt::format(
        "{} random scan bases of the kernel read off its placements and written as `scan-base` "
        "records\n",
        r.scan_bases);
  for (const auto& why : r.rerun_reasons) out += "made again: " + PrintablePath(why) + "\n";
  if (r.interference_total && !r.watch_exact) {
    out += fmt::format(
        "slots in use differed from {}'s count after {} records (the model is not this kernel's "
        "own preset: reported, not explained)\n",
        r.watch_policy, r.interference_total);
  } else if (r.interference_total) {
    out += fmt::format(
        "interference: {} points where slots of the run's areas were taken or given back outside "
        "the trace; {} slots written as `foreign` records and replayed by the model ({} placed "
        "where the kernel put them); {} points not accounted{}\n",
        r.interference_total, r.foreign_slots, s.foreign_agree, r.interference_unaccounted,
        r.interference_unaccounted ? "" : ": the agreement below counts the trace's pages only");
    for (const auto& i : r.interference) {
      std::string where;
      for (const auto& [off, n] : i.runs) where += fmt::format(" {}+{}", off, n);
      out += fmt::format("  after line {}: dev {} {:+} slots{}: {}\n", i.line, i.dev, i.slots,
                         where.empty() ? "" : " at" + where, PrintablePath(i.how));
    }
  }
  out += fmt::format("pages swapped {}  kept in memory {}  pswpout kernel {} model {}\n",
                     r.pages_swapped, r.pages_not_swapped, r.pswpout, k.model.pswpout);
  if (r.lru_deactivated)
    out += fmt::format(
        "the kernel's LRU balancing deactivated {} folios during the run (system-wide "
        "pgdeactivate)\n",
        r.lru_deactivated);
  out += fmt::format("model: {}\n", k.policy.Describe());
  out += fmt::format("placement agreement with {}: {}/{} ({:.2f}%)\n", k.policy.name, s.agree,
                     s.expected, 100.0 * workload::Agreement(s));
  const auto fj = FallbackJson(k);
  for (auto it = fj.begin(); it != fj.end(); ++it) {
    const auto& v = it.value();
    out += fmt::format(
        "  {} fallback: kernel {:.2f}% ({}/{})  model {:.2f}%\n", it.key(),
        100 * v["kernel_rate"].get<double>(), v["kernel_swpout_fallback"].get<uint64_t>(),
        v["kernel_swpout"].get<uint64_t>() + v["kernel_swpout_fallback"].get<uint64_t>(),
        100 * v["model_rate"].get<double>());
  }
  for (const auto& d : s.disagreements)
    out += fmt::format("  line {}: folio {} page {}: kernel dev {} offset {}, model {}\n", d.line,
                       d.folio, d.page, d.expected_dev, d.expected_offset, d.got);
  if (r.anomalies_total) {
    out += fmt::format("the kernel on its own ({}):\n", r.anomalies_total);
    for (const auto& a : r.anomalies)
      out += fmt::format("  line {}: folio {}: {}\n", a.line, a.folio, PrintablePath(a.what));
  }
  return out;
}

nlohmann::ordered_json CleanupJson(const std::vector<std::string>& actions, const Status& st) {
  nlohmann::ordered_json j;
  j["actions"] = PrintablePaths(actions);
  j["ok"] = st.ok();
  if (!st.ok()) j["error"] = PrintablePath(st.ToString());
  return j;
}

std::string CleanupText(const std::vector<std::string>& actions) {
  std::string out;
  for (const auto& l : actions) out += PrintablePath(l) + "\n";
  if (actions.empty()) out += "nothing to clean up\n";
  return out;
}

}  // namespace swaplab::report
