// SPDX-License-Identifier: MIT
// Swap cache reclaim, full-cluster reclaim, discard and deferred work
// (allocator spec §3.6, §4).
#include <algorithm>
#include <string>
#include <vector>

#include "alloc/cluster_lists.h"
#include "alloc/device_ref.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

// Mirrors __try_to_reclaim_swap(): +n reclaimed, −n found but kept, 0 no
// folio (§4.2). The folio is try-locked under the cluster lock, so it is
// still the one at `off` once locked.
int SwapSystem::State::TryReclaim(SwapDevice& d, uint64_t off, unsigned flags, int locked_cpu) {
  SwapCluster& c = d.ClusterOf(off, cluster_shift);
  // 6.12 (slot_cache_return): without TTRS_DIRECT the folio leaves through
  // delete_from_swap_cache() -> put_swap_folio() -> free_swap_slot().
  const bool via_return = policy.slot_cache_return && !(flags & kReclaimDirect);
  std::vector<SwapEntry> held;
  Folio* f;
  {
    SpinGuard g(c.lock);
    const uint64_t e = c.table ? c.table[off - ClusterStart(d, c)] : slot::kEmpty;
    if (slot::Kind(e) != SlotKind::kCached || slot::FolioOf(e) == nullptr) return 0;
    f = slot::FolioOf(e);
    if (!f->TryLock()) return -f->nr_pages();
  }
  const int n = f->nr_pages();
  const bool decide = (flags & kReclaimAnyway) || ((flags & kReclaimUnmapped) && !f->mapped) ||
                      ((flags & kReclaimFull) && VmSwapFull());
  if (!decide || f->writeback || suspended.load(std::memory_order_acquire)) {
    f->Unlock();
    return -n;
  }
  {
    SpinGuard g(c.lock);
    const uint32_t base = static_cast<uint32_t>(f->swap().offset - ClusterStart(d, c));
    for (uint32_t i = base; i < base + static_cast<uint32_t>(n); ++i) {
      if (SlotCount(c, i) != 0) {
        f->Unlock();
        return -n;
      }
    }
    DelFolioClusterLocked(d, c, *f, via_return ? &held : nullptr);
    f->dirty = true;
  }
  f->Unlock();
  folios_reclaimed.fetch_add(1, std::memory_order_relaxed);
  if (!held.empty()) SlotReturn(held, locked_cpu);
  return n;
}

// A round of swap_reclaim_full_clusters() on a cluster with no Reclaimable
// slot frees nothing and only moves it from the head of the full list to
// the tail, so a run of such clusters is one rotation of the list, found by
// reading SwapCluster::reclaimable instead of every slot. A cluster whose
// lock is busy is turned over too (isolate_lock_cluster would skip it): it
// frees nothing either way, and the order differs only while another
// thread holds that lock.
int64_t SwapSystem::State::SkipUnreclaimable(SwapDevice& d, int64_t rounds) {
  SpinGuard g(d.lock);
  ClusterList& l = d.full_list();
  if (l.len == 0) return rounds;  // Isolate would find nothing
  uint64_t k = 0;
  uint32_t i = l.head;
  while (i != kNil && static_cast<int64_t>(k) < rounds &&
         d.clusters[i].reclaimable.load(std::memory_order_relaxed) == 0) {
    i = d.clusters[i].next;
    ++k;
  }
  if (i == kNil) {  // nothing anywhere: every remaining round turns the list
    ListRotateDeviceLocked(d, l, static_cast<uint64_t>(rounds) % l.len);
    return rounds;
  }
  ListRotateDeviceLocked(d, l, k);
  return static_cast<int64_t>(k);
}

