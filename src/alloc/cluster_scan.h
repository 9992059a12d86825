// SPDX-License-Identifier: MIT
// The scan of one cluster and the commit of the slots it found (allocator
// spec §2.6-§2.8; kernel: alloc_swap_scan_cluster, cluster_scan_range,
// __swap_cluster_alloc_entries), with the hint it rewrites. Inline: the
// per-CPU fast path (fast_path.cc) runs a flattened copy, the per-device
// search (device_search.cc) calls it.
#pragma once

#include <cstdint>
#include <string>

#include "alloc/cluster_lists.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

enum class RangeCheck { kOk, kBusy, kNeedsReclaim };

// Mirrors cluster_reclaim_range()'s walk over [o, o + n) of cluster c
// (whose first slot is `start`), entered and left with c's lock dropped:
// each cache-only slot is taken back (TTRS_ANYWAY | TTRS_DIRECT); the walk
// stops at a slot in use or a folio kept. `strict` (6.12): it also stops
// at a slot that is not in the swap cache and at one with no folio to take
// (__try_to_reclaim_swap() <= 0). The caller reads the range again.
inline void ReclaimRangeUnlocked(SwapSystem::State& s, SwapDevice& d, SwapCluster& c,
                                 uint64_t start, uint64_t o, uint32_t n, bool strict) {
  for (uint64_t x = o; x < o + n; ++x) {
    c.lock.Lock();
    const uint64_t e = c.table ? c.table[x - start] : slot::kEmpty;
    c.lock.Unlock();
    if (e == slot::kEmpty) continue;
    if (slot::Kind(e) == SlotKind::kBad || slot::Count(e) != 0) break;
    if (slot::Kind(e) != SlotKind::kCached) {
      if (strict) break;
      continue;
    }
    const int r = s.TryReclaim(d, x, kReclaimAnyway | kReclaimDirect);
    if (r < 0 || (strict && r == 0)) break;
  }
}

// seq_next is written under the global cluster lock, which AllocateOnDevice
// holds for non-SSD devices only (the devices UsesSeq names): the analysis
// cannot tie a lock to that run-time condition, so the branch asserts it.
// The per-CPU hints never name such a device, so the fast path never comes
// here with one.
inline void SwapSystem::State::SetHint(SwapDevice& d, const AllocRequest& rq, uint64_t next) {
  const int k = rq.order;
  if (UsesSeq(d)) {
    d.global_cluster_lock.AssertHeld();
    d.seq_next[k] = next;
  } else if (policy.percpu_hint_per_device) {
    d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + k] = next;
  } else {
    PerCpu& pc = cpus[rq.cpu];
    pc.dev[k] = d.type;
    pc.off[k] = next;
  }
}

// Mirrors cluster_scan_range(): EMPTY is fine; a cache-only slot only when
// swap is more than half full, and then it must be reclaimed first (§2.7).
// vm_swap_full() is read only when a cache-only slot is met: it has no side
// effects, and an all-EMPTY range (the fast path's case) needs no answer.
inline RangeCheck CheckRange(const SwapSystem::State& s, const SwapCluster& c, uint32_t first,
                             uint32_t n) REQUIRES(c.lock) {
  const uint64_t e0 = c.table[first];
  if (n == 1 && e0 == slot::kEmpty) return RangeCheck::kOk;  // order 0, free slot
  bool reclaim = false;
  for (uint32_t i = first; i < first + n; ++i) {
    const uint64_t e = c.table[i];
    if (e == slot::kEmpty) continue;
    if (slot::Kind(e) == SlotKind::kCached && slot::Count(e) == 0 && s.VmSwapFull()) {
      reclaim = true;
      continue;
    }
    return RangeCheck::kBusy;
  }
  return reclaim ? RangeCheck::kNeedsReclaim : RangeCheck::kOk;
}

