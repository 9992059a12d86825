// SPDX-License-Identifier: MIT
// The per-device search of Linux 6.12 (policy isolate_clusters off): the
// cluster allocator of the 6.12 mTHP series, which holds the device lock for
// the whole search and scans clusters where they are, on their lists,
// instead of isolating them (v6.14's isolate_lock_cluster /
// relocate_cluster). Read from Debian's linux-source-6.12 mm/swapfile.c.
#include <atomic>

#include "alloc/cluster_lists.h"
#include "alloc/cluster_scan.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

// The lock of a cluster picked at run time is handed to the caller (as
// Isolate does): the analysis cannot name it, the caller asserts it.
SwapCluster* HandOff(SwapCluster& c) RELEASE(c.lock) NO_THREAD_SAFETY_ANALYSIS { return &c; }

// Where the search takes a cluster from a list and what it does with it
// before the scan (6.12 cluster_alloc_swap_entry()).
enum class Take : uint8_t {
  kStay,        // free list, order-0 stealing: scanned where it is
  kToFragTail,  // nonfull[order]: moved to frag[order] (flag FRAG) first
  kRotateFrag,  // frag[order]: moved to its tail first
};

// Whether 6.12's scan can take anything from c: not a cluster being
// discarded (BAD in 6.12's swap_map) nor one the hibernation session holds.
// A FREE cluster (count 0) gets its table now.
bool ScannableInPlace(SwapSystem::State& s, SwapCluster& c) REQUIRES(c.lock) {
  if (c.flag == ClusterFlag::kDiscard || c.flag == ClusterFlag::kNone) return false;
  if (c.hib_claimed || c.hib_whole || c.hib_reserved) return false;
  if (!c.table) s.AllocTable(c);
  return true;
}

}  // namespace

// The first cluster of the list whose lock can be taken (the kernel takes
// the head under the device lock; only another thread holding a cluster
// lock makes them differ), locked, moved as `take` says, still listed.
static SwapCluster* TakeFromList(SwapSystem::State& s, SwapDevice& d, ListId list, int order,
                                 Take take) {
  SpinGuard g(d.lock);
  ClusterList& l = s.ListDeviceLocked(d, list, order);
  for (uint32_t i = l.head; i != kNil; i = d.clusters[i].next) {
    SwapCluster& c = d.clusters[i];
    if (!c.lock.TryLock()) continue;
    if (take != Take::kStay) s.MoveClusterDeviceLocked(d, c, ClusterFlag::kFrag);
    return HandOff(c);
  }
  return nullptr;
}

// Mirrors 6.12 cluster_alloc_range()'s list moves: a FREE cluster goes to
// nonfull[order] at its first allocation (unless it is filled whole), a
// cluster that became full to the full list; inuse grows in the same
// device-lock section (swap_range_alloc).
void SwapSystem::State::PlaceInPlace(SwapDevice& d, SwapCluster& c, uint64_t added) {
  if (added == 0) return;
  SpinGuard g(d.lock);
  if (c.flag == ClusterFlag::kFree && c.count < cluster_size)
    MoveClusterDeviceLocked(d, c, ClusterFlag::kNonfull);
  if (c.count == cluster_size) MoveClusterDeviceLocked(d, c, ClusterFlag::kFull);
  SwapUsageAddDeviceLocked(d, added);
}

// Mirrors 6.12 alloc_swap_scan_cluster(): from `off` (not moved to the
// cluster's start, even when the cluster became free meanwhile), aligned
// steps, at most one allocation. A cluster on the discard list has BAD
// slots in 6.12's swap_map and yields nothing; a free one is scanned in
// place and leaves the free list when committed to.
uint64_t SwapSystem::State::ScanClusterInPlace(SwapDevice& d, SwapCluster& c, uint64_t off,
                                               const AllocRequest& rq, uint64_t* next,
                                               bool* abort) {
  const uint32_t n = 1u << rq.order;
  const uint64_t start = ClusterStart(d, c);
  const uint64_t last = start + cluster_size - n;
  uint64_t found = 0, added = 0;
  *next = 0;
  if (ScannableInPlace(*this, c) && c.count + n <= cluster_size) {
    for (uint64_t o = off; o <= last; o += n) {
      const RangeCheck r = CheckRange(*this, c, static_cast<uint32_t>(o - start), n);
      if (r == RangeCheck::kBusy) continue;
      if (r == RangeCheck::kNeedsReclaim) {
        // Mirrors 6.12 cluster_reclaim_range(): drops the locks, stops at
        // the first slot it cannot take back, then reads the range again.
        c.lock.Unlock();
        ReclaimRangeUnlocked(*this, d, c, start, o, n, /*strict=*/true);
        c.lock.Lock();
        if (!ScannableInPlace(*this, c)) break;
        bool all_empty = true;
        for (uint64_t s = o; s < o + n; ++s) all_empty &= c.table[s - start] == slot::kEmpty;
        if (!all_empty) continue;
      }
      if (!Commit(d, c, start, o, rq)) {
        *abort = true;  // not WRITEOK (§11 U7)
        break;
      }
      found = o;
      added = n;
      if (c.count < cluster_size && o + n <= last) *next = o + n;
      break;
    }
  }
  PlaceInPlace(d, c, added);
  // Nothing taken: the table goes again. The two fields are read apart:
  // tested together, GCC loads them as one word that also holds the
  // cluster's lock byte, which another CPU's spin on it writes (TSan).
  const uint32_t count = c.count;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (count == 0 && c.flag == ClusterFlag::kFree && c.table) c.table.reset();
  c.lock.Unlock();
  return found;
}

