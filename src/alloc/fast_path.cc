// SPDX-License-Identifier: MIT
// Allocation entry: folio_alloc_swap() and the per-CPU fast path in front
// of the slow path (allocator spec §2.1-§2.2).
#include <string>

#include "alloc/cluster_scan.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

// Mirrors mm/swapfile.c: swap_alloc_fast(). Runs under the CPU-local lock.
// ScanCluster releases the cluster lock taken here.
[[gnu::flatten]] bool SwapSystem::State::AllocFast(PerCpu& pc, const AllocRequest& rq,
                                                   SwapEntry* out) {
  const int k = rq.order;
  const int type = pc.dev[k];
  uint64_t off = pc.off[k];
  if (type < 0 || off == 0) return false;
  // No device reference (the kernel takes one): swapoff clears every CPU's
  // hints under that CPU's lock, which this path holds, before it frees the
  // clusters, and a commit on a device being swapped off fails (!WRITEOK).
  SwapDevice* d = Dev(type);
  uint64_t found = 0;
  if (off < (d->nr_clusters << cluster_shift)) {  // may be the BAD tail: scanned, fails
    SwapCluster& c = d->ClusterOf(off, cluster_shift);
    c.lock.Lock();
    if (Usable(c, k)) {
      if (c.count == 0) off = ClusterStart(*d, c);
      bool abort = false;
      found = ScanCluster(*d, c, off, rq, &abort);
    } else {
      c.lock.Unlock();
    }
  }
  if (found != 0) *out = SwapEntry{type, found};
  return found != 0;
}

// Why folio_alloc_swap refuses its arguments (kept out of the fast path).
[[gnu::cold, gnu::noinline]] static Status AllocSwapArgError(CpuId cpu, int nr_cpus,
                                                             const Folio& folio, int pmd_order,
                                                             const Policy& policy) {
  const int k = folio.order();
  if (cpu < 0 || cpu >= nr_cpus)
    return Status(-EINVAL, "folio_alloc_swap: cpu " + std::to_string(cpu) + " is not in [0, " +
                               std::to_string(nr_cpus) + ")");
  if (k < 0 || k > pmd_order)
    return Status(-EINVAL, "folio_alloc_swap: order " + std::to_string(k) +
                               " is larger than a cluster (order " + std::to_string(pmd_order) +
                               ")");
  if (!policy.mthp_swap && k != 0 && k != pmd_order)
    return Status(-EINVAL, "folio_alloc_swap: policy " + policy.name + " swaps out order 0 and " +
                               "the PMD order (" + std::to_string(pmd_order) +
                               ") only, not order " + std::to_string(k) +
                               " (mthp_swap off: no mTHP swap-out before 6.10)");
  if (!folio.locked()) return Status(-EINVAL, "folio_alloc_swap: the folio is not locked");
  return Status(-EINVAL, "folio_alloc_swap: the folio is already in the swap cache at offset " +
                             std::to_string(folio.swap().offset));
}

[[gnu::cold, gnu::noinline]] static Status AllocSwapNoMemory(int k) {
  return Status(
      -ENOMEM, "folio_alloc_swap: no free swap slots for an order-" + std::to_string(k) + " folio");
}

Status SwapSystem::RunOn(CpuId cpu) {
  State& s = *s_;
  if (cpu < 0 || cpu >= s.opts.nr_cpus)
    return Status(-EINVAL, "cpu " + std::to_string(cpu) + " is outside 0.." +
                               std::to_string(s.opts.nr_cpus - 1));
  s.current_cpu.store(cpu, std::memory_order_relaxed);
  return Status::Ok();
}

Status SwapSystem::FolioAllocSwap(CpuId cpu, Folio& folio) {
  State& s = *s_;
  const int k = folio.order();
  if (cpu < 0 || cpu >= s.opts.nr_cpus || k < 0 || k > s.pmd_order || !folio.locked() ||
      folio.in_swap_cache() || (k != 0 && k != s.pmd_order && !s.policy.mthp_swap)) [[unlikely]]
    return AllocSwapArgError(cpu, s.opts.nr_cpus, folio, s.pmd_order, s.policy);
  PerCpu& pc = s.cpus[cpu];
  const AllocRequest rq{cpu, k, &folio, CommitKind::kFolio};
  s.current_cpu.store(cpu, std::memory_order_relaxed);
  SwapEntry out;
  bool ok = false;
  for (;;) {
    if (s.policy.slot_cache && k == 0) ok = s.SlotCacheAlloc(pc, cpu, folio, &out);
    if (!ok) {
      pc.lock.Lock();
      if (!s.policy.percpu_hint_per_device) {
        ok = s.AllocFast(pc, rq, &out);
        Bump(ok ? pc.stats.fast_path_hits : pc.stats.fast_path_misses);
      }
      if (!ok) ok = s.AllocSlow(rq, &out);
      pc.lock.Unlock();
    }
    if (ok || k != 0 || !s.policy.sync_discard_retry || !s.SyncDiscard()) break;
    s.sync_discard_retries.fetch_add(1, std::memory_order_relaxed);
  }
  if (!ok) {  // counted once, for the call that returns -ENOMEM
    SpinGuard g(pc.lock);
    Bump(pc.stats.alloc_failures);
  }
  s.MaybeRunDeferred();
  if (!ok) return AllocSwapNoMemory(k);
  return Status::Ok();
}

}  // namespace swaplab::alloc
