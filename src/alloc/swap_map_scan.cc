// SPDX-License-Identifier: MIT
// Linux 6.12's allocation on a device without clusters (policy
// rotational_swap_map_scan): 6.12 gives a device clusters only when its
// block device is non-rotational (swapon: setup_clusters() behind
// bdev_nonrot()); every other device is served by the swap_map scan of
// scan_swap_map_slots(), read from Debian's linux-source-6.12
// mm/swapfile.c. Linux 6.1's SSD (policy ssd_swap_map_scan) goes through
// the same function with cluster_info: per-CPU clusters taken from the
// free list's head and per-CPU scan bases (6.1.192's mm/swapfile.c). The
// model keeps its clusters, lists and counts for such a device (the
// invariants hold as for any other: a used cluster sits on nonfull[0] or
// the full list, which 6.1 does not have), but decides placements from the
// slots and the free list alone, as the kernel does.
#include <algorithm>

#include "alloc/cluster_lists.h"
#include "alloc/cluster_scan.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

constexpr int kLatencyLimit = 256;      // LATENCY_LIMIT
constexpr int kAddressSpaceShift = 14;  // SWAP_ADDRESS_SPACE_SHIFT: 64 MiB of pages

// One step of a device's scan-base generator (SplitMix64): the model's
// stand-in for the kernel's prandom, deterministic per seed.
uint64_t NextDraw(uint64_t* state) { return SplitMix64Next(state); }

// prandom_u32_max(n): a draw in [0, n).
uint64_t DrawBelow(uint64_t* state, uint64_t n) { return n == 0 ? 0 : NextDraw(state) % n; }

// Mirrors 6.1 swap_range_alloc()'s bounds: n slots from `offset` taken.
void RangeAllocBoundsLocked(SwapDevice& d, uint64_t offset, uint64_t n) REQUIRES(d.lock) {
  if (d.inuse_pages() == d.pages) {
    d.lowest_bit = d.max;
    d.highest_bit = 0;
    return;
  }
  if (offset == d.lowest_bit) d.lowest_bit += n;
  if (offset + n - 1 == d.highest_bit) d.highest_bit -= n;
}

// One call of scan_swap_map_slots() for order 0: its locals, and its labels
// (checks, scan, done, no_page) as the steps of Run.
class MapScan {
 public:
  MapScan(SwapSystem::State& s, SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out)
      : s_(s),
        d_(d),
        rq_(rq),
        nr_(nr),
        out_(out),
        cluster_(s.cluster_size),
        ssd_(s.UsesSsdMapScan(d)) {}

  // The caller holds d's global cluster lock (ScanSwapMap), which the
  // analysis cannot tie to d_: each step that touches cluster_next /
  // cluster_nr / the per-CPU state asserts it.
  int Run() {
    d_.global_cluster_lock.AssertHeld();
    if (ssd_) cpu_ = &d_.ssd_cpu[static_cast<size_t>(rq_.cpu)];
    offset_ = scan_base_ = ssd_ ? cpu_->scan_base : d_.cluster_next;
    Label at = Label::kChecks;
    if (ssd_) {
      if (!TrySsdCluster()) at = Label::kScan;
    } else if (d_.cluster_nr-- == 0) {
      FindEmptyCluster();
    }
    while (at != Label::kDone && at != Label::kNoPage)
      at = at == Label::kChecks ? Checks() : Scan();
    if (at == Label::kDone) SetClusterNext(offset_ + 1);
    return n_ret_;
  }

 private:
  enum class Label : uint8_t { kChecks, kScan, kDone, kNoPage };

