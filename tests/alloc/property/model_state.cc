// SPDX-License-Identifier: MIT
// The harness's side of the model: creating folios, entering and leaving
// the swap cache, and picking the folio, slot, order or CPU an operation's
// random words name.
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

int Harness::NewFolio(int order) {
  folios_.push_back(MFolio{std::make_unique<Folio>(order), false, {}});
  return static_cast<int>(folios_.size()) - 1;
}

void Harness::ModelCache(int fi, SwapEntry base, bool fresh) {
  MFolio& mf = folios_[fi];
  MDevice& d = devs_.at(base.type);
  for (int p = 0; p < mf.f->nr_pages(); ++p) {
    MSlot& s = d.slots.at(base.offset + p);
    const uint32_t count = fresh ? 0 : s.count;
    s = MSlot{MSlot::Kind::kCached, count, fi};
  }
  mf.cached = true;
  mf.entry = base;
}

// The folio left the swap cache: slots keep their counts as SHADOW, count-0
// slots are freed (§3.4).
void Harness::ModelUncache(int fi) {
  MFolio& mf = folios_[fi];
  MDevice& d = devs_.at(mf.entry.type);
  for (int p = 0; p < mf.f->nr_pages(); ++p) {
    MSlot& s = d.slots.at(mf.entry.offset + p);
    if (s.count == 0) {
      s = MSlot{};
    } else {
      s.kind = MSlot::Kind::kShadow;
      s.folio = -1;
    }
  }
  mf.cached = false;
  mf.entry = {};
}

bool Harness::AllCountsZero(int fi) const {
  const MFolio& mf = folios_[fi];
  const MDevice& d = devs_.at(mf.entry.type);
  for (int p = 0; p < mf.f->nr_pages(); ++p) {
    if (d.slots.at(mf.entry.offset + p).count != 0) return false;
  }
  return true;
}

std::vector<int> Harness::CachedFolios() const {
  std::vector<int> r;
  for (size_t i = 0; i < folios_.size(); ++i) {
    if (folios_[i].cached) r.push_back(static_cast<int>(i));
  }
  return r;
}

std::vector<SwapEntry> Harness::SlotsWhere(const std::function<bool(const MSlot&)>& pred) const {
  std::vector<SwapEntry> r;
  for (const auto& [t, d] : devs_) {
    for (uint64_t off = 0; off < d.max; ++off) {
      if (pred(d.slots[off])) r.push_back({t, off});
    }
  }
  return r;
}

std::map<int, std::set<uint64_t>> Harness::FullClusters() const {
  std::map<int, std::set<uint64_t>> r;
  for (const auto& [t, s] : scan_) r[t] = s.full_clusters;
  return r;
}

bool Harness::NeedsExtend(SwapEntry first, int n) {
  for (int p = 0; p < n; ++p) {
    const uint32_t count = SlotOf({first.type, first.offset + p}).count;
    if (count + 1 >= static_cast<uint32_t>(policy_.count_max)) return true;
  }
  return false;
}

int Harness::PickCpu(uint32_t x) const { return static_cast<int>(x % 4); }

int Harness::PickOrder(uint32_t x) const {
  switch (x % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return 0;
    case 9:
      return cfg_.cluster_shift;
    default:
      // A policy without mTHP swap-out (6.1) refuses these orders
      // (errors_fast_path.cc checks that): the PMD order instead.
      if (!policy_.mthp_swap) return cfg_.cluster_shift;
      return 1 + static_cast<int>((x / 10) % cfg_.cluster_shift);
  }
}

// Half the time the newest cached folio (so dup / put / drop chain up on
// one folio), otherwise any.
int Harness::PickCachedFolio(uint32_t x) const {
  std::vector<int> c = CachedFolios();
  if (c.empty()) return -1;
  if (x & 1) return c.back();
  return c[(x >> 1) % c.size()];
}

}  // namespace swaplab::alloc::model
