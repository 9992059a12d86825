// SPDX-License-Identifier: MIT
// seed 001's two layouts on a real kernel (include/swaplab/vm/vm_reproduce.h).
#include "swaplab/vm/vm_reproduce.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace swaplab::vm {

Result<HibernateOptions> SeedLayoutOptions(const SeedTableOptions& o, workload::RfcLayout layout) {
  if (!(o.scale >= kMinSeedScale && o.scale <= kMaxSeedScale))
    return Status(
        -EINVAL, fmt::format("scale {:.6g} is outside {:.6g}..{:.6g} (an image of 40 MiB .. 1 GiB)",
                             o.scale, kMinSeedScale, kMaxSeedScale));
  if (layout != workload::RfcLayout::kShuffled && layout != workload::RfcLayout::kHoles)
    return Status(-EINVAL, "seed 001's tables are the shuffled and holes layouts");
  constexpr uint64_t kMiB = 1ull << 20;
  auto mib = [&](uint64_t bytes) {
    return std::max<uint64_t>(
        1, static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * o.scale / kMiB)));
  };
  HibernateOptions h;
  h.vm = o.vm;
  h.layout = layout;
  h.image_bytes = mib(kSeedImageBytes) * kMiB;
  h.swap_bytes = std::max(
      mib(layout == workload::RfcLayout::kShuffled ? kSeedShuffledSwapBytes : kSeedHolesSwapBytes) *
          kMiB,
      h.image_bytes + kGuestOwnSwapBytes);
  h.compress = o.compress;
  h.resume = true;
  h.seed = o.seed;
  h.policy = o.policy;
  h.io = o.io;
  // The snapshot needs as much free memory again as the image, and the
  // kernel and the agent their own: three times the image, at least 384.
  if (h.vm.mem_mib <= 0)
    h.vm.mem_mib = static_cast<int>(std::max<uint64_t>(384, 3 * (h.image_bytes / kMiB)));
  return h;
}

Result<SeedTableReport> RunSeedTable(const SeedTableOptions& o,
                                     const volatile std::sig_atomic_t* interrupted) {
  SeedTableReport rep;
  rep.options = o;
  for (workload::RfcLayout l : {workload::RfcLayout::kShuffled, workload::RfcLayout::kHoles}) {
    auto h = SeedLayoutOptions(o, l);
    if (!h.ok()) return h.status();
    auto r = RunHibernate(*h, interrupted);
    if (!r.ok())
      return Status(r.status().code(),
                    std::string(workload::Name(l)) + " layout: " + r.status().message());
    rep.layouts.push_back(std::move(*r));
  }
  return rep;
}

std::vector<RfcColumn> RfcColumns() {
  using hibernate::SlotSourceKind;
  const std::string nf = kNonfullFirstParam;
  const std::vector<std::string> knobs = {kNonfullFirstSearchKnob};
  return {
      {"base", nf, knobs, SlotSourceKind::kBase, false},
      {"allocator", nf + " hibernate_alloc=clusters", knobs, SlotSourceKind::kFreeClustersSorted,
       false},
      {"allocator + bio", nf + " hibernate_alloc=clusters hibernate_bio=runs", knobs,
       SlotSourceKind::kFreeClustersSorted, true},
  };
}

Result<RfcTableReport> RunRfcTable(const RfcTableOptions& o,
                                   const volatile std::sig_atomic_t* interrupted,
                                   const std::function<void(size_t, size_t)>& done) {
  if (o.runs < 1 || o.runs > kMaxRfcRuns)
    return Status(-EINVAL, fmt::format("--runs {}: expected 1..{}", o.runs, kMaxRfcRuns));
  if (o.columns.empty()) return Status(-EINVAL, "no column to run");
  RfcTableReport rep;
  rep.options = o;
  const size_t total = 2 * o.columns.size() * static_cast<size_t>(o.runs);
  size_t k = 0;
  for (workload::RfcLayout l : {workload::RfcLayout::kShuffled, workload::RfcLayout::kHoles}) {
    auto h = SeedLayoutOptions(o.table, l);
    if (!h.ok()) return h.status();
    RfcLayoutTable t;
    t.layout = l;
    for (const RfcColumn& c : o.columns) {
      RfcCell cell;
      cell.column = c;
      HibernateOptions ho = *h;
      ho.model_source = c.model_source;
      for (const auto& k : c.model_knobs) ho.knobs.push_back(k);
      if (!c.append.empty()) ho.vm.append += (ho.vm.append.empty() ? "" : " ") + c.append;
      for (int run = 0; run < o.runs; ++run) {
        auto r = RunHibernate(ho, interrupted);
        if (!r.ok())
          return Status(r.status().code(),
                        fmt::format("{} layout, {}, run {}: {}", workload::Name(l), c.name, run + 1,
                                    r.status().message()));
        cell.runs.push_back(std::move(*r));
        if (done) done(++k, total);
      }
      t.cells.push_back(std::move(cell));
    }
    rep.layouts.push_back(std::move(t));
  }
  return rep;
}

}  // namespace swaplab::vm