  // A cluster on the discard list reads as BAD, as 6.1's
  // swap_cluster_schedule_discard() marks its swap_map (only an SSD under
  // ssd_swap_map_scan gets there: the rotational scan frees no cluster to
  // the discard list).
  // Past the area (6.1's SSD scan can read swap_map[max]: its short look
  // further runs to a per-CPU base of max, the slot after the last one)
  // the kernel reads past its swap_map: taken as 0 here, so the scan goes
  // to `checks`, which sends it back to lowest_bit.
  uint64_t Entry(uint64_t off) {
    if (off >= d_.max) return slot::kEmpty;
    SwapCluster& c = d_.ClusterOf(off, s_.cluster_shift);
    SpinGuard g(c.lock);
    if (c.flag == ClusterFlag::kDiscard) return slot::Bad();
    return c.table ? c.table[off - s_.ClusterStart(d_, c)] : slot::kEmpty;
  }
  bool Used(uint64_t off) { return Entry(off) != slot::kEmpty; }
  // SWAP_HAS_CACHE alone: in the swap cache (or a slot cache) with count 0.
  bool OnlyCache(uint64_t off) {
    const uint64_t e = Entry(off);
    return slot::Kind(e) == SlotKind::kCached && slot::Count(e) == 0;
  }
  uint64_t Lowest() {
    SpinGuard g(d_.lock);
    return d_.lowest_bit;
  }
  uint64_t Highest() {
    SpinGuard g(d_.lock);
    return d_.highest_bit;
  }
  uint64_t FreePages() { return d_.pages - d_.inuse_pages(); }
  // Counts one unit of work against LATENCY_LIMIT; true when it ran out
  // (the kernel would reschedule there) and was refilled.
  bool Tick() {
    if (--latency_ >= 0) return false;
    latency_ = kLatencyLimit;
    return true;
  }

  // cluster_nr ran out: start a new run at the first CLUSTER empty slots in
  // a row from lowest_bit, or go on from cluster_next when there are none
  // (or fewer than CLUSTER slots free).
  void FindEmptyCluster() {
    d_.global_cluster_lock.AssertHeld();
    if (FreePages() < cluster_) {
      d_.cluster_nr = cluster_ - 1;
      return;
    }
    scan_base_ = offset_ = Lowest();
    uint64_t last_in_cluster = offset_ + cluster_ - 1;
    for (; last_in_cluster <= Highest(); ++offset_) {
      if (Used(offset_)) {
        last_in_cluster = offset_ + cluster_;
      } else if (offset_ == last_in_cluster) {
        offset_ -= cluster_ - 1;
        d_.cluster_next = offset_;
        d_.cluster_nr = cluster_ - 1;
        return;
      }
      Tick();
    }
    offset_ = scan_base_;
    d_.cluster_nr = cluster_ - 1;
  }

  // Mirrors 6.1 scan_swap_map_try_ssd_cluster(): the next empty slot of
  // this CPU's cluster, taking the free list's head when it has none (and
  // running the pending discards when only discarded clusters are left);
  // false when no free cluster is left.
  bool TrySsdCluster() {
    d_.global_cluster_lock.AssertHeld();
    for (;;) {
      if (cpu_->cluster == 0) {
        uint32_t head, discarding;
        {
          SpinGuard g(d_.lock);
          head = d_.free_list().head;
          discarding = d_.discard_list().head;
        }
        if (head != kNil) {
          cpu_->cluster = uint64_t{head} + 1;
          cpu_->next = uint64_t{head} << s_.cluster_shift;
        } else if (discarding != kNil && s_.DoDiscard(d_) > 0) {
          offset_ = scan_base_ = cpu_->scan_base;  // reread after the discard
          continue;
        } else {
          return false;
        }
      }
      // Another CPU may have taken slots of this cluster meanwhile.
      const uint64_t idx = cpu_->cluster - 1;
      const uint64_t max = std::min(d_.max, (idx + 1) << s_.cluster_shift);
      uint64_t tmp = cpu_->next;
      while (tmp < max && Used(tmp)) ++tmp;
      if (tmp >= max) {
        cpu_->cluster = 0;
        continue;
      }
      cpu_->next = tmp + 1;
      offset_ = scan_base_ = tmp;
      return true;
    }
  }

