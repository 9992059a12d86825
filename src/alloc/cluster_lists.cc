// SwapCluster lists and the transitions of allocator spec §1.7.
#include <cassert>

#include "alloc/system_state.h"

namespace swaplab::alloc {

void SwapSystem::State::ListAppendLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) {
  const auto idx = static_cast<uint32_t>(ClusterIndex(d, c));
  c.prev = l.tail;
  c.next = kNil;
  if (l.tail == kNil) {
    l.head = idx;
  } else {
    d.clusters[l.tail].next = idx;
  }
  l.tail = idx;
  ++l.len;
  c.listed = true;
}

void SwapSystem::State::ListRemoveLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) {
  if (c.prev == kNil) {
    l.head = c.next;
  } else {
    d.clusters[c.prev].next = c.next;
  }
  if (c.next == kNil) {
    l.tail = c.prev;
  } else {
    d.clusters[c.next].prev = c.prev;
  }
  c.prev = c.next = kNil;
  --l.len;
  c.listed = false;
}

ClusterList* SwapSystem::State::ListOfLocked(SwapDevice& d, const SwapCluster& c) {
  switch (c.flag) {
    case ClusterFlag::kFree: return &d.free_list;
    case ClusterFlag::kNonfull: return &d.nonfull[c.order];
    case ClusterFlag::kFrag: return &d.frag[c.order];
    case ClusterFlag::kFull: return &d.full_list;
    case ClusterFlag::kDiscard: return &d.discard_list;
    case ClusterFlag::kNone: break;
  }
  return nullptr;
}

ClusterList& SwapSystem::State::ListLocked(SwapDevice& d, ListId list, int order) {
  switch (list) {
    case ListId::kFree: return d.free_list;
    case ListId::kNonfull: return d.nonfull[order];
    case ListId::kFrag: return d.frag[order];
    case ListId::kFull: return d.full_list;
    case ListId::kDiscard: break;
  }
  return d.discard_list;
}

// Every list move: cluster lock held, device lock taken inside (§9).
void SwapSystem::State::MoveCluster(SwapDevice& d, SwapCluster& c, ClusterFlag to) {
  SpinGuard g(d.lock);
  if (c.listed) ListRemoveLocked(d, *ListOfLocked(d, c), c);
  c.flag = to;
  if (to != ClusterFlag::kNone) ListAppendLocked(d, *ListOfLocked(d, c), c);
}

void SwapSystem::State::AllocTable(SwapCluster& c) {
  c.table = std::make_unique<uint64_t[]>(cluster_size);
}

// Mirrors mm/swapfile.c: isolate_lock_cluster(). Isolation takes the device
// lock first, so it only try-locks clusters and skips busy ones.
SwapCluster* SwapSystem::State::Isolate(SwapDevice& d, ListId id, int order)
    NO_THREAD_SAFETY_ANALYSIS {
  SwapCluster* found = nullptr;
  {
    SpinGuard g(d.lock);
    ClusterList& list = ListLocked(d, id, order);
    for (uint32_t i = list.head; i != kNil; i = d.clusters[i].next) {
      SwapCluster& c = d.clusters[i];
      if (c.lock.TryLock()) {
        ListRemoveLocked(d, list, c);
        c.flag = ClusterFlag::kNone;
        found = &c;
        break;
      }
    }
  }
  // A cluster from the free list gets its table now (§1.5). Allocation
  // cannot fail in this model (docs/fidelity.md). A cluster handed out
  // whole to hibernation (no table, count > 0) stays without one.
  if (found && !found->table && found->count == 0) AllocTable(*found);
  return found;
}

// Mirrors free_cluster(): to the discard list on a WRITEOK discard device,
// otherwise straight to the free list without its table.
void SwapSystem::State::FreeCluster(SwapDevice& d, SwapCluster& c) {
  assert(c.count == 0 && c.extend_users == 0);
  if (d.page_discard && d.writeok.load(std::memory_order_acquire)) {
    MoveCluster(d, c, ClusterFlag::kDiscard);
    ScheduleDiscard(d);
    return;
  }
  c.table.reset();
  c.extend.reset();
  MoveCluster(d, c, ClusterFlag::kFree);  // leaves its list by its old order
  c.order = 0;
}

// Mirrors partial_free_cluster().
void SwapSystem::State::PartialFreeCluster(SwapDevice& d, SwapCluster& c) {
  if (c.flag != ClusterFlag::kNonfull) MoveCluster(d, c, ClusterFlag::kNonfull);
}

// Mirrors relocate_cluster(): after every scan of a cluster (§2.8).
void SwapSystem::State::Relocate(SwapDevice& d, SwapCluster& c) {
  if (c.flag == ClusterFlag::kDiscard) return;
  // RFC patch 5: a partly returned whole hibernation cluster stays off
  // every list until all of it is back.
  if (!c.table && c.count > 0 && c.count < cluster_size) return;
  if (c.count == 0) {
    if (c.flag != ClusterFlag::kFree) FreeCluster(d, c);
  } else if (c.count < cluster_size) {
    if (c.flag != ClusterFlag::kFrag) MoveCluster(d, c, ClusterFlag::kFrag);
  } else if (c.flag != ClusterFlag::kFull) {
    MoveCluster(d, c, ClusterFlag::kFull);
  }
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