// Mirrors alloc_swap_scan_cluster(): forward only, aligned, at most one
// allocation; relocates the cluster and rewrites the hint (§2.6).
// Entered with c locked, returns with it unlocked; drops and retakes it to
// reclaim.
// AllocFast is flattened, so the fast path runs an inlined copy.
inline uint64_t SwapSystem::State::ScanCluster(SwapDevice& d, SwapCluster& c, uint64_t off,
                                               const AllocRequest& rq, bool* abort) {
  const int k = rq.order;
  const uint32_t n = 1u << k;
  const uint64_t start = ClusterStart(d, c);
  const uint64_t last = start + cluster_size - n;
  uint64_t found = 0, next = 0, added = 0;
  if (c.count + n <= cluster_size) {
    uint64_t o = off;
    while (o <= last) {
      const RangeCheck r = CheckRange(*this, c, static_cast<uint32_t>(o - start), n);
      if (r == RangeCheck::kBusy) {
        o += n;
        continue;
      }
      if (r == RangeCheck::kNeedsReclaim) {
        // Mirrors cluster_reclaim_range(): drops the cluster lock.
        c.lock.Unlock();
        ReclaimRangeUnlocked(*this, d, c, start, o, n, /*strict=*/false);
        c.lock.Lock();
        if (!Usable(c, k)) goto finish;
        if (c.count == 0) {
          o = start;
        } else {
          bool all_empty = true;
          for (uint64_t s = o; s < o + n; ++s) all_empty &= c.table[s - start] == slot::kEmpty;
          if (!all_empty) {
            o += n;
            continue;
          }
        }
      }
      if (!Commit(d, c, start, o, rq)) {
        *abort = true;  // not WRITEOK: fail the whole device (§11 U7)
        goto finish;
      }
      found = o;
      added = n;
      if (c.count < cluster_size && o + n <= last) next = o + n;
      break;
    }
  }
finish:
  Relocate(d, c, added);  // and inuse += added (swap_range_alloc)
  c.lock.Unlock();
  SetHint(d, rq, next);
  return found;
}

// C5 seen at commit time (kept out of the inlined fast path).
[[gnu::cold, gnu::noinline]] inline void RecordOrderMismatch(SwapSystem::State& s, int order,
                                                             uint64_t off, int type,
                                                             int cluster_order) {
  s.RecordViolation("C5: order-" + std::to_string(order) + " allocation at offset " +
                    std::to_string(off) + " of device " + std::to_string(type) +
                    " in a cluster of order " + std::to_string(cluster_order));
}

// Mirrors __swap_cluster_alloc_entries() (§2.8). The usage change of
// swap_range_alloc() follows in Relocate, in the same cluster-lock section.
inline bool SwapSystem::State::Commit(SwapDevice& d, SwapCluster& c, uint64_t start, uint64_t off,
                                      const AllocRequest& rq) {
  if (!d.writeok.load(std::memory_order_acquire)) return false;
  const uint32_t n = 1u << rq.order;
  uint64_t e;
  switch (rq.kind) {
    case CommitKind::kFolio:
      e = slot::Cached(rq.folio, 0);
      break;
    case CommitKind::kSlotCache:
      e = slot::Cached(nullptr, 0);
      break;
    case CommitKind::kHibernation:
    default:
      e = policy.hibernation_hib_entry ? slot::Hib() : slot::Shadow(1);
      break;
  }
  const uint64_t base = off - start;
  // Onto EMPTY slots only (CheckRange, or the reclaim that emptied them).
  for (uint32_t i = 0; i < n; ++i) c.table[base + i] = e;
  if (slot::Reclaimable(e)) AddReclaimable(c, static_cast<int>(n));
  if (c.count == 0) {
    c.order = static_cast<uint8_t>(rq.order);
  } else if (rq.order > 0 && c.order != rq.order && policy.isolate_clusters) {
    // (6.12, isolate_clusters off, can do this: a CPU's next[order] may
    // point into a cluster that was freed and taken for another order.)
    RecordOrderMismatch(*this, rq.order, off, d.type, c.order);
  }
  c.count += n;
  if (rq.folio != nullptr) FolioAccess::SetSwap(*rq.folio, SwapEntry{d.type, off});
  return true;
}

}  // namespace swaplab::alloc