  // Mirrors 6.1 scan_swap_map_ssd_cluster_conflict(): `off` lies in a free
  // cluster that is not the free list's head (the linear scan or a stale
  // per-CPU cluster got there); this CPU's cluster is dropped then.
  bool Conflict(uint64_t off) {
    d_.global_cluster_lock.AssertHeld();
    const uint64_t idx = off >> s_.cluster_shift;
    if (idx >= d_.nr_clusters) return false;
    SwapCluster& c = d_.clusters[idx];
    bool conflict;
    {
      SpinGuard g(c.lock);
      SpinGuard dg(d_.lock);
      const uint32_t head = d_.free_list().head;
      conflict = head != kNil && idx != head && c.flag == ClusterFlag::kFree;
    }
    if (conflict) cpu_->cluster = 0;
    return conflict;
  }

  // Mirrors set_cluster_next(): a rotational device's cluster_next; an
  // SSD's per-CPU base, which jumps to a random 64 MiB-aligned place
  // between lowest_bit and highest_bit when it would cross into the next
  // 64 MiB (6.1; drawn from the device's generator).
  void SetClusterNext(uint64_t next) {
    d_.global_cluster_lock.AssertHeld();
    if (!ssd_) {
      d_.cluster_next = next;
      return;
    }
    if ((cpu_->scan_base >> kAddressSpaceShift) != (next >> kAddressSpaceShift)) {
      const uint64_t lo = Lowest(), hi = Highest();
      if (hi <= lo) return;  // no free slot
      next = lo + DrawBelow(&d_.scan_rng, hi - lo + 1);
      next &= ~((uint64_t{1} << kAddressSpaceShift) - 1);
      next = std::max(next, lo);
    }
    cpu_->scan_base = next;
  }

  // Takes the slot at offset_ (it is empty).
  bool Take() {
    SwapCluster& c = d_.ClusterOf(offset_, s_.cluster_shift);
    SpinGuard g(c.lock);
    if (!c.table) s_.AllocTable(c);
    if (!s_.Commit(d_, c, s_.ClusterStart(d_, c), offset_, rq_)) return false;
    s_.PlaceInPlace(d_, c, 1);
    {
      SpinGuard dg(d_.lock);
      RangeAllocBoundsLocked(d_, offset_, 1);
    }
    if (rq_.taken_ahead) s_.pages_ahead.fetch_sub(1, std::memory_order_relaxed);
    out_[n_ret_++] = offset_;
    return true;
  }

  Label Checks() {
    d_.global_cluster_lock.AssertHeld();
    for (;;) {
      while (ssd_ && Conflict(offset_)) {
        if (n_ret_ > 0) return Label::kDone;  // a break: slots in hand
        if (!TrySsdCluster()) return Label::kScan;
      }
      if (!d_.writeok.load(std::memory_order_acquire) || Highest() == 0) return Label::kNoPage;
      if (offset_ > Highest()) scan_base_ = offset_ = Lowest();
      // A cache-only slot is taken back first when swap is more than half
      // full (6.12: TTRS_ANYWAY | TTRS_DIRECT; 6.1, policy
      // scan_reclaim_direct off: TTRS_ANYWAY, through free_swap_slot());
      // if that fails, look further.
      if (s_.VmSwapFull() && OnlyCache(offset_)) {
        const unsigned direct = s_.policy.scan_reclaim_direct ? unsigned{kReclaimDirect} : 0u;
        // Every allocation holds its CPU's lock through the scan.
        if (s_.TryReclaim(d_, offset_, kReclaimAnyway | direct, rq_.cpu) > 0) continue;
        return Label::kScan;
      }
      if (Used(offset_)) return n_ret_ == 0 ? Label::kScan : Label::kDone;
      if (!Take()) return Label::kNoPage;
      if (n_ret_ == nr_ || offset_ >= Highest()) return Label::kDone;
      if (Tick() && n_ret_ > 0) return Label::kDone;  // time for a break
      // The run goes on: in this CPU's cluster (SSD), or while it has slots
      // left and the next one is free.
      if (ssd_) {
        if (TrySsdCluster()) continue;
      } else if (d_.cluster_nr != 0 && !Used(++offset_)) {
        --d_.cluster_nr;
        continue;
      }
      // A short look further, unless the search already ran long.
      if (scanned_many_) return Label::kDone;
      const uint64_t limit = offset_ < scan_base_ ? scan_base_ : Highest();
      bool found = false;
      for (; offset_ <= limit && --latency_ > 0; ++offset_) {
        if (!Used(offset_)) {
          found = true;
          break;
        }
      }
      if (!found) return Label::kDone;
    }
  }

