// SPDX-License-Identifier: MIT
// Reclaim and deferred work (src/alloc/swap_reclaim.cc, allocator spec
// §4): TryToReclaimSwap, ReclaimFullClusters, RunDeferredWork, suspended
// storage, and the folio flags (mapped, writeback) reclaim decides on.
#include <algorithm>
#include <iterator>
#include <set>
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::OpTryReclaim(const OpSpec& op) {
  SwapEntry e;
  int fi = -1;
  const uint32_t v = op.a % 5;
  if (v <= 2) {
    fi = PickCachedFolio(op.d);
    if (fi < 0) return;
    e = folios_[fi].entry;
    e.offset += (op.a / 5) % folios_[fi].f->nr_pages();
  } else {
    auto cand = SlotsWhere([v](const MSlot& s) {
      return v == 3 ? s.kind == MSlot::Kind::kShadow : s.kind == MSlot::Kind::kFree;
    });
    if (cand.empty()) return;
    e = cand[(op.a / 5) % cand.size()];
  }
  const unsigned flags = op.b & 7;
  const bool locked = fi >= 0 && (op.c & 3) == 0;
  int want = 0;
  if (fi >= 0) {
    const Folio& f = *folios_[fi].f;
    const int n = f.nr_pages();
    const bool decide =
        (flags & kReclaimAnyway) || ((flags & kReclaimUnmapped) && !f.mapped) ||
        ((flags & kReclaimFull) && 2 * sys_->nr_swap_pages() < sys_->total_swap_pages());
    const bool ok = !locked && decide && !f.writeback && !suspended_ && AllCountsZero(fi);
    want = ok ? n : -n;
  }
  desc_ +=
      " " + ToString(e) + " flags " + std::to_string(flags) + (locked ? " (folio locked)" : "");
  if (locked) folios_[fi].f->Lock();
  const int got = sys_->TryToReclaimSwap(e, flags);
  if (locked) folios_[fi].f->Unlock();
  desc_ += " -> " + std::to_string(got);
  HARNESS_CHECK(got == want, "TryToReclaimSwap returned " + std::to_string(got) + ", want " +
                                 std::to_string(want) + " (§4.2)");
  if (got > 0) {
    HARNESS_CHECK(!folios_[fi].f->in_swap_cache(), "reclaimed folio still cached");
    HARNESS_CHECK(folios_[fi].f->dirty, "reclaimed folio not marked dirty (§4.2 step 6)");
    ModelUncache(fi);
  }
  ReconcileVanished(Vanish::kNone);
}

// §4.4 swap_reclaim_full_clusters, simulated exactly: clusters from the
// head of the full list (budget: inuse / CLUSTER forced, else one), each
// walked from its start; a cache-only slot makes the walk try its folio
// (ANYWAY) and advance by the folio size from that slot, so a large folio
// entered past its first page makes the walk overshoot (as the kernel).
void Harness::OpReclaimFull(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const bool force = op.b & 1;
  desc_ += " type " + std::to_string(t) + (force ? " force" : "");
  auto di = sys_->Device(t);
  auto full = sys_->List(t, ListId::kFull);
  HARNESS_CHECK(di.ok() && full.ok(), "Device() / List() failed");
  const uint64_t budget = std::max<uint64_t>(1, force ? di->inuse / C() : 1);
  MDevice& d = devs_.at(t);
  std::set<int> expect;
  for (size_t i = 0; i < full->size() && i < budget; ++i) {
    const uint64_t start = (*full)[i] * C(), end = std::min(d.max, start + C());
    for (uint64_t o = start; o < end;) {
      const MSlot& m = d.slots[o];
      if (m.kind != MSlot::Kind::kCached || m.count != 0) {
        ++o;
        continue;
      }
      const int fi = m.folio;
      const uint64_t n = folios_[fi].f->nr_pages();
      if (!folios_[fi].f->writeback && !suspended_ && AllCountsZero(fi)) {
        expect.insert(fi);
        ModelUncache(fi);
      }
      o += n;
    }
  }
  CheckStatusOk(sys_->ReclaimFullClusters(t, force), "ReclaimFullClusters");
  for (int fi : expect) {
    HARNESS_CHECK(!folios_[fi].f->in_swap_cache(),
                  "full-cluster reclaim kept cache-only folio#" + std::to_string(fi) +
                      " (§4.4 walk from the head of the full list)");
    HARNESS_CHECK(folios_[fi].f->dirty, "reclaimed folio not marked dirty (§4.2 step 6)");
  }
  if (!expect.empty()) desc_ += " reclaimed " + std::to_string(expect.size());
  ReconcileVanished(Vanish::kNone);
}

void Harness::OpRunDeferred(const OpSpec& op) {
  (void)op;
  desc_ += sys_->HasDeferredWork() ? " (pending)" : " (idle)";
  const auto full_before = FullClusters();
  sys_->RunDeferredWork();
  ReconcileVanished(Vanish::kFullClusters, {}, &full_before);
  HARNESS_CHECK(!sys_->HasDeferredWork(), "RunDeferredWork left work pending");
  for (const auto& [t, d] : devs_) {
    auto di = sys_->Device(t);
    HARNESS_CHECK(di.ok() && di->discard_clusters == 0,
                  "device " + std::to_string(t) + " still has clusters waiting for discard");
  }
}

void Harness::OpSuspend(const OpSpec& op) {
  const bool on = op.b % 4 == 0;
  desc_ += on ? " on" : " off";
  sys_->SetStorageSuspended(on);
  suspended_ = on;
  ReconcileVanished(Vanish::kNone);
}

void Harness::OpFolioFlags(const OpSpec& op) {
  const int fi = PickCachedFolio(op.a);
  if (fi < 0) return;
  Folio& f = *folios_[fi].f;
  FolioLockGuard g(f);
  f.mapped = op.b & 1;
  f.writeback = (op.b & 6) == 0;
  desc_ += " folio#" + std::to_string(fi) + " mapped=" + std::to_string(f.mapped) +
           " writeback=" + std::to_string(f.writeback);
}

}  // namespace swaplab::alloc::model
