// SPDX-License-Identifier: MIT
// `swaplab demo`'s result (demo_report.h).
#include "swaplab/report/demo_report.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "swaplab/report/policy_json.h"

namespace swaplab::report {

bool DemoInvariantsHold(const workload::DemoResult& r) {
  bool ok = true;
  for (const auto& run : r.runs) ok &= run.invariants == "ok";
  return ok;
}

std::string DemoJson(const workload::DemoResult& r) {
  nlohmann::ordered_json d;
  d["device_mib"] = r.options.size_mib;
  d["ops"] = r.options.ops;
  d["seed"] = r.options.seed;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& x : r.runs) {
    runs.push_back({{"policy", x.policy},
                    {"knobs", KnobsJson(x.effective)},
                    {"swpout_4kB", x.counters.swpout[0]},
                    {"swpout_64kB", x.counters.swpout[4]},
                    {"swpout_fallback_64kB", x.counters.swpout_fallback[4]},
                    {"pswpout", x.counters.pswpout},
                    {"fast_path_hits", x.counters.fast_path_hits},
                    {"inuse", x.dev.inuse},
                    {"free_clusters", x.dev.free_clusters},
                    {"nonfull_clusters", x.dev.nonfull_clusters},
                    {"frag_clusters", x.dev.frag_clusters},
                    {"full_clusters", x.dev.full_clusters},
                    {"invariants", x.invariants},
                    {"seconds", x.seconds}});
  }
  d["runs"] = std::move(runs);
  nlohmann::ordered_json j;
  j["demo"] = std::move(d);
  return j.dump() + "\n";
}

std::string DemoText(const workload::DemoResult& r) {
  const auto& o = r.options;
  std::string out = fmt::format(
      "swaplab demo: {} MiB SSD block device (no discard), 2 CPUs, {} swap-outs "
      "(1 in 4 is 64 KiB), random 4 KiB frees keep ~70% used; seed {}\n\n",
      o.size_mib, o.ops, o.seed);
  out += fmt::format("{:<12} {:>10} {:>10} {:>12} {:>9} {:>10} {:>6} {:>8} {:>6} {:>6}\n", "policy",
                     "4kB/swpout", "64kB/swpout", "64kB/fallback", "fallback%", "fast-path", "free",
                     "nonfull", "frag", "full");
  for (const auto& x : r.runs) {
    const auto& c = x.counters;
    const double tot = static_cast<double>(c.swpout[4] + c.swpout_fallback[4]);
    out += fmt::format("{:<12} {:>10} {:>10} {:>12} {:>8.1f}% {:>10} {:>6} {:>8} {:>6} {:>6}\n",
                       x.policy, c.swpout[0], c.swpout[4], c.swpout_fallback[4],
                       tot > 0 ? 100.0 * static_cast<double>(c.swpout_fallback[4]) / tot : 0.0,
                       c.fast_path_hits, x.dev.free_clusters, x.dev.nonfull_clusters,
                       x.dev.frag_clusters, x.dev.full_clusters);
  }
  for (const auto& x : r.runs) out += x.effective.Describe() + "\n";
  const bool ok = DemoInvariantsHold(r);
  out += fmt::format("\nclusters by list at the end; invariants after each run: {}\n",
                     ok ? "all hold" : "VIOLATED");
  for (const auto& x : r.runs)
    if (x.invariants != "ok") out += fmt::format("  {}: {}\n", x.policy, x.invariants);
  return out;
}

}  // namespace swaplab::report
