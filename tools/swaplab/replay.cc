// `swaplab replay TRACE`: run a trace on the model, report the kernel's
// counters, the layout and the agreement with `expect` lines.
#include "replay.h"

#include <fmt/core.h>

#include <array>
#include <span>

#include <nlohmann/json.hpp>

#include "policy_arg.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/trace.h"
#include "swaplab/workload/trace_runner.h"

namespace swaplab::tools {

CLI::App* AddReplay(CLI::App& app, ReplayOptions& o) {
  CLI::App* c = app.add_subcommand("replay", "run a trace, report counters, layout and agreement with expect lines");
  c->add_option("trace", o.trace, "trace file (swaplab-trace 1)")->required();
  c->add_option("--policy", o.policy, "policy preset: linux-6.14, linux-6.15, linux-6.18, mm-new")->capture_default_str();
  AddKnobOption(c, &o.knobs);
  c->add_option("--cpus", o.cpus, "CPUs in the model")->check(CLI::Range(1, 1024));
  c->add_option("--cluster-shift", o.cluster_shift, "log2 slots per cluster")->check(CLI::Range(1, 15));
  c->add_flag("--json", o.json, "one JSON document on stdout");
  c->add_flag("--csv", o.csv, "CSV on stdout");
  c->add_flag("--check", o.check, "check every invariant after every record (slow)");
  return c;
}

int RunReplay(const ReplayOptions& o) {
  auto policy = PolicyFromArgs(o.policy, o.knobs);
  if (!policy.ok()) {
    fmt::print(stderr, "swaplab replay: {}\n", policy.status().message());
    return 2;
  }
  alloc::SystemOptions so;
  so.policy = *policy;
  so.nr_cpus = o.cpus;
  so.cluster_shift = o.cluster_shift;
  alloc::SwapSystem sys(so);
  auto reader = workload::TraceReader::Open(o.trace);
  if (!reader.ok()) {
    fmt::print(stderr, "swaplab replay: {}\n", reader.status().message());
    return 2;
  }
  workload::TraceRunner runner(sys);
  workload::TraceRecord rec;
  for (;;) {
    auto more = (*reader)->Next(&rec);
    if (!more.ok()) {
      fmt::print(stderr, "swaplab replay: {}\n", more.status().message());
      return 2;
    }
    if (!*more) break;
    if (Status st = runner.Apply(rec, o.trace); !st.ok()) {
      fmt::print(stderr, "swaplab replay: {}\n", st.message());
      return 2;
    }
    if (o.check) {
      if (auto inv = sys.CheckInvariants(); !inv.ok()) {
        fmt::print(stderr, "swaplab replay: {}:{}: invariant {} broken after '{}'\n", o.trace, rec.line,
                   inv.ToString(), workload::FormatRecord(rec));
        return 1;
      }
    }
  }
  const auto& s = runner.summary();
  const auto c = sys.counters();
  const auto inv = sys.CheckInvariants();
  nlohmann::ordered_json j;
  j["trace"] = o.trace;
  j["policy"] = policy->name;
  j["knobs"] = KnobsJson(*policy);
  j["cpus"] = o.cpus;
  j["cluster_size"] = sys.cluster_size();
  j["records"] = s.records;
  j["folios"] = s.folios;
  j["pages_placed"] = s.pages_placed;
  j["pages_unplaced"] = s.pages_unplaced;
  j["runs_per_folio"] = s.folios ? static_cast<double>(s.folio_runs) / static_cast<double>(s.folios) : 0.0;
  j["expected"] = s.expected;
  j["agree"] = s.agree;
  j["agreement"] = s.expected ? static_cast<double>(s.agree) / static_cast<double>(s.expected) : 1.0;
  // Built apart and moved in: j is an ordered_json (a vector of members), so
  // a reference into it dangles once a later key makes it grow.
  nlohmann::ordered_json dis = nlohmann::ordered_json::array();
  for (const auto& d : s.disagreements)
    dis.push_back({{"line", d.line}, {"folio", d.folio}, {"page", d.page}, {"expected_dev", d.expected_dev},
                   {"expected_offset", d.expected_offset}, {"got", d.got}});
  j["disagreements"] = std::move(dis);
  // The summary rows of the counter table; per-order rows grouped by order
  // as the kernel's hugepages-<size>/stats, orders where all are 0 left out.
  std::array<bool, alloc::kMaxOrders> order_used{};
  alloc::ForEachCounter(c, [&](const alloc::CounterInfo& info, std::span<const uint64_t> v) {
    if (info.summary != alloc::CounterSummary::kSummary || info.shape != alloc::CounterShape::kPerOrder) return;
    for (int k = 0; k <= o.cluster_shift && k < alloc::kMaxOrders; ++k) order_used[k] = order_used[k] || v[k] != 0;
  });
  nlohmann::ordered_json cj;
  alloc::ForEachCounter(c, [&](const alloc::CounterInfo& info, std::span<const uint64_t> v) {
    if (info.summary != alloc::CounterSummary::kSummary) return;
    if (info.shape == alloc::CounterShape::kScalar) {
      cj[std::string(info.name)] = v[0];
      return;
    }
    for (int k = 0; k < alloc::kMaxOrders; ++k)
      if (order_used[k]) cj["hugepages-" + std::to_string(4 << k) + "kB"][std::string(info.name)] = v[k];
  });
  cj["skipped_cache_drops"] = s.skipped_cache_drops;
  nlohmann::ordered_json dj = nlohmann::ordered_json::array();
  for (const auto& [id, type] : runner.devices()) {
    auto d = sys.Device(type);
    if (!d.ok()) continue;
    dj.push_back({{"dev", id}, {"type", type}, {"pages", d->pages}, {"inuse", d->inuse}, {"prio", d->prio},
                  {"free_clusters", d->free_clusters}, {"nonfull_clusters", d->nonfull_clusters},
                  {"frag_clusters", d->frag_clusters}, {"full_clusters", d->full_clusters},
                  {"discard_clusters", d->discard_clusters}});
  }
  j["counters"] = cj;
  j["devices"] = dj;
  j["invariants"] = inv.ToString();
  const int rc = inv.ok() ? 0 : 1;
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return rc;
  }
  if (o.csv) {
    fmt::print("records,folios,pages_placed,pages_unplaced,runs_per_folio,expected,agree,pswpout\n");
    fmt::print("{},{},{},{},{:.3f},{},{},{}\n", s.records, s.folios, s.pages_placed, s.pages_unplaced,
               j["runs_per_folio"].get<double>(), s.expected, s.agree, c.pswpout);
    return rc;
  }
  fmt::print("replay {}: {} CPUs, {} slots per cluster\n{}\n", o.trace, o.cpus, sys.cluster_size(),
             policy->Describe());
  fmt::print("records {}  folios {}  pages placed {}  unplaced {}  runs/folio {:.3f}\n", s.records, s.folios,
             s.pages_placed, s.pages_unplaced, j["runs_per_folio"].get<double>());
  fmt::print("pswpout {}\n", c.pswpout);
  for (auto it = cj.begin(); it != cj.end(); ++it) {
    if (it.key().rfind("hugepages-", 0) != 0) continue;
    fmt::print("{}/stats:", it.key());
    for (auto row = it.value().begin(); row != it.value().end(); ++row)
      fmt::print(" {} {}", row.key(), row.value().get<uint64_t>());
    fmt::print("\n");
  }
  fmt::print("{:>4} {:>6} {:>10} {:>9} {:>6} {:>8} {:>6} {:>6} {:>8}\n", "dev", "prio", "pages", "inuse", "free",
             "nonfull", "frag", "full", "discard");
  for (const auto& d : dj)
    fmt::print("{:>4} {:>6} {:>10} {:>9} {:>6} {:>8} {:>6} {:>6} {:>8}\n", d["dev"].get<uint64_t>(),
               d["prio"].get<int>(), d["pages"].get<uint64_t>(), d["inuse"].get<uint64_t>(),
               d["free_clusters"].get<uint64_t>(), d["nonfull_clusters"].get<uint64_t>(),
               d["frag_clusters"].get<uint64_t>(), d["full_clusters"].get<uint64_t>(),
               d["discard_clusters"].get<uint64_t>());
  if (s.expected) {
    fmt::print("placement agreement: {}/{} ({:.2f}%)\n", s.agree, s.expected,
               100.0 * static_cast<double>(s.agree) / static_cast<double>(s.expected));
    for (const auto& d : s.disagreements)
      fmt::print("  {}:{}: folio {} page {}: expected dev {} offset {}, got {}\n", o.trace, d.line, d.folio,
                 d.page, d.expected_dev, d.expected_offset, d.got);
  }
  fmt::print("invariants: {}\n", inv.ToString());
  return rc;
}

}  // namespace swaplab::tools
