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

namespace {

// One search of a device after its hint (§2.4, §10.2): the request, and
// whether a commit found the device no longer WRITEOK (§11 U7).
class DeviceSearch {
 public:
  DeviceSearch(SwapSystem::State& s, SwapDevice& d, const AllocRequest& rq)
      : s_(s), d_(d), rq_(rq), stats_(s.cpus[rq.cpu].stats) {}

  uint64_t FromHint(uint64_t off);
  uint64_t Run(uint64_t found);

 private:
  uint64_t Round(bool* restart);
  uint64_t Step(SearchStep step, bool* restart);
  uint64_t Scan(ListId list, int order, bool all);
  uint64_t FragLen(int order) EXCLUDES(d_.lock);
  uint64_t ScanNonfull();
  uint64_t ScanFragAll();
  uint64_t StealHigher();

  SwapSystem::State& s_;
  SwapDevice& d_;
  const AllocRequest& rq_;
  CpuCounters& stats_;
  bool abort_ = false;
  // §10.2 step 4: the frag clusters counted before the nonfull clusters
  // that just failed were moved there.
  uint64_t moved_to_frag_ = 0;
};

// The cluster of hint `off`, when it can serve the order (0: none).
uint64_t DeviceSearch::FromHint(uint64_t off) {
  uint64_t found = 0;
  if (off != 0 && off < (d_.nr_clusters << s_.cluster_shift)) {
    SwapCluster& c = d_.ClusterOf(off, s_.cluster_shift);
    c.lock.Lock();
    if (s_.Usable(c, rq_.order)) {
      if (c.count == 0) off = s_.ClusterStart(d_, c);
      found = s_.ScanCluster(d_, c, off, rq_, &abort_);
      if (found != 0) Bump(stats_.served_by_hint);
    } else {
      c.lock.Unlock();
    }
  }
  return found;
}

// The policy's steps, in rounds while a synchronous discard restarts them.
uint64_t DeviceSearch::Run(uint64_t found) {
  bool restart = true;
  while (found == 0 && !abort_ && restart) {
    restart = false;
    moved_to_frag_ = 0;
    found = Round(&restart);
  }
  return found;
}

// One pass over the steps, until one serves, aborts or restarts; the step
// that served counts the slot.
uint64_t DeviceSearch::Round(bool* restart) {
  for (SearchStep step : s_.policy.search) {
    const uint64_t found = Step(step, restart);
    if (found != 0) {
      Bump(stats_.served_by_step[static_cast<size_t>(step)]);
      return found;
    }
    if (abort_ || *restart) break;
  }
  return 0;
}

uint64_t DeviceSearch::Step(SearchStep step, bool* restart) {
  const int k = rq_.order;
  switch (step) {
    case SearchStep::kFreeIfDiscard:
      return d_.page_discard ? Scan(ListId::kFree, 0, false) : 0;
    case SearchStep::kFree:
      return Scan(ListId::kFree, 0, false);
    case SearchStep::kFreeIfNotDiscard:
      return !d_.page_discard ? Scan(ListId::kFree, 0, false) : 0;
    case SearchStep::kNonfull:
      return k < s_.pmd_order ? ScanNonfull() : 0;
    case SearchStep::kReclaimFull:
      if (s_.VmSwapFull()) s_.ReclaimFull(d_, false);
      return 0;
    case SearchStep::kFragOne:
      return k < s_.pmd_order ? Scan(ListId::kFrag, k, false) : 0;
    case SearchStep::kFragAll:
      return k < s_.pmd_order ? ScanFragAll() : 0;
    case SearchStep::kSyncDiscardRestart:
      if (d_.page_discard && s_.DoDiscard(d_) > 0) *restart = true;
      return 0;
    case SearchStep::kStealHigher:
      return k == 0 ? StealHigher() : 0;
  }
  return 0;
}

// Scans `list` at `order`: one cluster, or until the list yields none.
uint64_t DeviceSearch::Scan(ListId list, int order, bool all) {
  uint64_t guard = d_.nr_clusters + 1;  // each failed cluster leaves the list
  do {
    SwapCluster* c = s_.Isolate(d_, list, order);
    if (c == nullptr) return 0;
    c->lock.AssertHeld();  // Isolate returns it locked
    const uint64_t f = s_.ScanCluster(d_, *c, s_.ClusterStart(d_, *c), rq_, &abort_);
    if (f != 0 || abort_) return f;
  } while (all && --guard > 0);
  return 0;
}

uint64_t DeviceSearch::FragLen(int order) {
  SpinGuard g(d_.lock);
  return d_.frag(order).len;
}

// Every nonfull[order] cluster; counts the ones that failed onto frag.
uint64_t DeviceSearch::ScanNonfull() {
  const int k = rq_.order;
  const uint64_t before = FragLen(k);
  const uint64_t found = Scan(ListId::kNonfull, k, true);
  const uint64_t after = FragLen(k);
  moved_to_frag_ = after > before ? after - before : 0;
  return found;
}

// As many frag[order] clusters as the list held before the nonfull step.
uint64_t DeviceSearch::ScanFragAll() {
  const int k = rq_.order;
  uint64_t found = 0;
  uint64_t n = FragLen(k);
  n = n > moved_to_frag_ ? n - moved_to_frag_ : 0;
  for (uint64_t i = 0; i < n && found == 0 && !abort_; ++i) found = Scan(ListId::kFrag, k, false);
  return found;
}

// Order 0 from the frag, then the nonfull clusters of each higher order.
uint64_t DeviceSearch::StealHigher() {
  uint64_t found = 0;
  for (int o = 1; o <= s_.pmd_order && found == 0 && !abort_; ++o) {
    found = Scan(ListId::kFrag, o, true);
    if (found == 0 && !abort_) found = Scan(ListId::kNonfull, o, true);
  }
  return found;
}

}  // namespace

uint64_t SwapSystem::State::SearchDevice(SwapDevice& d, const AllocRequest& rq, uint64_t off) {
  DeviceSearch search(*this, d, rq);
  return search.Run(search.FromHint(off));
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
