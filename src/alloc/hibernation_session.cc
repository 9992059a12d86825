// SPDX-License-Identifier: MIT
// The hibernation session of the 2026 RFC (seed 001 patches 5, 6, 9, 10;
// hibernation spec §9.5-§9.8): whole free clusters for the image, claimed
// while storage is suspended, optionally in disk order, after a reservation
// made at swapon.
#include <algorithm>
#include <string>

#include "alloc/cluster_lists.h"
#include "alloc/device_ref.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

// Claimed but unused clusters go back to the tail of the free list.
void SwapSystem::State::ReturnClaimedHibLocked() {
  if (hib_type < 0 || hib_private.empty()) return;
  SwapDevice& d = *records[hib_type];
  for (uint32_t i : hib_private) {
    SwapCluster& c = d.clusters[i];
    SpinGuard cg(c.lock);
    SpinGuard dg(d.lock);
    c.hib_claimed = false;
    ListAppendDeviceLocked(d, d.free_list(), c);  // flag is still FREE
  }
  hib_private.clear();
}

Status SwapSystem::HibernationBind(int type, bool sort_claimed) {
  State& s = *s_;
  std::lock_guard g(s.hib_mutex);
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->TryGet())
    return Status(-ENODEV, "hibernation: no swap device of type " + std::to_string(type));
  DeviceRef ref(d);
  if (!d->writeok.load())
    return Status(-ENODEV, "hibernation: device " + std::to_string(type) + " is not active");
  s.ReturnClaimedHibLocked();
  s.hib_type = type;
  s.hib_sorted = sort_claimed;
  s.hib_reserve_armed = d->hib_reserve_nr > 0;
  return Status::Ok();
}

void SwapSystem::HibernationUnbind() {
  State& s = *s_;
  std::lock_guard g(s.hib_mutex);
  s.ReturnClaimedHibLocked();
  s.hib_type = -1;
  s.hib_reserve_armed = false;
}

void SwapSystem::HibernationReset() {
  State& s = *s_;
  int type;
  bool sorted;
  {
    std::lock_guard g(s.hib_mutex);
    type = s.hib_type;
    sorted = s.hib_sorted;
  }
  if (type >= 0) (void)HibernationBind(type, sorted);
}

// Mirrors the RFC's swap_alloc_hibernation_slot(&nr) (§9.5 "Allocation").
SwapSystem::HibernationRun SwapSystem::AllocHibernationRun(CpuId cpu) {
  State& s = *s_;
  int type;
  {
    std::lock_guard g(s.hib_mutex);
    type = s.hib_type;
    if (type < 0) return {};
    SwapDevice& d = *s.records[type];
    if (!d.TryGet()) return {};
    DeviceRef ref(&d);
    if (s.hib_reserve_armed) {  // patch 10: the whole reservation, once
      s.hib_reserve_armed = false;
      return {SwapEntry{type, d.hib_reserve_start << s.cluster_shift},
              d.hib_reserve_nr << s.cluster_shift};
    }
    // hib_take_free: claim the entire free list, only while suspended.
    if (s.hib_private.empty() && s.suspended.load(std::memory_order_acquire)) {
      {
        SpinGuard dg(d.lock);
        while (d.free_list().head != kNil) {
          SwapCluster& c = d.clusters[d.free_list().head];
          s.ListRemoveDeviceLocked(d, d.free_list(), c);
          s.hib_private.push_back(static_cast<uint32_t>(s.ClusterIndex(d, c)));
        }
      }
      // The claim mark is the cluster's, taken after the device lock (§9
      // orders the cluster lock first); the hibernation mutex keeps every
      // other session step out meanwhile.
      for (uint32_t i : s.hib_private) {
        SwapCluster& c = d.clusters[i];
        SpinGuard cg(c.lock);
        c.hib_claimed = true;
      }
      if (s.hib_sorted) std::sort(s.hib_private.begin(), s.hib_private.end());  // patch 6
    }
    if (!s.hib_private.empty()) {
      const uint32_t i = s.hib_private.front();
      s.hib_private.erase(s.hib_private.begin());
      SwapCluster& c = d.clusters[i];
      {
        SpinGuard cg(c.lock);
        c.hib_claimed = false;
        c.hib_whole = true;
        c.order = 0;
        c.count = s.cluster_size;  // no table: never usable by the allocator
        SpinGuard dg(d.lock);
        s.SwapUsageAddDeviceLocked(d, s.cluster_size);
        s.MoveClusterDeviceLocked(d, c, ClusterFlag::kFull);
      }
      return {SwapEntry{type, static_cast<uint64_t>(i) << s.cluster_shift}, s.cluster_size};
    }
  }
  // Fallback: one slot the old way, from nonfull / frag clusters.
  const SwapEntry e = AllocHibernationSlot(cpu, type);
  return e.valid() ? HibernationRun{e, 1} : HibernationRun{};
}

// Mirrors the RFC's swap_free_hibernation_slot(first, nr).
Status SwapSystem::FreeHibernationRun(SwapEntry first, uint64_t nr) {
  State& s = *s_;
  auto dev = GetDeviceFor(s, first, nr, "swap_free_hibernation_slot");
  if (!dev.ok()) return dev.status();
  DeviceRef d(*dev);
  // Validate every piece first: bad input changes nothing.
  for (uint64_t off = first.offset; off < first.offset + nr;) {
    SwapCluster& c = d->ClusterOf(off, s.cluster_shift);
    const uint64_t end = std::min(first.offset + nr, s.ClusterStart(*d, c) + s.cluster_size);
    SpinGuard cg(c.lock);
    if (!c.hib_reserved && !c.table && (!c.hib_whole || c.count < end - off))
      return Status(-EINVAL, "swap_free_hibernation_slot: device " + std::to_string(d->type) +
                                 " slots [" + std::to_string(off) + ", " + std::to_string(end) +
                                 ") were not given to hibernation");
    off = end;
  }
  for (uint64_t off = first.offset; off < first.offset + nr;) {
    SwapCluster& c = d->ClusterOf(off, s.cluster_shift);
    const uint64_t end = std::min(first.offset + nr, s.ClusterStart(*d, c) + s.cluster_size);
    bool single = false;
    {
      SpinGuard cg(c.lock);
      if (c.hib_reserved) {
        // patch 10: reserved clusters are left alone
      } else if (!c.table) {
        c.count -= static_cast<uint32_t>(end - off);
        s.MoveCluster(*d, c, ClusterFlag::kNone, end - off);  // off the full list
        if (c.count == 0) {
          c.hib_whole = false;
          s.FreeCluster(*d, c);
        }
      } else {
        single = true;
      }
    }
    if (single) {
      for (uint64_t o = off; o < end; ++o) {
        if (Status st = FreeHibernationSlot(SwapEntry{d->type, o}); !st.ok()) return st;
      }
    }
    off = end;
  }
  s.MaybeRunDeferred();
  return Status::Ok();
}

std::pair<uint64_t, uint64_t> SwapSystem::HibernationReserve(int type) const {
  std::lock_guard g(s_->swap_lock);
  const SwapDevice* d = s_->Dev(type);
  if (d == nullptr || !d->used) return {0, 0};
  return {d->hib_reserve_start, d->hib_reserve_nr};
}

}  // namespace swaplab::alloc
