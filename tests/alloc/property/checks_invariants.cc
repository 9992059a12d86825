// SPDX-License-Identifier: MIT
// The check after every step (src/alloc/invariants.cc): CheckInvariants(),
// then every device, cluster flag and slot against the model, the global
// page counts, every folio's cache state and placement, and that counters
// never decrease.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

namespace {

// Triage only: SWAPLAB_PROPERTY_IGNORE_INVARIANT=D4 lets the properties run
// past a known CheckInvariants() failure while its fix is pending. Never set
// in CI; a report found this way hides any other violation at that step.
const std::string& IgnoredInvariant() {
  static const std::string id = [] {
    const char* v = std::getenv("SWAPLAB_PROPERTY_IGNORE_INVARIANT");
    return std::string(v ? v : "");
  }();
  return id;
}

}  // namespace

void Harness::CheckAll() {
  const InvariantReport inv = sys_->CheckInvariants();
  HARNESS_CHECK(inv.ok() || (!IgnoredInvariant().empty() && inv.id == IgnoredInvariant()),
                "CheckInvariants(): " + inv.ToString());

  std::vector<int> active = sys_->active_devices();
  std::sort(active.begin(), active.end());
  std::vector<int> want;
  for (const auto& [t, d] : devs_) want.push_back(t);
  HARNESS_CHECK(active == want, "active_devices() does not match the devices swapped on");

  const bool hib_entry = policy_.hibernation_hib_entry;
  int64_t nr = 0, total = 0;
  scan_.clear();
  for (const auto& [t, d] : devs_) {
    const std::string dn = "device " + std::to_string(t) + ": ";
    auto di = sys_->Device(t);
    HARNESS_CHECK(di.ok(), dn + "Device() failed: " + di.status().ToString());
    const DeviceInfo& I = *di;
    const uint64_t nclusters = d.slots.size() / C();
    HARNESS_CHECK(I.type == t && I.name == d.opts.name, dn + "identity " + DeviceToString(I));
    HARNESS_CHECK(I.max == d.max,
                  dn + "max " + std::to_string(I.max) + ", want " + std::to_string(d.max));
    HARNESS_CHECK(I.pages == d.pages, dn + "pages " + std::to_string(I.pages) + ", want " +
                                          std::to_string(d.pages) + " (D2)");
    HARNESS_CHECK(I.nr_clusters == nclusters, dn + "nr_clusters " + std::to_string(I.nr_clusters));
    HARNESS_CHECK(I.ssd == d.opts.ssd && I.blkdev == d.opts.blkdev, dn + "ssd/blkdev flags");
    HARNESS_CHECK(I.writeok, dn + "not WRITEOK");
    HARNESS_CHECK(I.page_discard == d.page_discard() && I.area_discard == d.area_discard(),
                  dn + "discard flags " + DeviceToString(I) + " (§5.1 step 7)");
    HARNESS_CHECK(I.hibernation_pinned == d.pinned,
                  dn + "hibernation_pinned " + std::to_string(I.hibernation_pinned));
    if (d.opts.prio) {
      HARNESS_CHECK(I.prio == *d.opts.prio, dn + "prio " + std::to_string(I.prio));
    } else if (policy_.default_prio_round_robin) {
      HARNESS_CHECK(I.prio == -1,
                    dn + "default prio " + std::to_string(I.prio) + ", want -1 (§5.1 step 8)");
    } else {
      HARNESS_CHECK(I.prio < -1,
                    dn + "default prio " + std::to_string(I.prio) + ", want -2, -3, ... (§10.3)");
    }
    HARNESS_CHECK(I.isolated_clusters == 0, dn + "a cluster is off every list at quiescence (C3)");
    HARNESS_CHECK(I.free_clusters + I.nonfull_clusters + I.frag_clusters + I.full_clusters +
                          I.discard_clusters ==
                      nclusters,
                  dn + "list sizes do not add up: " + DeviceToString(I));

    Scan sc;
    sc.free_clusters = I.free_clusters;
    sc.on_avail = I.on_avail_list;
    sc.prio = I.prio;
    std::vector<ClusterFlag> flags(nclusters);
    for (uint64_t i = 0; i < nclusters; ++i) {
      auto ci = sys_->Cluster(t, i);
      HARNESS_CHECK(ci.ok(), dn + "Cluster(" + std::to_string(i) + ") failed");
      flags[i] = ci->flag;
      if (ci->flag == ClusterFlag::kFull) sc.full_clusters.insert(i);
    }
    uint64_t held = 0;
    for (uint64_t off = 0; off < d.slots.size(); ++off) {
      auto si = sys_->Slot({t, off});
      HARNESS_CHECK(si.ok(),
                    dn + "Slot(" + std::to_string(off) + ") failed: " + si.status().ToString());
      const SlotInfo& s = *si;
      const MSlot& m = d.slots[off];
      auto where = [&] {
        return "slot " + ToString({t, off}) + " is " + Describe(s) + ", model says " + Describe(m);
      };
      bool match = false;
      switch (m.kind) {
        case MSlot::Kind::kBad:
          match = s.kind == SlotKind::kBad;
          break;
        case MSlot::Kind::kFree:
          if (s.kind == SlotKind::kEmpty) {
            match = s.count == 0;
            ++sc.empty;
            if (flags[off / C()] != ClusterFlag::kDiscard) ++sc.empty_not_discard;
          } else if (policy_.slot_cache && s.kind == SlotKind::kCached && s.folio == nullptr) {
            match = s.count == 0;  // held by a per-CPU slot cache (§10.1)
            ++held;
          }
          break;
        case MSlot::Kind::kCached:
          match = s.kind == SlotKind::kCached && s.count == m.count &&
                  s.folio == folios_[m.folio].f.get();
          break;
        case MSlot::Kind::kShadow:
          match = s.kind == SlotKind::kShadow && s.count == m.count;
          break;
        case MSlot::Kind::kHib:
          match =
              hib_entry ? s.kind == SlotKind::kHib : (s.kind == SlotKind::kShadow && s.count == 1);
          break;
      }
      HARNESS_CHECK(match, where());
    }
    auto past = sys_->Slot({t, d.slots.size()});
    HARNESS_CHECK(!past.ok(), dn + "Slot() past the last cluster succeeded");
    const uint64_t used = d.Used();
    HARNESS_CHECK(I.inuse == used + held, dn + "inuse " + std::to_string(I.inuse) + ", model " +
                                              std::to_string(used) + " used + " +
                                              std::to_string(held) + " in slot caches (D1)");
    nr += static_cast<int64_t>(I.pages) - static_cast<int64_t>(I.inuse);
    total += static_cast<int64_t>(I.pages);
    scan_[t] = std::move(sc);
  }
  HARNESS_CHECK(sys_->nr_swap_pages() == nr,
                "nr_swap_pages " + std::to_string(sys_->nr_swap_pages()) +
                    ", Σ(pages − inuse) = " + std::to_string(nr) + " (G2)");
  HARNESS_CHECK(sys_->total_swap_pages() == total,
                "total_swap_pages " + std::to_string(sys_->total_swap_pages()) +
                    ", Σ pages = " + std::to_string(total) + " (G1)");
  HARNESS_CHECK(sys_->storage_suspended() == suspended_, "storage_suspended()");
  if (cfg_.inline_work) {
    HARNESS_CHECK(!sys_->HasDeferredWork(),
                  "deferred work left pending with run_deferred_work_inline");
  }

  for (size_t i = 0; i < folios_.size(); ++i) {
    const MFolio& mf = folios_[i];
    const Folio& f = *mf.f;
    auto who = [i] { return "folio#" + std::to_string(i); };
    HARNESS_CHECK(!f.locked(), who() + " is still locked");
    HARNESS_CHECK(f.in_swap_cache() == mf.cached,
                  who() + (mf.cached ? " left the swap cache" : " is in the swap cache") +
                      " (model entry " + ToString(mf.entry) + ", folio.swap() " +
                      ToString(f.swap()) + ")");
    if (!mf.cached) continue;
    HARNESS_CHECK(f.swap() == mf.entry,
                  who() + " swap() " + ToString(f.swap()) + ", model " + ToString(mf.entry));
    const uint64_t n = f.nr_pages();
    HARNESS_CHECK(
        mf.entry.offset % n == 0 && mf.entry.offset / C() == (mf.entry.offset + n - 1) / C(),
        who() + " is not aligned inside one cluster (S4)");
  }

  std::vector<uint64_t> now = CounterValues(sys_->counters());
  for (size_t i = 0; i < now.size(); ++i) {
    HARNESS_CHECK(now[i] >= last_counters_[i], "counter #" + std::to_string(i) +
                                                   " went down from " +
                                                   std::to_string(last_counters_[i]) + " to " +
                                                   std::to_string(now[i]) + " (§7: monotonic)");
  }
  last_counters_ = std::move(now);
}

}  // namespace swaplab::alloc::model