// Mirrors 6.12 cluster_alloc_swap_entry(): this CPU's next[order] on this
// device first, then the policy's steps with clusters scanned in place
// (free: the head of the free list, and the search ends there whatever it
// found; nonfull: each cluster moved to frag before its scan; frag-all:
// the frag list rotated, as many clusters as it held before the nonfull
// step added to it; a discard restart goes back to next[order]). The
// offset the last scan returned becomes next[order].
uint64_t SwapSystem::State::SearchDeviceInPlace(SwapDevice& d, const AllocRequest& rq) {
  const int k = rq.order;
  CpuCounters& stats = cpus[rq.cpu].stats;
  uint64_t& hint = d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + k];
  uint64_t found = 0, next = 0;
  bool abort = false;
  // Scans a cluster taken off `list` (nullptr: the list had none).
  auto scan = [&](SwapCluster* c) -> bool {
    if (c == nullptr) return false;
    c->lock.AssertHeld();  // TakeFromList returns it locked
    found = ScanClusterInPlace(d, *c, ClusterStart(d, *c), rq, &next, &abort);
    return true;
  };
  auto list_len = [&](ListId list, int order) {
    SpinGuard g(d.lock);
    return ListDeviceLocked(d, list, order).len;
  };
  for (int restarts = 0;; ++restarts) {
    next = 0;
    const uint64_t off = hint;
    if (off != 0 && off < (d.nr_clusters << cluster_shift)) {
      SwapCluster& c = d.ClusterOf(off, cluster_shift);
      c.lock.Lock();
      found = ScanClusterInPlace(d, c, off, rq, &next, &abort);
      if (found != 0) Bump(stats.served_by_hint);
    }
    bool restart = false;
    uint64_t frags = 0;  // clusters the nonfull and frag steps scanned
    for (SearchStep step : policy.search) {
      if (found != 0 || abort) break;
      bool done = false;
      switch (step) {
        case SearchStep::kFreeIfDiscard:
        case SearchStep::kFree:
        case SearchStep::kFreeIfNotDiscard:
          if ((step == SearchStep::kFreeIfDiscard && !d.page_discard) ||
              (step == SearchStep::kFreeIfNotDiscard && d.page_discard))
            break;
          done = scan(TakeFromList(*this, d, ListId::kFree, 0, Take::kStay));
          break;
        case SearchStep::kNonfull:
          if (k >= pmd_order) break;
          for (uint64_t guard = d.nr_clusters + 1; found == 0 && !abort && guard > 0; --guard) {
            if (!scan(TakeFromList(*this, d, ListId::kNonfull, k, Take::kToFragTail))) break;
            ++frags;
          }
          break;
        case SearchStep::kReclaimFull:
          if (VmSwapFull()) ReclaimFull(d, false);
          break;
        case SearchStep::kFragOne:
        case SearchStep::kFragAll:
          if (k >= pmd_order) break;
          // frag-all: 6.12's bound, the live frag count (frag_cluster_nr)
          // against every cluster scanned so far; frag-one: one cluster.
          for (bool first = true; found == 0 && !abort; first = false) {
            if (step == SearchStep::kFragOne ? !first : frags >= list_len(ListId::kFrag, k)) break;
            if (!scan(TakeFromList(*this, d, ListId::kFrag, k, Take::kRotateFrag))) break;
            ++frags;
          }
          break;
        case SearchStep::kSyncDiscardRestart:
          if (list_len(ListId::kDiscard, 0) > 0 && restarts < 64) {
            DoDiscard(d);
            restart = true;
          }
          break;
        case SearchStep::kStealHigher:
          if (k != 0) break;
          // The head of frag[o], then of nonfull[o]: an order-0 scan of a
          // cluster with count < CLUSTER cannot fail on one thread (6.12
          // loops on the head until it does not).
          for (int o = 1; o <= pmd_order && found == 0 && !abort; ++o) {
            for (ListId l : {ListId::kFrag, ListId::kNonfull}) {
              if (found == 0 && !abort) scan(TakeFromList(*this, d, l, o, Take::kStay));
            }
          }
          break;
      }
      if (found != 0) Bump(stats.served_by_step[static_cast<size_t>(step)]);
      if (done || restart) break;
    }
    if (!restart || found != 0 || abort) break;
  }
  hint = next;
  return found;
}

}  // namespace swaplab::alloc