// Mirrors swap_reclaim_full_clusters() (§4.4): `force` takes as many rounds
// as there are clusters' worth of used slots, at least one.
// Isolate returns the cluster locked; the walk drops it around each folio.
void SwapSystem::State::ReclaimFull(SwapDevice& d, bool force) {
  int64_t rounds =
      std::max<int64_t>(force ? static_cast<int64_t>(d.inuse_pages() / cluster_size) : 1, 1);
  while (rounds > 0) {
    rounds -= SkipUnreclaimable(d, rounds);
    if (rounds == 0) break;
    SwapCluster* c = Isolate(d, ListId::kFull);
    if (c == nullptr) break;
    c->lock.AssertHeld();  // Isolate returns it locked
    --rounds;
    const uint64_t start = ClusterStart(d, *c);
    const uint64_t end = std::min(d.max, start + cluster_size);
    for (uint64_t o = start; o < end;) {
      const uint64_t e = c->table ? c->table[o - start] : slot::kEmpty;
      if (slot::Kind(e) == SlotKind::kCached && slot::Count(e) == 0) {
        c->lock.Unlock();
        const int r = TryReclaim(d, o, kReclaimAnyway | kReclaimDirect);
        c->lock.Lock();
        if (r != 0) {
          o += static_cast<uint64_t>(r < 0 ? -r : r);
          continue;
        }
      }
      ++o;
    }
    if (c->flag == ClusterFlag::kNone) Relocate(d, *c);  // nothing freed: back to full
    c->lock.Unlock();
  }
}

// Mirrors swap_do_scheduled_discard(): returns the clusters discarded.
int SwapSystem::State::DoDiscard(SwapDevice& d) {
  int done = 0;
  d.lock.Lock();
  while (d.discard_list().head != kNil) {
    SwapCluster& c = d.clusters[d.discard_list().head];
    ListRemoveDeviceLocked(d, d.discard_list(), c);  // flag stays DISCARD
    d.lock.Unlock();
    if (d.sink != nullptr) d.sink->Discard(d.type, ClusterStart(d, c), cluster_size);
    {
      SpinGuard g(c.lock);
      c.flag = ClusterFlag::kNone;
      c.table.reset();
      c.extend.reset();
      c.order = 0;
      MoveCluster(d, c, ClusterFlag::kFree);
    }
    ++done;
    d.lock.Lock();
  }
  d.lock.Unlock();
  clusters_discarded.fetch_add(static_cast<uint64_t>(done), std::memory_order_relaxed);
  return done;
}

// Runs the discard work and the reclaim work of every device that has
// them pending (Appendix A: a defined point).
// Work that schedules more work (a reclaim that frees a cluster on a
// discard device) is run too, until none is left.
void SwapSystem::State::RunDeferred() {
  for (int round = 0; round < 16 && work_pending.exchange(false, std::memory_order_acq_rel);
       ++round) {
    for (int t = 0; t < nr_swapfiles.load(std::memory_order_acquire); ++t) {
      SwapDevice* d = records[t].get();
      if (d == nullptr || !d->TryGet()) continue;
      if (d->reclaim_pending.exchange(false, std::memory_order_acq_rel)) ReclaimFull(*d, true);
      if (d->discard_pending.exchange(false, std::memory_order_acq_rel)) DoDiscard(*d);
      d->Put();
    }
  }
}

int SwapSystem::TryToReclaimSwap(SwapEntry entry, unsigned flags) {
  auto dev = GetDeviceFor(*s_, entry, 1, "try_to_reclaim_swap");
  if (!dev.ok()) return 0;
  int r;
  {
    DeviceRef d(*dev);
    r = s_->TryReclaim(*d, entry.offset, flags);
  }
  s_->MaybeRunDeferred();
  return r;
}

Status SwapSystem::ReclaimFullClusters(int type, bool force) {
  SwapDevice* d = s_->Dev(type);
  if (d == nullptr || !d->TryGet())
    return Status(-EINVAL,
                  "swap_reclaim_full_clusters: no swap device of type " + std::to_string(type));
  {
    DeviceRef ref(d);
    s_->ReclaimFull(*d, force);
  }
  s_->MaybeRunDeferred();
  return Status::Ok();
}

void SwapSystem::SetStorageSuspended(bool suspended) {
  s_->suspended.store(suspended, std::memory_order_release);
}
bool SwapSystem::storage_suspended() const { return s_->suspended.load(std::memory_order_acquire); }

void SwapSystem::RunDeferredWork() { s_->RunDeferred(); }

bool SwapSystem::HasDeferredWork() const {
  for (int t = 0; t < s_->nr_swapfiles.load(std::memory_order_acquire); ++t) {
    const SwapDevice* d = s_->records[t].get();
    if (d && (d->discard_pending.load() || d->reclaim_pending.load())) return true;
  }
  return false;
}

}  // namespace swaplab::alloc
