// `swaplab demo`: a built-in allocation churn on one simulated device, run
// with every policy preset side by side; prints the kernel's counters and
// the cluster lists. The default job until `swaplab reproduce` lands.
#include "demo.h"

#include <fmt/core.h>

#include <chrono>
#include <memory>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy_arg.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::tools {

using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;

CLI::App* AddDemo(CLI::App& app, DemoOptions& o) {
  CLI::App* c = app.add_subcommand("demo", "allocation churn on a simulated device, every policy");
  c->add_option("--policy", o.policy, "run only this preset (default: every preset side by side)");
  AddKnobOption(c, &o.knobs);
  c->add_option("--size", o.size_mib, "device size in MiB")->check(CLI::Range(8, 1 << 20));
  c->add_option("--seed", o.seed, "random seed");
  c->add_option("--ops", o.ops, "swap-out operations")->check(CLI::Range(1, 100000000));
  c->add_flag("--json", o.json, "one JSON document on stdout");
  return c;
}

namespace {

struct Outcome {
  std::string policy;
  alloc::Policy effective;
  alloc::SwapCounters counters;
  alloc::DeviceInfo dev;
  std::string invariants;
  double seconds = 0;
};

// The churn: swap out 4 KiB and 64 KiB folios (64 KiB split on failure as
// reclaim does), keep each page referenced once (its page-table entry),
// drop the swap cache as reclaim would, and free random 4 KiB pages of old
// folios so usage stays around 70% with holes everywhere.
Outcome RunOne(const alloc::Policy& policy, const DemoOptions& o) {
  alloc::SystemOptions so;
  so.policy = policy;
  so.nr_cpus = 2;
  alloc::SwapSystem sys(so);
  alloc::SwaponOptions d;
  d.name = "demo0";
  d.pages = o.size_mib * 256;
  d.ssd = true;
  d.blkdev = true;
  const int type = *sys.Swapon(d);
  std::mt19937_64 rng(o.seed);
  std::vector<SwapEntry> held;  // pages still referenced by a page table
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t target = d.pages * 7 / 10;
  auto place = [&](Folio& f) -> bool {
    if (!f.in_swap_cache()) return false;
    FolioLockGuard g(f);
    (void)sys.FolioDupSwap(f);  // unmap: one reference per page
    for (int p = 0; p < f.nr_pages(); ++p)
      held.push_back(SwapEntry{f.swap().type, f.swap().offset + static_cast<uint64_t>(p)});
    (void)sys.SwapCacheDelFolio(f);  // written back and reclaimed
    return true;
  };
  for (uint64_t i = 0; i < o.ops; ++i) {
    const int cpu = static_cast<int>(rng() % 2);
    const int order = (rng() % 4 == 0) ? 4 : 0;
    Folio f(order);
    std::vector<std::unique_ptr<Folio>> pages;
    std::vector<Folio*> split;
    if (order > 0) {
      for (int p = 0; p < (1 << order); ++p) {
        pages.push_back(std::make_unique<Folio>(0));
        split.push_back(pages.back().get());
      }
    }
    {
      FolioLockGuard g(f);
      (void)sys.SwapOutFolio(cpu, f, split);
    }
    place(f);
    for (auto& p : pages) place(*p);
    while (held.size() > target) {
      const size_t victim = rng() % held.size();
      (void)sys.SwapPutEntriesDirect(held[victim], 1);
      held[victim] = held.back();
      held.pop_back();
    }
  }
  Outcome out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.policy = policy.name;
  out.effective = policy;
  out.counters = sys.counters();
  out.dev = *sys.Device(type);
  out.invariants = sys.CheckInvariants().ToString();
  return out;
}

}  // namespace

int RunDemo(const DemoOptions& o) {
  std::vector<alloc::Policy> policies;
  const std::vector<std::string> names =
      o.policy.empty() ? alloc::Policy::PresetNames() : std::vector<std::string>{o.policy};
  for (const std::string& name : names) {
    auto p = PolicyFromArgs(name, o.knobs);
    if (!p.ok()) {
      fmt::print(stderr, "swaplab demo: {}\n", p.status().message());
      return 2;
    }
    policies.push_back(*p);
  }
  std::vector<Outcome> rows;
  for (const alloc::Policy& p : policies) rows.push_back(RunOne(p, o));
  if (o.json) {
    nlohmann::ordered_json d;
    d["device_mib"] = o.size_mib;
    d["ops"] = o.ops;
    d["seed"] = o.seed;
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const Outcome& r : rows) {
      runs.push_back({{"policy", r.policy},
                      {"knobs", KnobsJson(r.effective)},
                      {"swpout_4kB", r.counters.swpout[0]},
                      {"swpout_64kB", r.counters.swpout[4]},
                      {"swpout_fallback_64kB", r.counters.swpout_fallback[4]},
                      {"pswpout", r.counters.pswpout},
                      {"fast_path_hits", r.counters.fast_path_hits},
                      {"inuse", r.dev.inuse},
                      {"free_clusters", r.dev.free_clusters},
                      {"nonfull_clusters", r.dev.nonfull_clusters},
                      {"frag_clusters", r.dev.frag_clusters},
                      {"full_clusters", r.dev.full_clusters},
                      {"invariants", r.invariants},
                      {"seconds", r.seconds}});
    }
    d["runs"] = std::move(runs);
    nlohmann::ordered_json j;
    j["demo"] = std::move(d);
    fmt::print("{}\n", j.dump());
    return 0;
  }
  fmt::print("swaplab demo: {} MiB SSD block device (no discard), 2 CPUs, {} swap-outs "
             "(1 in 4 is 64 KiB), random 4 KiB frees keep ~70% used; seed {}\n\n",
             o.size_mib, o.ops, o.seed);
  fmt::print("{:<12} {:>10} {:>10} {:>12} {:>9} {:>10} {:>6} {:>8} {:>6} {:>6}\n", "policy",
             "4kB/swpout", "64kB/swpout", "64kB/fallback", "fallback%", "fast-path", "free", "nonfull",
             "frag", "full");
  for (const Outcome& r : rows) {
    const double tot = static_cast<double>(r.counters.swpout[4] + r.counters.swpout_fallback[4]);
    fmt::print("{:<12} {:>10} {:>10} {:>12} {:>8.1f}% {:>10} {:>6} {:>8} {:>6} {:>6}\n", r.policy,
               r.counters.swpout[0], r.counters.swpout[4], r.counters.swpout_fallback[4],
               tot > 0 ? 100.0 * static_cast<double>(r.counters.swpout_fallback[4]) / tot : 0.0,
               r.counters.fast_path_hits, r.dev.free_clusters, r.dev.nonfull_clusters,
               r.dev.frag_clusters, r.dev.full_clusters);
  }
  for (const Outcome& r : rows) fmt::print("{}\n", r.effective.Describe());
  fmt::print("\nclusters by list at the end; invariants after each run: ");
  bool ok = true;
  for (const Outcome& r : rows) ok &= r.invariants == "ok";
  fmt::print("{}\n", ok ? "all hold" : "VIOLATED");
  for (const Outcome& r : rows) {
    if (r.invariants != "ok") fmt::print("  {}: {}\n", r.policy, r.invariants);
  }
  return ok ? 0 : 1;
}

}  // namespace swaplab::tools
