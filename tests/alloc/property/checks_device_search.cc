// SPDX-License-Identifier: MIT
// Checks of where a successful allocation landed and when one may fail
// (src/alloc/device_search.cc, allocator spec §2.4): placement over free
// slots, aligned inside one cluster of its order (S4, O1, O3, C5).
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::AcceptAllocation(int fi, const std::string& what) {
  MFolio& mf = folios_[fi];
  const Folio& f = *mf.f;
  const SwapEntry e = f.swap();
  const uint64_t n = f.nr_pages();
  const std::string who = what + " folio#" + std::to_string(fi) + " order " +
                          std::to_string(f.order()) + " got " + ToString(e);
  HARNESS_CHECK(e.valid(), who + ": succeeded but folio.swap() is invalid");
  auto it = devs_.find(e.type);
  HARNESS_CHECK(it != devs_.end(), who + ": not an active device");
  MDevice& d = it->second;
  HARNESS_CHECK(e.offset % n == 0, who + ": not aligned to 2^order (S4)");
  HARNESS_CHECK(e.offset / C() == (e.offset + n - 1) / C(),
                who + ": crosses a cluster boundary (S4)");
  HARNESS_CHECK(e.offset + n <= d.max, who + ": past the end of the device");
  HARNESS_CHECK(f.order() == 0 || d.opts.blkdev, who + ": large folio on a non-BLKDEV device (O3)");
  for (uint64_t p = 0; p < n; ++p) {
    const MSlot& s = d.slots.at(e.offset + p);
    HARNESS_CHECK(s.kind == MSlot::Kind::kFree, who + ": slot " + std::to_string(e.offset + p) +
                                                    " was " + Describe(s) +
                                                    " (O1: overlap with a live allocation)");
    exempt_.insert({e.type, e.offset + p});
  }
  // (6.12, isolate_clusters off, may place a large folio in a cluster of
  // another order: a CPU's next[order] can point into a cluster that was
  // freed and taken for another order, and its scan does not look.)
  if (f.order() > 0 && policy_.isolate_clusters) {
    auto ci = sys_->Cluster(e.type, e.offset / C());
    HARNESS_CHECK(
        ci.ok() && ci->order == f.order(),
        who + ": its cluster has order " + (ci.ok() ? std::to_string(ci->order) : "?") + " (C5)");
  }
  ModelCache(fi, e, /*fresh=*/true);
}

// §2.4: order 0 searches every usable cluster of every avail device and
// cannot fail on a cluster with an EMPTY slot; pending discards are run by
// the synchronous retry (§2.9) or the restart step (§10.2). Not when the
// scan may reclaim (vm_swap_full(), storage not suspended): reclaiming the
// last used slot of the cluster being scanned frees it and the scan gives
// it up (§2.7 step 4) after the free list was already passed.
bool Harness::AllocMayReclaim() const {
  return !suspended_ && 2 * sys_->nr_swap_pages() < sys_->total_swap_pages();
}

bool Harness::Order0MustSucceed() const {
  if (AllocMayReclaim()) return false;
  for (const auto& [t, s] : scan_) {
    if (s.empty > 0) return true;
  }
  return false;
}

// Order k > 0 tries only the first device of the avail list (§2.3); if
// every avail device is a block device with a FREE cluster, whichever is
// first serves it from its free list (§2.4). (6.12: only if it has clusters,
// i.e. is solid state.)
bool Harness::LargeMustSucceed() const {
  bool any = false;
  for (const auto& [t, s] : scan_) {
    if (!s.on_avail) continue;
    if (!devs_.at(t).opts.blkdev || s.free_clusters == 0) return false;
    if (policy_.rotational_swap_map_scan && !devs_.at(t).opts.ssd) return false;
    any = true;
  }
  return any;
}

}  // namespace swaplab::alloc::model
