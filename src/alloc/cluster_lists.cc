// SPDX-License-Identifier: MIT
// SwapCluster lists and the transitions of allocator spec §1.7.
#include "alloc/cluster_lists.h"

#include <cassert>

#include "alloc/system_state.h"

namespace swaplab::alloc {

// The list operations, MoveCluster, PartialFreeCluster and Relocate are
// inline in cluster_lists.h (the per-CPU fast path runs two moves a pair).

void SwapSystem::State::AllocTable(SwapCluster& c) {
  c.table = std::make_unique<uint64_t[]>(cluster_size);
}

namespace {

// Isolate hands its caller the cluster it locked. The analysis has no name
// for "the lock of the returned cluster", so this one-line hand-off tells it
// the lock leaves Isolate's keeping; every caller then says it holds it
// (c->lock.AssertHeld(), which debug builds check).
SwapCluster* HandOffLocked(SwapCluster& c) RELEASE(c.lock) NO_THREAD_SAFETY_ANALYSIS { return &c; }

}  // namespace

// Mirrors mm/swapfile.c: isolate_lock_cluster(). Isolation takes the device
// lock first, so it only try-locks clusters and skips busy ones.
SwapCluster* SwapSystem::State::Isolate(SwapDevice& d, ListId id, int order) {
  d.lock.Lock();
  ClusterList& list = d.lists[ListIndex(id, order)];
  for (uint32_t i = list.head; i != kNil; i = d.clusters[i].next) {
    SwapCluster& c = d.clusters[i];
    if (!c.lock.TryLock()) continue;
    ListRemoveDeviceLocked(d, list, c);
    c.flag = ClusterFlag::kNone;
    d.lock.Unlock();
    // A cluster from the free list gets its table now (§1.5). Allocation
    // cannot fail in this model (docs/fidelity.md). A cluster handed out
    // whole to hibernation (no table, count > 0) stays without one.
    if (!c.table && c.count == 0) AllocTable(c);
    return HandOffLocked(c);
  }
  d.lock.Unlock();
  return nullptr;
}

// Mirrors free_cluster(): to the discard list on a WRITEOK discard device,
// otherwise straight to the free list without its table.
void SwapSystem::State::FreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed) {
  assert(c.count == 0 && c.extend_users == 0);
  // (6.12 discards per cluster only on devices with clusters; 6.1's SSD
  // has them under ssd_swap_map_scan.)
  const bool has_clusters = d.ssd || !UsesMapScan(d);
  if (d.page_discard && d.writeok.load(std::memory_order_acquire) && has_clusters) {
    MoveCluster(d, c, ClusterFlag::kDiscard, freed);
    ScheduleDiscard(d);
    return;
  }
  c.table.reset();
  c.extend.reset();
  MoveCluster(d, c, ClusterFlag::kFree, freed);  // leaves its list by its old order
  c.order = 0;
}

void SwapSystem::State::ScheduleDiscard(SwapDevice& d) {
  d.discard_pending.store(true, std::memory_order_release);
  work_pending.store(true, std::memory_order_release);
}

void SwapSystem::State::ScheduleReclaim(SwapDevice& d) {
  d.reclaim_pending.store(true, std::memory_order_release);
  work_pending.store(true, std::memory_order_release);
}

}  // namespace swaplab::alloc
