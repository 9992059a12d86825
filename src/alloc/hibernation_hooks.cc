// SPDX-License-Identifier: MIT
// The swap side of hibernation (allocator spec §6).
#include <string>
#include <vector>

#include "alloc/device_ref.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

// Mirrors swap_alloc_hibernation_slot(): one order-0 slot on exactly that
// device, no folio, no rotation, no discard retry.
// The in-cluster scan releases the cluster lock taken here.
SwapEntry SwapSystem::AllocHibernationSlot(CpuId cpu, int type) {
  State& s = *s_;
  if (cpu < 0 || cpu >= s.opts.nr_cpus) return SwapEntry{};
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->TryGet()) return SwapEntry{};
  DeviceRef ref(d);
  if (!d->writeok.load(std::memory_order_acquire)) return SwapEntry{};
  const AllocRequest rq{cpu, 0, nullptr, CommitKind::kHibernation};
  s.current_cpu.store(cpu, std::memory_order_relaxed);
  PerCpu& pc = s.cpus[cpu];
  uint64_t off = 0;
  {
    SpinGuard g(pc.lock);
    if (s.policy.hibernation_percpu_hint && !s.policy.percpu_hint_per_device && pc.dev[0] == type &&
        pc.off[0] != 0 && pc.off[0] < (d->nr_clusters << s.cluster_shift)) {
      SwapCluster& c = d->ClusterOf(pc.off[0], s.cluster_shift);
      c.lock.Lock();
      if (s.Usable(c, 0)) {
        const uint64_t start = c.count == 0 ? s.ClusterStart(*d, c) : pc.off[0];
        bool abort = false;
        off = s.ScanCluster(*d, c, start, rq, &abort);
        if (off != 0) Bump(pc.stats.fast_path_hits);
      } else {
        c.lock.Unlock();
      }
    }
    // 6.12 get_swap_page_of_type(): scan_swap_map_slots() for one slot on
    // this CPU's cluster of the device (the swap_map scan on a rotational
    // device), past the slot cache; nr_swap_pages drops after it.
    if (off == 0) off = s.AllocateOnDevice(*d, rq);
  }
  s.MaybeRunDeferred();
  return off != 0 ? SwapEntry{type, off} : SwapEntry{};
}

SwapEntry SwapSystem::AllocHibernationRange(CpuId cpu, int type, int order) {
  State& s = *s_;
  if (order == 0) return AllocHibernationSlot(cpu, type);
  if (cpu < 0 || cpu >= s.opts.nr_cpus || order < 0 || order > s.pmd_order) return SwapEntry{};
  SwapDevice* d = s.Dev(type);
  if (d == nullptr || !d->TryGet()) return SwapEntry{};
  DeviceRef ref(d);
  if (!d->writeok.load(std::memory_order_acquire) || !d->blkdev) return SwapEntry{};
  const AllocRequest rq{cpu, order, nullptr, CommitKind::kHibernation};
  s.current_cpu.store(cpu, std::memory_order_relaxed);
  PerCpu& pc = s.cpus[cpu];
  SwapEntry out;
  bool ok = false;
  {
    SpinGuard g(pc.lock);
    if (!s.policy.percpu_hint_per_device && pc.dev[order] == type) ok = s.AllocFast(pc, rq, &out);
    if (!ok) {
      const uint64_t off = s.AllocateOnDevice(*d, rq);
      ok = off != 0;
      if (ok) out = SwapEntry{type, off};
    }
  }
  s.MaybeRunDeferred();
  return ok ? out : SwapEntry{};
}

// Mirrors swap_free_hibernation_slot(): HIB entries are freed by offset
// (2026 base); a SHADOW placeholder is put, freed, and any folio that
// readahead cached there reclaimed (primary tree).
Status SwapSystem::FreeHibernationSlot(SwapEntry entry) {
  State& s = *s_;
  auto dev = GetDeviceFor(s, entry, 1, "swap_free_hibernation_slot");
  if (!dev.ok()) return dev.status();
  std::vector<SwapEntry> held;  // 6.12: swap_free() -> free_swap_slot()
  {
    DeviceRef d(*dev);
    SwapCluster& c = d->ClusterOf(entry.offset, s.cluster_shift);
    {
      SpinGuard g(c.lock);
      const uint32_t i = static_cast<uint32_t>(entry.offset - s.ClusterStart(*d, c));
      const uint64_t e = c.table ? c.table[i] : slot::kEmpty;
      const bool hib = slot::Kind(e) == SlotKind::kHib;
      const bool placeholder = slot::Kind(e) == SlotKind::kShadow && slot::Count(e) == 1;
      if (!(s.policy.hibernation_hib_entry ? hib : placeholder))
        return Status(-EINVAL, "swap_free_hibernation_slot: device " + std::to_string(d->type) +
                                   " offset " + std::to_string(entry.offset) + " is " +
                                   std::string(Name(slot::Kind(e))) + " with count " +
                                   std::to_string(slot::Count(e)) + ", not a hibernation slot");
      if (placeholder && s.policy.slot_cache_return) {
        s.SetSlot(c, i, slot::Cached(nullptr, 0));  // put: 1 -> 0, cache-held
        held.push_back(entry);
      } else {
        if (placeholder) s.SetSlot(c, i, slot::Shadow(0));  // put: 1 → 0, then free
        s.FreeSlotsClusterLocked(*d, c, entry.offset, 1);
      }
    }
    if (!held.empty()) s.SlotReturn(held);
    if (!s.policy.hibernation_hib_entry) s.TryReclaim(*d, entry.offset, kReclaimAnyway);
  }
  s.MaybeRunDeferred();
  return Status::Ok();
}

