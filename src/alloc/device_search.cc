// SPDX-License-Identifier: MIT
// The per-device search after the hint (allocator spec §2.4, §10.2) and
// the synchronous discard retry (§2.9).
#include <mutex>
#include <vector>

#include "alloc/cluster_scan.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

int SwapSystem::State::AllocBatchOnDevice(SwapDevice& d, const AllocRequest& rq, int nr,
                                          uint64_t* out) {
  if (UsesMapScan(d)) {
    if (rq.order == 0) return ScanSwapMap(d, rq, nr, out);
    // 6.1: a PMD folio takes a whole free cluster of an SSD block device;
    // no clusters (6.12's rotational device): order 0 only.
    if (rq.order != pmd_order || nr <= 0 || !UsesSsdMapScan(d) || !d.blkdev) return 0;
    out[0] = AllocWholeCluster(d, rq);
    if (out[0] == 0) return 0;
    if (rq.taken_ahead) pages_ahead.fetch_sub(int64_t{1} << rq.order, std::memory_order_relaxed);
    return 1;
  }
  int n = 0;
  while (n < nr) {
    const uint64_t off = AllocateOnDevice(d, rq);
    if (off == 0) break;
    out[n++] = off;
    if (rq.taken_ahead) pages_ahead.fetch_sub(int64_t{1} << rq.order, std::memory_order_relaxed);
  }
  return n;
}

// Mirrors cluster_alloc_swap_entry(): the hint first, then the policy's
// ordered search steps (§2.4, §10.2). Non-SSD devices serialise the whole
// search on the global cluster lock and take the hint from seq_next.
uint64_t SwapSystem::State::AllocateOnDevice(SwapDevice& d, const AllocRequest& rq) {
  const int k = rq.order;
  if (k > 0 && !d.blkdev) return 0;  // swap files never hold large folios (O3)
  if (UsesMapScan(d)) {              // 6.12: no clusters, order 0 only; 6.1's SSD: and PMD
    uint64_t off = 0;
    if (k == pmd_order && UsesSsdMapScan(d)) return AllocWholeCluster(d, rq);
    return k == 0 && ScanSwapMap(d, rq, 1, &off) == 1 ? off : 0;
  }
  if (UsesSeq(d)) {
    SpinGuard g(d.global_cluster_lock);
    return SearchDevice(d, rq, d.seq_next[k]);
  }
  if (!policy.isolate_clusters && policy.percpu_hint_per_device) return SearchDeviceInPlace(d, rq);
  uint64_t off = 0;
  if (policy.percpu_hint_per_device) off = d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + k];
  return SearchDevice(d, rq, off);
}

uint64_t SwapSystem::State::SearchDevice(SwapDevice& d, const AllocRequest& rq, uint64_t off) {
  const int k = rq.order;
  CpuCounters& stats = cpus[rq.cpu].stats;
  uint64_t found = 0;
  bool abort = false;
  if (off != 0 && off < (d.nr_clusters << cluster_shift)) {
    SwapCluster& c = d.ClusterOf(off, cluster_shift);
    c.lock.Lock();
    if (Usable(c, k)) {
      if (c.count == 0) off = ClusterStart(d, c);
      found = ScanCluster(d, c, off, rq, &abort);
      if (found != 0) Bump(stats.served_by_hint);
    } else {
      c.lock.Unlock();
    }
  }

  // Scans `list` at `order`: one cluster, or until the list yields none.
  auto scan = [&](ListId list, int order, bool all, uint64_t* failed_count) -> uint64_t {
    uint64_t guard = d.nr_clusters + 1;  // each failed cluster leaves the list
    do {
      SwapCluster* c = Isolate(d, list, order);
      if (c == nullptr) return 0;
      c->lock.AssertHeld();  // Isolate returns it locked
      const uint64_t f = ScanCluster(d, *c, ClusterStart(d, *c), rq, &abort);
      if (f != 0 || abort) return f;
      if (failed_count) ++*failed_count;
    } while (all && --guard > 0);
    return 0;
  };

  auto frag_len = [&](int order) {
    SpinGuard g(d.lock);
    return d.frag(order).len;
  };
  bool restart = true;
  while (found == 0 && !abort && restart) {
    restart = false;
    // §10.2 step 4: the frag clusters counted before the nonfull clusters
    // that just failed were moved there.
    uint64_t moved_to_frag = 0;
    for (SearchStep step : policy.search) {
      switch (step) {
        case SearchStep::kFreeIfDiscard:
          if (d.page_discard) found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kFree:
          found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kFreeIfNotDiscard:
          if (!d.page_discard) found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kNonfull:
          if (k < pmd_order) {
            const uint64_t before = frag_len(k);
            found = scan(ListId::kNonfull, k, true, nullptr);
            const uint64_t after = frag_len(k);
            moved_to_frag = after > before ? after - before : 0;
          }
          break;
        case SearchStep::kReclaimFull:
          if (VmSwapFull()) ReclaimFull(d, false);
          break;
        case SearchStep::kFragOne:
          if (k < pmd_order) found = scan(ListId::kFrag, k, false, nullptr);
          break;
        case SearchStep::kFragAll:
          if (k < pmd_order) {
            uint64_t n = frag_len(k);
            n = n > moved_to_frag ? n - moved_to_frag : 0;
            for (uint64_t i = 0; i < n && found == 0 && !abort; ++i)
              found = scan(ListId::kFrag, k, false, nullptr);
          }
          break;
        case SearchStep::kSyncDiscardRestart:
          if (d.page_discard && DoDiscard(d) > 0) restart = true;
          break;
        case SearchStep::kStealHigher:
          if (k == 0) {
            for (int o = 1; o <= pmd_order && found == 0 && !abort; ++o) {
              found = scan(ListId::kFrag, o, true, nullptr);
              if (found == 0 && !abort) found = scan(ListId::kNonfull, o, true, nullptr);
            }
          }
          break;
      }
      if (found != 0) {
        Bump(stats.served_by_step[static_cast<size_t>(step)]);
        break;
      }
      if (abort || restart) break;
    }
  }
  return found;
}

// Mirrors swap_sync_discard(): the first active discard device with
// pending discards runs them now (§2.9).
bool SwapSystem::State::SyncDiscard() {
  std::vector<int> order;
  {
    std::lock_guard g(swap_lock);
    order = active;
  }
  for (int type : order) {
    SwapDevice* d = Dev(type);
    if (!d->TryGet()) continue;
    const bool discarded = d->page_discard && DoDiscard(*d) > 0;
    d->Put();
    if (discarded) return true;
  }
  return false;
}

}  // namespace swaplab::alloc
