// SPDX-License-Identifier: MIT
// `swaplab replay`'s result (replay_report.h).
#include "swaplab/report/replay_report.h"

#include <fmt/core.h>

#include <array>
#include <span>

#include "swaplab/alloc/printable.h"
#include "swaplab/report/policy_json.h"

namespace swaplab::report {

namespace {

// The summary rows of the counter table (alloc::ForEachCounter): scalars by
// name, per-order rows grouped by order as the kernel's
// hugepages-<size>kB/stats, orders where all of them are 0 left out.
nlohmann::ordered_json CountersJson(const workload::ReplayResult& r) {
  const auto& c = r.counters;
  std::array<bool, alloc::kMaxOrders> order_used{};
  alloc::ForEachCounter(c, [&](const alloc::CounterInfo& info, std::span<const uint64_t> v) {
    if (info.summary != alloc::CounterSummary::kSummary ||
        info.shape != alloc::CounterShape::kPerOrder)
      return;
    for (int k = 0; k <= r.options.cluster_shift && k < alloc::kMaxOrders; ++k)
      order_used[k] = order_used[k] || v[k] != 0;
  });
  nlohmann::ordered_json cj;
  alloc::ForEachCounter(c, [&](const alloc::CounterInfo& info, std::span<const uint64_t> v) {
    if (info.summary != alloc::CounterSummary::kSummary) return;
    if (info.shape == alloc::CounterShape::kScalar) {
      cj[std::string(info.name)] = v[0];
      return;
    }
    for (int k = 0; k < alloc::kMaxOrders; ++k)
      if (order_used[k])
        cj["hugepages-" + std::to_string(4 << k) + "kB"][std::string(info.name)] = v[k];
  });
  cj["skipped_cache_drops"] = r.summary.skipped_cache_drops;
  return cj;
}

}  // namespace

nlohmann::ordered_json ReplayJson(const workload::ReplayResult& r) {
  const auto& s = r.summary;
  nlohmann::ordered_json j;
  j["trace"] = Printable(r.options.trace, kPathMax);  // a path: any bytes
  j["policy"] = r.options.policy.name;
  j["knobs"] = KnobsJson(r.options.policy);
  j["cpus"] = r.options.cpus;
  j["scan_base_seed"] = r.options.scan_base_seed;
  j["cluster_size"] = r.cluster_size;
  j["records"] = s.records;
  j["folios"] = s.folios;
  j["pages_placed"] = s.pages_placed;
  j["pages_unplaced"] = s.pages_unplaced;
  j["runs_per_folio"] = workload::RunsPerFolio(s);
  j["expected"] = s.expected;
  j["agree"] = s.agree;
  j["agreement"] = workload::Agreement(s);
  // Built apart and moved in: j is an ordered_json (a vector of members), so
  // a reference into it dangles once a later key makes it grow.
  nlohmann::ordered_json dis = nlohmann::ordered_json::array();
  for (const auto& d : s.disagreements)
    dis.push_back({{"line", d.line},
                   {"folio", d.folio},
                   {"page", d.page},
                   {"expected_dev", d.expected_dev},
                   {"expected_offset", d.expected_offset},
                   {"got", d.got}});
  j["disagreements"] = std::move(dis);
  if (s.foreign_expected || s.foreign_released)  // `foreign` records (kernel run's interference)
    j["foreign"] = {{"slots", s.foreign_expected},
                    {"agree", s.foreign_agree},
                    {"released", s.foreign_released}};
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& [id, type, d] : r.devices)
    dj.push_back({{"dev", id},
                  {"type", type},
                  {"pages", d.pages},
                  {"inuse", d.inuse},
                  {"prio", d.prio},
                  {"free_clusters", d.free_clusters},
                  {"nonfull_clusters", d.nonfull_clusters},
                  {"frag_clusters", d.frag_clusters},
                  {"full_clusters", d.full_clusters},
                  {"discard_clusters", d.discard_clusters}});
  j["counters"] = CountersJson(r);
  j["devices"] = std::move(dj);
  j["invariants"] = r.invariants;
  return j;
}

std::string ReplayCsv(const workload::ReplayResult& r) {
  const auto& s = r.summary;
  return fmt::format(
      "records,folios,pages_placed,pages_unplaced,runs_per_folio,expected,agree,pswpout\n"
      "{},{},{},{},{:.3f},{},{},{}\n",
      s.records, s.folios, s.pages_placed, s.pages_unplaced, workload::RunsPerFolio(s), s.expected,
      s.agree, r.counters.pswpout);
}

std::string ReplayText(const workload::ReplayResult& r) {
  const auto& s = r.summary;
  const auto& o = r.options;
  std::string out =
      fmt::format("replay {}: {} CPUs, {} slots per cluster\n{}\n", Printable(o.trace, kPathMax),
                  o.cpus, r.cluster_size, o.policy.Describe());
  out +=
      fmt::format("records {}  folios {}  pages placed {}  unplaced {}  runs/folio {:.3f}\n",
                  s.records, s.folios, s.pages_placed, s.pages_unplaced, workload::RunsPerFolio(s));
  out += fmt::format("pswpout {}\n", r.counters.pswpout);
  if (s.foreign_expected || s.foreign_released)
    out += fmt::format(
        "foreign slots (taken outside the trace) {}: the model put {} where the reference did; "
        "{} given back\n",
        s.foreign_expected, s.foreign_agree, s.foreign_released);
  const auto cj = CountersJson(r);
  for (auto it = cj.begin(); it != cj.end(); ++it) {
    if (it.key().rfind("hugepages-", 0) != 0) continue;
    out += it.key() + "/stats:";
    for (auto row = it.value().begin(); row != it.value().end(); ++row)
      out += fmt::format(" {} {}", row.key(), row.value().get<uint64_t>());
    out += "\n";
  }
  constexpr auto kRow = "{:>4} {:>6} {:>10} {:>9} {:>6} {:>8} {:>6} {:>6} {:>8}\n";
  out += fmt::format(kRow, "dev", "prio", "pages", "inuse", "free", "nonfull", "frag", "full",
                     "discard");
  for (const auto& [id, type, d] : r.devices)
    out += fmt::format(kRow, id, d.prio, d.pages, d.inuse, d.free_clusters, d.nonfull_clusters,
                       d.frag_clusters, d.full_clusters, d.discard_clusters);
  if (s.expected) {
    out += fmt::format("placement agreement: {}/{} ({:.2f}%)\n", s.agree, s.expected,
                       100.0 * static_cast<double>(s.agree) / static_cast<double>(s.expected));
    for (const auto& d : s.disagreements)
      out += fmt::format("  {}:{}: folio {} page {}: expected dev {} offset {}, got {}\n",
                         Printable(o.trace, kPathMax), d.line, d.folio, d.page, d.expected_dev,
                         d.expected_offset, d.got);
  }
  out += fmt::format("invariants: {}\n", r.invariants);
  return out;
}

}  // namespace swaplab::report
