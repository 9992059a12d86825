// Linux 6.12's allocation on a device without clusters (policy
// rotational_swap_map_scan): 6.12 gives a device clusters only when its
// block device is non-rotational (swapon: setup_clusters() behind
// bdev_nonrot()); every other device is served by the swap_map scan of
// scan_swap_map_slots(), read from Debian's linux-source-6.12
// mm/swapfile.c. The model keeps its clusters, lists and counts for such a
// device (the invariants hold as for any other), but decides placements
// from the slots alone, as the kernel does.
#include "alloc/cluster_lists.h"
#include "alloc/cluster_scan.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

constexpr int kLatencyLimit = 256;  // LATENCY_LIMIT

// One call of scan_swap_map_slots() for order 0: its locals, and its labels
// (checks, scan, done, no_page) as the steps of Run.
class MapScan {
 public:
  MapScan(SwapSystem::State& s, SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out)
      : s_(s), d_(d), rq_(rq), nr_(nr), out_(out), cluster_(s.cluster_size) {}

  // The caller holds d's global cluster lock (ScanSwapMap), which the
  // analysis cannot tie to d_: each step that touches cluster_next /
  // cluster_nr asserts it.
  int Run() {
    d_.global_cluster_lock.AssertHeld();
    offset_ = scan_base_ = d_.cluster_next;
    if (d_.cluster_nr-- == 0) FindEmptyCluster();
    Label at = Label::kChecks;
    while (at != Label::kDone && at != Label::kNoPage)
      at = at == Label::kChecks ? Checks() : Scan();
    if (at == Label::kDone) d_.cluster_next = offset_ + 1;  // set_cluster_next(), non-SSD
    return n_ret_;
  }

 private:
  enum class Label : uint8_t { kChecks, kScan, kDone, kNoPage };

  uint64_t Entry(uint64_t off) {
    SwapCluster& c = d_.ClusterOf(off, s_.cluster_shift);
    SpinGuard g(c.lock);
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

  // Takes the slot at offset_ (it is empty).
  bool Take() {
    SwapCluster& c = d_.ClusterOf(offset_, s_.cluster_shift);
    SpinGuard g(c.lock);
    if (!c.table) s_.AllocTable(c);
    if (!s_.Commit(d_, c, s_.ClusterStart(d_, c), offset_, rq_)) return false;
    s_.PlaceInPlace(d_, c, 1);
    {
      // swap_range_alloc(): the free-slot bounds.
      SpinGuard dg(d_.lock);
      if (d_.inuse_pages() == d_.pages) {
        d_.lowest_bit = d_.max;
        d_.highest_bit = 0;
      } else {
        if (offset_ == d_.lowest_bit) ++d_.lowest_bit;
        if (offset_ == d_.highest_bit) --d_.highest_bit;
      }
    }
    if (rq_.taken_ahead) s_.pages_ahead.fetch_sub(1, std::memory_order_relaxed);
    out_[n_ret_++] = offset_;
    return true;
  }

  Label Checks() {
    d_.global_cluster_lock.AssertHeld();
    for (;;) {
      if (!d_.writeok.load(std::memory_order_acquire) || Highest() == 0) return Label::kNoPage;
      if (offset_ > Highest()) scan_base_ = offset_ = Lowest();
      // A cache-only slot is taken back first when swap is more than half
      // full (TTRS_ANYWAY | TTRS_DIRECT); if that fails, look further.
      if (s_.VmSwapFull() && OnlyCache(offset_)) {
        if (s_.TryReclaim(d_, offset_, kReclaimAnyway | kReclaimDirect) > 0) continue;
        return Label::kScan;
      }
      if (Used(offset_)) return n_ret_ == 0 ? Label::kScan : Label::kDone;
      if (!Take()) return Label::kNoPage;
      if (n_ret_ == nr_ || offset_ >= Highest()) return Label::kDone;
      if (Tick() && n_ret_ > 0) return Label::kDone;  // time for a break
      // The run goes on while it has slots left and the next one is free.
      if (d_.cluster_nr != 0 && !Used(++offset_)) {
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
  uint64_t offset_ = 0, scan_base_ = 0;
  int n_ret_ = 0;
  int latency_ = kLatencyLimit;
  bool scanned_many_ = false;
};

}  // namespace

// Mirrors 6.12 mm/swapfile.c: scan_swap_map_slots() on a device without
// cluster_info (order 0; the caller refuses larger orders). The device's
// allocation is serialised on its global cluster lock (the kernel's
// si->lock, which the scan drops only around its long loops).
int SwapSystem::State::ScanSwapMap(SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out) {
  if (rq.order != 0 || nr <= 0) return 0;
  SpinGuard g(d.global_cluster_lock);
  return MapScan(*this, d, rq, nr, out).Run();
}

}  // namespace swaplab::alloc