namespace {

// The lookup shared by find / pin / repin (kernel: find_hibernation_swap_type).
Result<int> LookupSwapLocked(SwapSystem::State& s, uint64_t bdev, uint64_t block) {
  if (bdev == 0) return Status(-EINVAL, "hibernation: no resume device given");
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    SwapDevice& d = *s.records[t];
    if (!d.used || !d.writeok.load() || d.bdev != bdev) continue;
    const uint64_t first = d.extents.empty() ? d.first_block : d.extents.front().start_block;
    if (first == block) return t;
  }
  return Status(-ENODEV, "hibernation: no active swap area on device " + std::to_string(bdev) +
                             " starting at block " + std::to_string(block));
}

}  // namespace

Result<int> SwapSystem::FindHibernationSwapType(uint64_t bdev, uint64_t block) {
  std::lock_guard g(s_->swap_lock);
  return LookupSwapLocked(*s_, bdev, block);
}

Result<int> SwapSystem::PinHibernationSwapType(uint64_t bdev, uint64_t block) {
  std::lock_guard g(s_->swap_lock);
  auto t = LookupSwapLocked(*s_, bdev, block);
  if (!t.ok()) return t;
  SwapDevice& d = *s_->records[*t];
  if (d.hibernation_pinned)
    return Status(-EBUSY, "hibernation: device " + std::to_string(*t) + " is already pinned");
  d.hibernation_pinned = true;
  return t;
}

Result<int> SwapSystem::RepinHibernationSwapType(int old_type, uint64_t bdev, uint64_t block) {
  std::lock_guard g(s_->swap_lock);
  auto t = LookupSwapLocked(*s_, bdev, block);
  if (!t.ok()) return t;  // the old pin stays
  if (*t == old_type) return t;
  SwapDevice& d = *s_->records[*t];
  if (d.hibernation_pinned)
    return Status(-EBUSY, "hibernation: device " + std::to_string(*t) + " is already pinned");
  if (SwapDevice* old = s_->Dev(old_type)) old->hibernation_pinned = false;
  d.hibernation_pinned = true;
  return t;
}

void SwapSystem::UnpinHibernationSwapType(int type) {
  std::lock_guard g(s_->swap_lock);
  if (SwapDevice* d = s_->Dev(type)) d->hibernation_pinned = false;
}

Result<int> SwapSystem::FindFirstSwap() {
  std::lock_guard g(s_->swap_lock);
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    if (s_->records[t]->used && s_->records[t]->writeok.load()) return t;
  }
  return Status(-ENODEV, "find_first_swap: no active swap device");
}

// Mirrors swapdev_block(): the disk block of a slot through the extents.
uint64_t SwapSystem::SwapdevBlock(int type, uint64_t offset) {
  std::lock_guard g(s_->swap_lock);
  SwapDevice* d = s_->Dev(type);
  if (d == nullptr || !d->used || !d->writeok.load() || offset >= d->max) return 0;
  if (d->extents.empty()) return d->first_block + offset;
  for (const SwapExtent& e : d->extents) {
    if (offset >= e.start_page && offset < e.start_page + e.nr_pages)
      return e.start_block + (offset - e.start_page);
  }
  return 0;
}

// Mirrors count_swap_pages().
uint64_t SwapSystem::CountSwapPages(int type, bool free) {
  std::lock_guard g(s_->swap_lock);
  SwapDevice* d = s_->Dev(type);
  if (d == nullptr || !d->used || !d->writeok.load()) return 0;
  SpinGuard lg(d->lock);
  const uint64_t reserve = d->hib_reserve_nr * s_->cluster_size;  // §9.7
  return (free ? d->pages - d->inuse_pages() : d->pages) + reserve;
}

}  // namespace swaplab::alloc