  // swap_offset_available_and_locked(): empty, or cache-only when swap is
  // more than half full.
  bool Available(uint64_t off) { return !Used(off) || (s_.VmSwapFull() && OnlyCache(off)); }

  // The scan for any usable slot: on to highest_bit, then from lowest_bit
  // up to where this call began.
  Label Scan() {
    while (++offset_ <= Highest()) {
      if (Tick()) scanned_many_ = true;
      if (Available(offset_)) return Label::kChecks;
    }
    offset_ = Lowest();
    while (offset_ < scan_base_) {
      if (Tick()) scanned_many_ = true;
      if (Available(offset_)) return Label::kChecks;
      ++offset_;
    }
    return Label::kNoPage;
  }

  SwapSystem::State& s_;
  SwapDevice& d_;
  const AllocRequest& rq_;
  const int nr_;
  uint64_t* const out_;
  const uint64_t cluster_;
  const bool ssd_;                     // 6.1's SSD: cluster_info, per-CPU state
  SwapDevice::SsdCpu* cpu_ = nullptr;  // this CPU's, when ssd_
  uint64_t offset_ = 0, scan_base_ = 0;
  int n_ret_ = 0;
  int latency_ = kLatencyLimit;
  bool scanned_many_ = false;
};

}  // namespace

// Mirrors 6.12 mm/swapfile.c: scan_swap_map_slots() on a device without
// cluster_info, and 6.1's on an SSD with it (order 0; the caller refuses
// larger orders). The device's allocation is serialised on its global
// cluster lock (the kernel's si->lock, which the scan drops only around its
// long loops).
int SwapSystem::State::ScanSwapMap(SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out) {
  if (rq.order != 0 || nr <= 0) return 0;
  SpinGuard g(d.global_cluster_lock);
  return MapScan(*this, d, rq, nr, out).Run();
}

// Mirrors 6.1 swap_alloc_cluster(): the free list's head, every slot of it
// (no discard is run for it, and no other cluster is tried).
uint64_t SwapSystem::State::AllocWholeCluster(SwapDevice& d, const AllocRequest& rq) {
  SpinGuard g(d.global_cluster_lock);
  uint32_t head;
  {
    SpinGuard dg(d.lock);
    head = d.free_list().head;
  }
  if (head == kNil) return 0;
  SwapCluster& c = d.clusters[head];
  SpinGuard cg(c.lock);
  if (c.flag != ClusterFlag::kFree || c.count != 0) return 0;  // taken meanwhile
  if (!c.table) AllocTable(c);
  const uint64_t start = ClusterStart(d, c);
  if (!Commit(d, c, start, start, rq)) return 0;
  PlaceInPlace(d, c, cluster_size);
  SpinGuard dg(d.lock);
  RangeAllocBoundsLocked(d, start, cluster_size);
  return start;
}

void SwapSystem::State::InitScanBasesLocked(SwapDevice& d) {
  d.ssd_cpu = std::make_unique<SwapDevice::SsdCpu[]>(static_cast<size_t>(opts.nr_cpus));
  d.scan_rng = opts.scan_base_seed ^ (0x5851f42d4c957f2dull * static_cast<uint64_t>(d.type + 1));
  if (!UsesSsdMapScan(d)) return;
  // 6.1 swapon: 1 + prandom_u32_max(highest_bit), highest_bit = max - 1.
  for (int cpu = 0; cpu < opts.nr_cpus; ++cpu)
    d.ssd_cpu[static_cast<size_t>(cpu)].scan_base = 1 + DrawBelow(&d.scan_rng, d.max - 1);
}

}  // namespace swaplab::alloc
