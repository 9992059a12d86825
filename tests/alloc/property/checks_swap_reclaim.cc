// SPDX-License-Identifier: MIT
// Checks of what reclaim and discard may do (src/alloc/swap_reclaim.cc):
// which folios may leave the swap cache during an operation (§4.2, §4.4,
// §4.6), and that every discard the DiscardSink saw hit whole free
// clusters of a PAGE_DISCARD device (§3.6).
#include <map>
#include <set>
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::ReconcileVanished(Vanish allow, const std::set<int>& expected_new,
                                const std::map<int, std::set<uint64_t>>* full_before,
                                int only_type) {
  for (size_t i = 0; i < folios_.size(); ++i) {
    const int fi = static_cast<int>(i);
    MFolio& mf = folios_[i];
    const bool in_cache = mf.f->in_swap_cache();
    if (!mf.cached) {
      HARNESS_CHECK(!in_cache || expected_new.count(fi),
                    "folio#" + std::to_string(fi) + " appeared in the swap cache at " +
                        ToString(mf.f->swap()) + " without being allocated or added");
      continue;
    }
    if (in_cache) continue;
    const std::string who = "folio#" + std::to_string(fi) + " at " + ToString(mf.entry) +
                            " order " + std::to_string(mf.f->order());
    HARNESS_CHECK(allow != Vanish::kNone, who + " left the swap cache, but " + OpName(kind_) +
                                              " must not reclaim anything");
    HARNESS_CHECK(only_type < 0 || mf.entry.type == only_type,
                  who + " left the swap cache, but only device " + std::to_string(only_type) +
                      " was being swapped off");
    HARNESS_CHECK(AllCountsZero(fi),
                  who + " was reclaimed although a slot still has a count (§4.2 step 5)");
    HARNESS_CHECK(!suspended_, who + " left the swap cache while storage is suspended (§4.6, O4)");
    HARNESS_CHECK(!mf.f->writeback, who + " was reclaimed under writeback (§4.2 step 4)");
    if (allow == Vanish::kFullClusters) {
      const auto it = full_before->find(mf.entry.type);
      HARNESS_CHECK(
          it != full_before->end() && it->second.count(mf.entry.offset / C()),
          who + " was reclaimed by full-cluster reclaim, but its cluster was not FULL (§4.4)");
    }
    HARNESS_CHECK(mf.f->dirty, who + " was reclaimed but not marked dirty (§4.2 step 6)");
    ModelUncache(fi);
  }
}

void Harness::CheckDiscards(uint64_t discarded_before) {
  uint64_t cluster_discards = 0;
  for (const RecordingSink::Rec& r : sink_.recs) {
    const std::string what = "Discard(" + std::to_string(r.type) + ", " + std::to_string(r.first) +
                             ", " + std::to_string(r.nr) + ")";
    HARNESS_CHECK(r.first != 0, what + ": discards the header (§3.6)");
    if (r.type == swapped_on_type_) {  // AREA_DISCARD at swapon (§5.1 step 7)
      const MDevice& d = devs_.at(r.type);
      HARNESS_CHECK(d.area_discard(), what + ": swapon discard without AREA_DISCARD");
      HARNESS_CHECK(r.first + r.nr <= d.max, what + ": past the end of the area");
      continue;
    }
    const MDevice* d = nullptr;
    if (r.type == swapped_off_type_) {
      d = &swapped_off_;
    } else {
      auto it = devs_.find(r.type);
      HARNESS_CHECK(it != devs_.end(), what + ": not an active device");
      d = &it->second;
    }
    HARNESS_CHECK(d->page_discard(), what + ": cluster discard on a device without PAGE_DISCARD");
    HARNESS_CHECK(r.first % C() == 0 && r.nr == C(), what + ": not one whole cluster (§3.6)");
    ++cluster_discards;
    if (r.type == swapped_off_type_) continue;
    for (uint64_t o = r.first; o < r.first + r.nr; ++o) {
      const MSlot& s = d->slots.at(o);
      HARNESS_CHECK(s.kind == MSlot::Kind::kFree || exempt_.count({r.type, o}),
                    what + ": slot " + std::to_string(o) + " is " + Describe(s));
    }
  }
  const uint64_t delta = sys_->counters().clusters_discarded - discarded_before;
  HARNESS_CHECK(delta == cluster_discards,
                "counters.clusters_discarded grew by " + std::to_string(delta) + " but " +
                    std::to_string(cluster_discards) + " cluster discards reached the DiscardSink");
}

}  // namespace swaplab::alloc::model
