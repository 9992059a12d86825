// The per-CPU swap slot cache of kernels up to v6.14 (allocator spec §10.1,
// kernel: mm/swap_slots.c). Only the allocation side is modelled.
#include <string>

#include "alloc/system_state.h"

namespace swaplab::alloc {

// Mirrors check_cache_active(): active while free swap is plentiful;
// deactivation drains every CPU's cache.
void SwapSystem::State::SlotCacheCheckActive() {
  const int64_t nr = NrSwapPages();
  const int64_t per_all = static_cast<int64_t>(policy.slot_cache_batch) * opts.nr_cpus;
  const bool active = slot_cache_active.load(std::memory_order_acquire);
  if (!active && nr > 5 * per_all) {
    std::lock_guard g(slot_cache_mutex);
    slot_cache_active.store(true, std::memory_order_release);
  } else if (active && nr < 2 * per_all) {
    std::lock_guard g(slot_cache_mutex);
    if (slot_cache_active.exchange(false, std::memory_order_acq_rel)) SlotCacheDrainAll();
  }
}

void SwapSystem::State::SlotCacheDrainCpuLocked(PerCpu& pc) {
  pc.lock.AssertHeld();
  for (size_t i = pc.slot_cache_cur; i < pc.slot_cache.size(); ++i) {
    const SwapEntry e = pc.slot_cache[i];
    SwapDevice* d = Dev(e.type);
    if (d == nullptr || !d->TryGet()) continue;
    {
      SwapCluster& c = d->ClusterOf(e.offset, cluster_shift);
      SpinGuard g(c.lock);
      const uint64_t v = c.table ? c.table[e.offset - ClusterStart(*d, c)] : slot::kEmpty;
      if (slot::Kind(v) == SlotKind::kCached && slot::FolioOf(v) == nullptr)
        FreeSlotsClusterLocked(*d, c, e.offset, 1);
    }
    d->Put();
  }
  pc.slot_cache.clear();
  pc.slot_cache_cur = 0;
}

void SwapSystem::State::SlotCacheDrainAll() {
  for (int cpu = 0; cpu < opts.nr_cpus; ++cpu) {
    SpinGuard g(cpus[cpu].lock);
    SlotCacheDrainCpuLocked(cpus[cpu]);
  }
}

// Mirrors folio_alloc_swap() → get_swap_page() of v6.14: the next cached
// slot, refilling with up to one batch from the first device that yields.
bool SwapSystem::State::SlotCacheAlloc(PerCpu& pc, int cpu, Folio& f, SwapEntry* out) {
  SlotCacheCheckActive();
  if (!slot_cache_active.load(std::memory_order_acquire)) return false;
  SpinGuard g(pc.lock);
  if (pc.slot_cache_cur >= pc.slot_cache.size()) {
    pc.slot_cache.clear();
    pc.slot_cache_cur = 0;
    const AllocRequest rq{cpu, 0, nullptr, CommitKind::kSlotCache};
    // Mirrors get_swap_pages(): repeat the device allocation up to a batch.
    WalkAvail(0, [&](SwapDevice& d) {
      for (int i = 0; i < policy.slot_cache_batch; ++i) {
        const uint64_t off = AllocateOnDevice(d, rq);
        if (off == 0) break;
        pc.slot_cache.push_back(SwapEntry{d.type, off});
      }
      return !pc.slot_cache.empty();
    });
    Bump(pc.stats.slot_cache_refills);
  }
  while (pc.slot_cache_cur < pc.slot_cache.size()) {
    const SwapEntry e = pc.slot_cache[pc.slot_cache_cur++];
    SwapDevice* d = Dev(e.type);
    if (d == nullptr || !d->TryGet()) continue;
    bool ok = false;
    {
      SwapCluster& c = d->ClusterOf(e.offset, cluster_shift);
      SpinGuard cg(c.lock);
      const uint64_t i = e.offset - ClusterStart(*d, c);
      const uint64_t v = c.table[i];
      if (slot::Kind(v) == SlotKind::kCached && slot::FolioOf(v) == nullptr) {
        SetSlot(c, i, slot::Cached(&f, 0));
        FolioAccess::SetSwap(f, e);
        ok = true;
      }
    }
    d->Put();
    if (ok) {
      Bump(pc.stats.slot_cache_hits);
      *out = e;
      return true;
    }
  }
  return false;
}

}  // namespace swaplab::alloc
