// SPDX-License-Identifier: MIT
// The cluster list operations (allocator spec §1.7), the moves between lists
// and the usage changes that go with them (§2.8 step 5, §3.5). Inline: the
// per-CPU fast path runs two moves per allocate / free pair. Declared in
// SwapSystem::State (system_state.h).
#pragma once

#include <cstdint>

#include "alloc/system_state.h"

namespace swaplab::alloc {

inline void SwapSystem::State::ListAppendDeviceLocked(SwapDevice& d, ClusterList& l,
                                                      SwapCluster& c) {
  d.lock.AssertHeld();
  const auto idx = static_cast<uint32_t>(ClusterIndex(d, c));
  c.prev = l.tail;
  c.next = kNil;
  (l.tail == kNil ? l.head : d.clusters[l.tail].next) = idx;
  l.tail = idx;
  ++l.len;
  c.listed = true;
}

inline void SwapSystem::State::ListRemoveDeviceLocked(SwapDevice& d, ClusterList& l,
                                                      SwapCluster& c) {
  d.lock.AssertHeld();
  (c.prev == kNil ? l.head : d.clusters[c.prev].next) = c.next;
  (c.next == kNil ? l.tail : d.clusters[c.next].prev) = c.prev;
  c.prev = c.next = kNil;
  --l.len;
  c.listed = false;
}

inline void SwapSystem::State::ListRotateDeviceLocked(SwapDevice& d, ClusterList& l, uint64_t r) {
  d.lock.AssertHeld();
  if (r == 0 || r >= l.len) return;
  // The new head is the r-th cluster: walk to it from the nearer end.
  uint32_t h;
  if (r <= l.len / 2) {
    h = l.head;
    for (uint64_t k = 0; k < r; ++k) h = d.clusters[h].next;
  } else {
    h = l.tail;
    for (uint64_t k = l.len - 1; k > r; --k) h = d.clusters[h].prev;
  }
  const uint32_t new_tail = d.clusters[h].prev;
  d.clusters[l.tail].next = l.head;
  d.clusters[l.head].prev = l.tail;
  d.clusters[new_tail].next = kNil;
  d.clusters[h].prev = kNil;
  l.head = h;
  l.tail = new_tail;
}

inline void SwapSystem::State::MoveClusterDeviceLocked(SwapDevice& d, SwapCluster& c,
                                                       ClusterFlag to) {
  d.lock.AssertHeld();
  if (c.listed) ListRemoveDeviceLocked(d, d.lists[ListIndex(c.flag, c.order)], c);
  c.flag = to;
  if (to != ClusterFlag::kNone) ListAppendDeviceLocked(d, d.lists[ListIndex(to, c.order)], c);
}

inline void SwapSystem::State::MoveCluster(SwapDevice& d, SwapCluster& c, ClusterFlag to,
                                           uint64_t freed) {
  SpinGuard g(d.lock);
  MoveClusterDeviceLocked(d, c, to);
  if (freed != 0) SwapUsageSubDeviceLocked(d, freed);
}

inline void SwapSystem::State::PartialFreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed) {
  if (c.flag != ClusterFlag::kNonfull) {
    MoveCluster(d, c, ClusterFlag::kNonfull, freed);
  } else {
    SwapUsageSub(d, freed);
  }
}

inline void SwapSystem::State::Relocate(SwapDevice& d, SwapCluster& c, uint64_t added) {
  bool move = false;
  ClusterFlag to = ClusterFlag::kNone;
  if (c.flag == ClusterFlag::kDiscard) {
    // stays where it is
  } else if (!c.table && c.count > 0 && c.count < cluster_size) {
    // RFC patch 5: a partly returned whole hibernation cluster stays off
    // every list until all of it is back.
  } else if (c.count == 0) {
    // Nothing was committed (count 0), so there is no usage to add.
    if (c.flag != ClusterFlag::kFree) FreeCluster(d, c);
    return;
  } else if (c.count < cluster_size) {
    move = c.flag != ClusterFlag::kFrag;
    to = ClusterFlag::kFrag;
  } else {
    move = c.flag != ClusterFlag::kFull;
    to = ClusterFlag::kFull;
  }
  if (!move && added == 0) return;
  SpinGuard g(d.lock);
  if (move) MoveClusterDeviceLocked(d, c, to);
  if (added != 0) SwapUsageAddDeviceLocked(d, added);
}

inline void SwapSystem::State::SwapUsageAddDeviceLocked(SwapDevice& d, uint64_t n) {
  d.lock.AssertHeld();
  const uint64_t v = d.inuse.load(std::memory_order_relaxed) + n;
  d.inuse.store(v, std::memory_order_release);
  if (v == d.pages) [[unlikely]] {
    DelFromAvailDeviceLocked(d, false);
    // swap_range_alloc() asks vm_swap_full() before nr_swap_pages is
    // lowered by these n pages (after it, or, in 6.12, by the caller of the
    // scan: pages_ahead says by how much more); the derived value already
    // has. 6.12 schedules the reclaim work only on devices with clusters.
    const bool clusters = !UsesMapScan(d);
    if (clusters && VmSwapFull(static_cast<int64_t>(n))) ScheduleReclaim(d);
  }
}

inline void SwapSystem::State::SwapUsageSubDeviceLocked(SwapDevice& d, uint64_t n) {
  d.lock.AssertHeld();
  const uint64_t v = d.inuse.load(std::memory_order_relaxed) - n;
  d.inuse.store(v, std::memory_order_release);
  if (v & kOffListBit) [[unlikely]]
    AddToAvailDeviceLocked(d);
}

inline void SwapSystem::State::SwapUsageSub(SwapDevice& d, uint64_t n) {
  SpinGuard g(d.lock);
  SwapUsageSubDeviceLocked(d, n);
}

}  // namespace swaplab::alloc
