// SPDX-License-Identifier: MIT
// `swaplab demo`'s churn (demo.h).
#include "swaplab/workload/demo.h"

#include <chrono>
#include <memory>
#include <random>

namespace swaplab::workload {

using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;

namespace {

// The churn: swap out 4 KiB and 64 KiB folios (64 KiB split on failure as
// reclaim does), keep each page referenced once (its page-table entry),
// drop the swap cache as reclaim would, and free random 4 KiB pages of old
// folios so usage stays around 70% with holes everywhere.
DemoRun RunOne(const alloc::Policy& policy, const DemoOptions& o) {
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
  DemoRun out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.policy = policy.name;
  out.effective = policy;
  out.counters = sys.counters();
  out.dev = *sys.Device(type);
  out.invariants = sys.CheckInvariants().ToString();
  return out;
}

}  // namespace

DemoResult RunDemo(const DemoOptions& o) {
  DemoResult r{o, {}};
  for (const alloc::Policy& p : o.policies) r.runs.push_back(RunOne(p, o));
  return r;
}

}  // namespace swaplab::workload
