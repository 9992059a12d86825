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

namespace {

// One 6.12 search of a device (SearchDeviceInPlace): this CPU's next[order]
// on the device, what the last scan found and set it to, whether a commit
// found the device no longer WRITEOK (§11 U7), and the rounds a discard
// restarted.
class InPlaceSearch {
 public:
  InPlaceSearch(SwapSystem::State& s, SwapDevice& d, const AllocRequest& rq)
      : s_(s),
        d_(d),
        rq_(rq),
        stats_(s.cpus[rq.cpu].stats),
        hint_(d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + rq.order]) {}

  uint64_t Run();

 private:
  void FromHint();
  bool Round();
  bool Step(SearchStep step, bool* restart);
  bool Scan(SwapCluster* c);
  uint64_t ListLen(ListId list, int order) EXCLUDES(d_.lock);
  void ScanNonfull();
  void ScanFrag(SearchStep step);
  bool DiscardRestart();
  void StealHigher();

  SwapSystem::State& s_;
  SwapDevice& d_;
  const AllocRequest& rq_;
  CpuCounters& stats_;
  uint64_t& hint_;
  uint64_t found_ = 0, next_ = 0;
  bool abort_ = false;
  int restarts_ = 0;
  uint64_t frags_ = 0;  // clusters the nonfull and frag steps scanned
};

// Rounds of the hint and the steps, while a discard restarts them; the
// offset the last scan returned becomes next[order].
uint64_t InPlaceSearch::Run() {
  for (restarts_ = 0;; ++restarts_) {
    next_ = 0;
    FromHint();
    const bool restart = Round();
    if (!restart || found_ != 0 || abort_) break;
  }
  hint_ = next_;
  return found_;
}

void InPlaceSearch::FromHint() {
  const uint64_t off = hint_;
  if (off != 0 && off < (d_.nr_clusters << s_.cluster_shift)) {
    SwapCluster& c = d_.ClusterOf(off, s_.cluster_shift);
    c.lock.Lock();
    found_ = s_.ScanClusterInPlace(d_, c, off, rq_, &next_, &abort_);
    if (found_ != 0) Bump(stats_.served_by_hint);
  }
}

// One pass over the steps until one serves, ends the search or restarts
// it; returns whether it restarts.
bool InPlaceSearch::Round() {
  bool restart = false;
  frags_ = 0;
  for (SearchStep step : s_.policy.search) {
    if (found_ != 0 || abort_) break;
    const bool done = Step(step, &restart);
    if (found_ != 0) Bump(stats_.served_by_step[static_cast<size_t>(step)]);
    if (done || restart) break;
  }
  return restart;
}

// One step; returns whether the search ends there whatever it found.
bool InPlaceSearch::Step(SearchStep step, bool* restart) {
  const bool below_pmd = rq_.order < s_.pmd_order;
  switch (step) {
    case SearchStep::kFreeIfDiscard:
    case SearchStep::kFree:
    case SearchStep::kFreeIfNotDiscard:
      if ((step == SearchStep::kFreeIfDiscard && !d_.page_discard) ||
          (step == SearchStep::kFreeIfNotDiscard && d_.page_discard))
        return false;
      return Scan(TakeFromList(s_, d_, ListId::kFree, 0, Take::kStay));
    case SearchStep::kNonfull:
      if (below_pmd) ScanNonfull();
      return false;
    case SearchStep::kReclaimFull:
      if (s_.VmSwapFull()) s_.ReclaimFull(d_, false);
      return false;
    case SearchStep::kFragOne:
    case SearchStep::kFragAll:
      if (below_pmd) ScanFrag(step);
      return false;
    case SearchStep::kSyncDiscardRestart:
      *restart = DiscardRestart();
      return false;
    case SearchStep::kStealHigher:
      if (rq_.order == 0) StealHigher();
      return false;
  }
  return false;
}

// Scans a cluster taken off a list (nullptr: the list had none).
bool InPlaceSearch::Scan(SwapCluster* c) {
  if (c == nullptr) return false;
  c->lock.AssertHeld();  // TakeFromList returns it locked
  found_ = s_.ScanClusterInPlace(d_, *c, s_.ClusterStart(d_, *c), rq_, &next_, &abort_);
  return true;
}

uint64_t InPlaceSearch::ListLen(ListId list, int order) {
  SpinGuard g(d_.lock);
  return s_.ListDeviceLocked(d_, list, order).len;
}

// nonfull: each cluster moved to frag before its scan.
void InPlaceSearch::ScanNonfull() {
  for (uint64_t guard = d_.nr_clusters + 1; found_ == 0 && !abort_ && guard > 0; --guard) {
    if (!Scan(TakeFromList(s_, d_, ListId::kNonfull, rq_.order, Take::kToFragTail))) break;
    ++frags_;
  }
}

// frag-all: 6.12's bound, the live frag count (frag_cluster_nr)
// against every cluster scanned so far; frag-one: one cluster.
void InPlaceSearch::ScanFrag(SearchStep step) {
  const int k = rq_.order;
  for (bool first = true; found_ == 0 && !abort_; first = false) {
    if (step == SearchStep::kFragOne ? !first : frags_ >= ListLen(ListId::kFrag, k)) break;
    if (!Scan(TakeFromList(s_, d_, ListId::kFrag, k, Take::kRotateFrag))) break;
    ++frags_;
  }
}

// A discard restart goes back to next[order] (at most 64 times).
bool InPlaceSearch::DiscardRestart() {
  if (ListLen(ListId::kDiscard, 0) > 0 && restarts_ < 64) {
    s_.DoDiscard(d_);
    return true;
  }
  return false;
}

// The head of frag[o], then of nonfull[o]: an order-0 scan of a
// cluster with count < CLUSTER cannot fail on one thread (6.12
// loops on the head until it does not).
void InPlaceSearch::StealHigher() {
  for (int o = 1; o <= s_.pmd_order && found_ == 0 && !abort_; ++o) {
    for (ListId l : {ListId::kFrag, ListId::kNonfull}) {
      if (found_ == 0 && !abort_) Scan(TakeFromList(s_, d_, l, o, Take::kStay));
    }
  }
}

}  // namespace

// Mirrors 6.12 cluster_alloc_swap_entry(): this CPU's next[order] on this
// device first, then the policy's steps with clusters scanned in place
// (free: the head of the free list, and the search ends there whatever it
// found; nonfull: each cluster moved to frag before its scan; frag-all:
// the frag list rotated, as many clusters as it held before the nonfull
// step added to it; a discard restart goes back to next[order]). The
// offset the last scan returned becomes next[order].
uint64_t SwapSystem::State::SearchDeviceInPlace(SwapDevice& d, const AllocRequest& rq) {
  return InPlaceSearch(*this, d, rq).Run();
}

}  // namespace swaplab::alloc
