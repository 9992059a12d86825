// Internal state of a SwapSystem: devices, clusters, lists, per-CPU hints.
// Shared by the src/alloc/*.cc files; not part of the public contract.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alloc/slot_entry.h"
#include "alloc/spin_lock.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc {

inline constexpr uint32_t kNil = UINT32_MAX;

// The allocator's write access to Folio::swap_ (folio lock + cluster lock).
struct FolioAccess {
  static void SetSwap(Folio& f, SwapEntry e) { f.swap_ = e; }
};

// SwapCluster record (kernel: struct swap_cluster_info).
//   count == number of non-EMPTY entries of table (bad slots included)  [C1]
//   no table ⇒ count == 0;  flag == list the cluster is on              [C2]
//   FREE ⇒ count 0, no table, order 0;  FULL ⇒ count == CLUSTER         [C4]
// Protected by `lock`, except prev/next which the device lock protects.
struct SwapCluster {
  SpinLock lock;
  ClusterFlag flag = ClusterFlag::kNone;
  uint8_t order = 0;
  uint32_t count = 0;
  uint32_t prev = kNil, next = kNil;  // list links (device lock)
  bool listed = false;                // on a list (device lock)
  // Hibernation session (hibernation spec §9.5, §9.7):
  bool hib_claimed = false;   // on the session's private list (flag FREE)
  bool hib_whole = false;     // handed out whole, no table, count counts it
  bool hib_reserved = false;  // reserved at swapon: no list, flag NONE
  uint32_t extend_users = 0;          // slots whose count lives in extend
  std::unique_ptr<uint64_t[]> table;  // CLUSTER slot entries, or none
  std::unique_ptr<uint32_t[]> extend; // counts past the inline width
};

// A FIFO list of clusters (head: taken first; moves append at the tail).
struct ClusterList {
  uint32_t head = kNil, tail = kNil;
  uint64_t len = 0;
};

// Positions in SwapDevice::lists.
inline constexpr size_t kFreeListIdx = 0, kFullListIdx = 1, kDiscardListIdx = 2;
inline constexpr size_t kNonfullListIdx = 3, kFragListIdx = kNonfullListIdx + kMaxOrders;
inline constexpr size_t kNumLists = kFragListIdx + kMaxOrders;

// The list of a cluster with flag `f` and order `order` (flag NONE: none,
// callers check `listed` first). Branch-free: base index by flag, plus the
// order for the per-order lists.
inline size_t ListIndex(ClusterFlag f, int order) {
  static constexpr uint8_t kBase[] = {0, kFreeListIdx, kNonfullListIdx, kFragListIdx,
                                      kFullListIdx, kDiscardListIdx};
  static constexpr uint8_t kPerOrder[] = {0, 0, 0xff, 0xff, 0, 0};
  const auto i = static_cast<size_t>(f);
  return kBase[i] + (kPerOrder[i] & static_cast<unsigned>(order));
}
inline size_t ListIndex(ListId l, int order) {
  static constexpr uint8_t kBase[] = {kFreeListIdx, kNonfullListIdx, kFragListIdx, kFullListIdx,
                                      kDiscardListIdx};
  static constexpr uint8_t kPerOrder[] = {0, 0xff, 0xff, 0, 0};
  const auto i = static_cast<size_t>(l);
  return kBase[i] + (kPerOrder[i] & static_cast<unsigned>(order));
}

inline constexpr uint64_t kOffListBit = uint64_t{1} << 62;  // SWAP_USAGE_OFFLIST_BIT
inline constexpr int64_t kDeadRef = int64_t{1} << 40;       // device reference killed

// One swap device (kernel: struct swap_info_struct).
//   inuse == Σ cluster.count − bad slots                                 [D1]
//   on avail list ⇔ off-list bit clear ⇔ WRITEOK ∧ inuse < pages         [D3]
struct SwapDevice {
  int type = 0;
  // Set at swapon, constant until the record is reused (read with a
  // device reference or the swap lock).
  std::string name;
  uint64_t max = 0, pages = 0;
  uint64_t nr_clusters = 0;
  std::vector<uint64_t> bad;  // sorted header bad pages below max
  bool ssd = false, blkdev = false;
  bool discardable = false, area_discard = false, page_discard = false;
  uint64_t bdev = 0, first_block = 0;
  std::vector<SwapExtent> extents;
  DiscardSink* sink = nullptr;
  std::unique_ptr<SwapCluster[]> clusters;

  // Swap lock: record state.
  bool used = false;     // record taken (swapon ... end of swapoff)
  bool active = false;   // on the active list
  bool hibernation_pinned = false;
  int prio = -1;         // swap lock + avail lock to change

  std::atomic<bool> writeok{false};  // swap lock + device lock to change
  // Used slots and the off-list bit (kernel: inuse_pages, an atomic_long).
  // Written only under the device lock, read without it: every list move
  // takes that lock anyway, so a move and the usage change it goes with
  // share one lock round trip (docs/fidelity.md, "inuse under the device
  // lock").
  std::atomic<uint64_t> inuse{kOffListBit};
  std::atomic<int64_t> users{kDeadRef};  // references (kernel: si->users)

  SpinLock lock;  // the device lock: every list and every cluster link
  // Every list in one array, so that a (flag, order) pair finds its list
  // with two table loads instead of a switch (ListIndex below):
  // [free, full, discard, nonfull[0..kMaxOrders), frag[0..kMaxOrders)].
  std::array<ClusterList, kNumLists> lists GUARDED_BY(lock);
  ClusterList& free_list() REQUIRES(lock) { return lists[kFreeListIdx]; }
  ClusterList& full_list() REQUIRES(lock) { return lists[kFullListIdx]; }
  ClusterList& discard_list() REQUIRES(lock) { return lists[kDiscardListIdx]; }
  ClusterList& nonfull(int order) REQUIRES(lock) { return lists[kNonfullListIdx + order]; }
  ClusterList& frag(int order) REQUIRES(lock) { return lists[kFragListIdx + order]; }

  SpinLock global_cluster_lock;  // non-SSD: serialises allocation
  std::array<uint64_t, kMaxOrders> seq_next GUARDED_BY(global_cluster_lock){};
  // Per-device per-CPU hints (policy percpu_hint_per_device): [cpu][order],
  // each protected by that CPU's local lock.
  std::unique_ptr<uint64_t[]> pcp_next;

  // Hibernation reservation at swapon (§9.7), constant while used.
  uint64_t hib_reserve_start = 0, hib_reserve_nr = 0;  // clusters

  std::atomic<bool> discard_pending{false};
  std::atomic<bool> reclaim_pending{false};

  SwapCluster& ClusterOf(uint64_t offset, int shift) { return clusters[offset >> shift]; }
  uint64_t inuse_pages() const { return inuse.load(std::memory_order_acquire) & ~kOffListBit; }
  bool TryGet() {
    if (users.fetch_add(1, std::memory_order_acquire) >= kDeadRef) {
      users.fetch_sub(1, std::memory_order_release);
      return false;
    }
    return true;
  }
  void Put() { users.fetch_sub(1, std::memory_order_release); }
  // Swapon's enable: references may be taken from here on. The dead bias
  // is taken off, not overwritten: a TryGet that failed a moment ago still
  // owes its decrement, and a store of 0 would let that decrement make the
  // count negative (the next swapoff then waits for a count it has already
  // passed and frees the clusters under a live reference).
  void Revive() { users.fetch_sub(kDeadRef, std::memory_order_acq_rel); }
  // Swapoff's kill (kernel: percpu_ref_kill + wait_for_completion): no new
  // reference after this, and every old one has been put when it returns.
  void KillAndWait() {
    users.fetch_add(kDeadRef, std::memory_order_acq_rel);
    while (users.load(std::memory_order_acquire) != kDeadRef) std::this_thread::yield();
  }
};

// Storage of one row of SWAPLAB_COUNTERS: an atomic per value.
template <CounterShape S>
using AtomicCounterField =
    std::conditional_t<S == CounterShape::kScalar, std::atomic<uint64_t>,
                       std::array<std::atomic<uint64_t>, CounterSize(S)>>;
// The rows of one home (CPU or SYS) as fields, the others left out.
#define SWAPLAB_COUNTER_STORE_CPU_CPU(n, shape) AtomicCounterField<CounterShape::shape> n{};
#define SWAPLAB_COUNTER_STORE_CPU_SYS(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS_CPU(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS_SYS(n, shape) AtomicCounterField<CounterShape::shape> n{};
#define SWAPLAB_COUNTER_STORE_CPU(n, shape, home, kind, summary, doc) \
  SWAPLAB_COUNTER_STORE_CPU_##home(n, shape)
#define SWAPLAB_COUNTER_STORE_SYS(n, shape, home, kind, summary, doc) \
  SWAPLAB_COUNTER_STORE_SYS_##home(n, shape)

// Counters one CPU updates under its local lock (single writer): the CPU
// rows of SWAPLAB_COUNTERS.
struct CpuCounters {
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_STORE_CPU)
};
inline void Bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Per-CPU state (kernel: percpu_swap_cluster and, for §10.1, swap_slots_cache).
struct alignas(64) PerCpu {
  SpinLock lock;  // the CPU-local lock
  std::array<int, kMaxOrders> dev{};        // -1: none
  std::array<uint64_t, kMaxOrders> off{};
  std::vector<SwapEntry> slot_cache;        // §10.1, entries [cur, size)
  size_t slot_cache_cur = 0;
  CpuCounters stats;
  PerCpu() { dev.fill(-1); }
};

// How a commit marks the slots (§2.8 step 2).
enum class CommitKind : uint8_t { kFolio, kSlotCache, kHibernation };

struct AllocRequest {
  int cpu = 0;
  int order = 0;
  Folio* folio = nullptr;
  CommitKind kind = CommitKind::kFolio;
};

struct SwapSystem::State {
  explicit State(SystemOptions o);

  SystemOptions opts;
  Policy policy;
  int cluster_shift;
  uint32_t cluster_size;
  int pmd_order;      // == cluster_shift: a whole cluster
  int count_max;

  std::mutex swap_lock;  // global swap lock
  std::array<std::unique_ptr<SwapDevice>, kMaxSwapfiles> records;  // never freed
  std::atomic<int> nr_swapfiles{0};
  std::vector<int> active;  // swap lock; priority order
  int least_priority = -1;  // swap lock

  SpinLock avail_lock;
  std::vector<int> avail GUARDED_BY(avail_lock);  // priority order

  // nr_swap_pages is not a counter of its own here (the kernel keeps an
  // atomic_long): it is total_swap_pages − Σ inuse over every record, which
  // is what the kernel's counter always equals (invariant G2), so the
  // allocate/free paths save two atomic read-modify-writes per pair.
  // docs/fidelity.md, "nr_swap_pages derived from inuse".
  std::atomic<int64_t> total_swap_pages{0};
  std::atomic<int> nr_rotate_swap{0};
  std::atomic<bool> suspended{false};
  std::atomic<bool> work_pending{false};
  std::atomic<bool> slot_cache_active{false};
  std::mutex slot_cache_mutex;  // activation / deactivation

  std::unique_ptr<PerCpu[]> cpus;

  // Counters updated without a CPU lock: the SYS rows of SWAPLAB_COUNTERS.
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_STORE_SYS)

  // The hibernation session (hibernation spec §9.5): one bound device.
  std::mutex hib_mutex;
  int hib_type = -1;
  bool hib_sorted = true;
  bool hib_reserve_armed = false;
  std::vector<uint32_t> hib_private;  // claimed free clusters, in hand-out order
  void HibReturnClaimedLocked();      // hib_mutex held

  // First operational invariant violation seen (C5), reported by
  // CheckInvariants.
  std::mutex violation_mutex;
  std::string violation;

  // swapon.cc
  void EnableSwapInfo(SwapDevice& d);  // swap lock held

  // --- helpers ---------------------------------------------------------
  SwapDevice* Dev(int type) const {
    return (type >= 0 && type < kMaxSwapfiles) ? records[type].get() : nullptr;
  }
  uint64_t ClusterStart(const SwapDevice& d, const SwapCluster& c) const {
    return static_cast<uint64_t>(&c - d.clusters.get()) << cluster_shift;
  }
  uint64_t ClusterIndex(const SwapDevice& d, const SwapCluster& c) const {
    return static_cast<uint64_t>(&c - d.clusters.get());
  }
  int64_t NrSwapPages() const {
    int64_t used = 0;
    const int n = nr_swapfiles.load(std::memory_order_acquire);
    for (int t = 0; t < n; ++t) used += static_cast<int64_t>(records[t]->inuse_pages());
    return total_swap_pages.load(std::memory_order_relaxed) - used;
  }
  // `pending`: pages already counted in inuse that the kernel would not yet
  // have taken off nr_swap_pages at this point (see SwapUsageAddLocked).
  bool VmSwapFull(int64_t pending = 0) const {
    return 2 * (NrSwapPages() + pending) <
           total_swap_pages.load(std::memory_order_relaxed);
  }
  // Non-SSD devices serialise allocation on seq_next (policy knob).
  bool UsesSeq(const SwapDevice& d) const { return !d.ssd && policy.nonssd_global_cluster; }
  bool Usable(const SwapCluster& c, int order) const {
    return c.flag <= ClusterFlag::kFrag && c.table &&
           (order == 0 || c.count == 0 || c.order == order);
  }
  void RecordViolation(std::string what);

  // cluster_lists.cc
  void ListAppendLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) REQUIRES(d.lock) {
    const auto idx = static_cast<uint32_t>(ClusterIndex(d, c));
    c.prev = l.tail;
    c.next = kNil;
    (l.tail == kNil ? l.head : d.clusters[l.tail].next) = idx;
    l.tail = idx;
    ++l.len;
    c.listed = true;
  }
  void ListRemoveLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) REQUIRES(d.lock) {
    (c.prev == kNil ? l.head : d.clusters[c.prev].next) = c.next;
    (c.next == kNil ? l.tail : d.clusters[c.next].prev) = c.prev;
    c.prev = c.next = kNil;
    --l.len;
    c.listed = false;
  }
  void MoveClusterLocked(SwapDevice& d, SwapCluster& c, ClusterFlag to) REQUIRES(d.lock) {
    if (c.listed) ListRemoveLocked(d, d.lists[ListIndex(c.flag, c.order)], c);
    c.flag = to;
    if (to != ClusterFlag::kNone) ListAppendLocked(d, d.lists[ListIndex(to, c.order)], c);
  }
  // Every list move: cluster lock held, device lock taken inside (§9).
  // `freed` slots of c were just freed: inuse drops by them in the same
  // device-lock section (swap_range_free's swap_usage_sub).
  void MoveCluster(SwapDevice& d, SwapCluster& c, ClusterFlag to, uint64_t freed = 0) {  // c locked
    SpinGuard g(d.lock);
    MoveClusterLocked(d, c, to);
    if (freed != 0) SwapUsageSubLocked(d, freed);
  }
  // Mirrors isolate_lock_cluster(): the first cluster of `list` whose lock
  // can be taken, removed from the list, flag NONE, locked, with a table.
  SwapCluster* Isolate(SwapDevice& d, ListId list, int order = 0);
  ClusterList& ListLocked(SwapDevice& d, ListId list, int order) REQUIRES(d.lock) {
    return d.lists[ListIndex(list, order)];
  }
  void AllocTable(SwapCluster& c);
  // `freed`: as for MoveCluster. c locked.
  void FreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed = 0);
  // Mirrors partial_free_cluster(), with the usage change of the `freed`
  // slots. c locked.
  void PartialFreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed) {
    if (c.flag != ClusterFlag::kNonfull) {
      MoveCluster(d, c, ClusterFlag::kNonfull, freed);
    } else {
      SwapUsageSub(d, freed);
    }
  }
  // Mirrors relocate_cluster(): after every scan of a cluster (§2.8), with
  // the usage change of the `added` slots the scan committed (the kernel's
  // swap_range_alloc, done here in the move's device-lock section). c locked.
  void Relocate(SwapDevice& d, SwapCluster& c, uint64_t added = 0) {
    bool move = false;
    ClusterFlag to = ClusterFlag::kNone;
    if (c.flag == ClusterFlag::kDiscard) {
      // stays where it is
    } else if (!c.table && c.count > 0 && c.count < cluster_size) {
      // RFC patch 5: a partly returned whole hibernation cluster stays off
      // every list until all of it is back.
    } else if (c.count == 0) {
      // Nothing was committed (count 0), so there is no usage to add.
      if (c.flag != ClusterFlag::kFree) FreeCluster(d, c);
      return;
    } else if (c.count < cluster_size) {
      move = c.flag != ClusterFlag::kFrag;
      to = ClusterFlag::kFrag;
    } else {
      move = c.flag != ClusterFlag::kFull;
      to = ClusterFlag::kFull;
    }
    if (!move && added == 0) return;
    SpinGuard g(d.lock);
    if (move) MoveClusterLocked(d, c, to);
    if (added != 0) SwapUsageAddLocked(d, added);
  }
  void ScheduleDiscard(SwapDevice& d);
  void ScheduleReclaim(SwapDevice& d);

  // swap_alloc.cc
  bool AllocFast(PerCpu& pc, const AllocRequest& rq, SwapEntry* out);
  bool AllocSlow(const AllocRequest& rq, SwapEntry* out);
  bool WalkAvail(int order, const std::function<bool(SwapDevice&)>& try_device);
  // Mirrors cluster_alloc_swap_entry(); returns the offset or 0.
  uint64_t AllocateOnDevice(SwapDevice& d, const AllocRequest& rq);
  // Mirrors alloc_swap_scan_cluster(); c locked on entry, unlocked on exit.
  uint64_t ScanCluster(SwapDevice& d, SwapCluster& c, uint64_t off, const AllocRequest& rq,
                       bool* abort);
  // `start` is ClusterStart(d, c), which the caller has at hand.
  bool Commit(SwapDevice& d, SwapCluster& c, uint64_t start, uint64_t off,
              const AllocRequest& rq);
  // Mirrors swap_usage_add(): the device leaves the avail list when it is
  // exactly full (§2.8 step 5). Every writer of inuse holds the device
  // lock, so the update is a load and a store, not a locked instruction.
  void SwapUsageAddLocked(SwapDevice& d, uint64_t n) REQUIRES(d.lock) {
    const uint64_t v = d.inuse.load(std::memory_order_relaxed) + n;
    d.inuse.store(v, std::memory_order_release);
    if (v == d.pages) [[unlikely]] {
      DelFromAvailLocked(d, false);
      // swap_range_alloc() asks vm_swap_full() before it lowers
      // nr_swap_pages by these n pages; the derived value already has.
      if (VmSwapFull(static_cast<int64_t>(n))) ScheduleReclaim(d);
    }
  }
  // Mirrors swap_usage_sub(): back on the avail list once not full (§3.5).
  void SwapUsageSubLocked(SwapDevice& d, uint64_t n) REQUIRES(d.lock) {
    const uint64_t v = d.inuse.load(std::memory_order_relaxed) - n;
    d.inuse.store(v, std::memory_order_release);
    if (v & kOffListBit) [[unlikely]] AddToAvailLocked(d);
  }
  void SwapUsageSub(SwapDevice& d, uint64_t n) {
    SpinGuard g(d.lock);
    SwapUsageSubLocked(d, n);
  }
  // The avail-list lock nests inside the device lock (kernel: si->lock,
  // then swap_avail_lock).
  void AddToAvailLocked(SwapDevice& d) REQUIRES(d.lock);
  void DelFromAvailLocked(SwapDevice& d, bool swapoff) REQUIRES(d.lock);
  void SetHint(SwapDevice& d, const AllocRequest& rq, uint64_t next);
  bool SyncDiscard();

  // swap_free.cc
  // Frees n slots starting at `first` (all in c, count ≤ 1, not cached).
  void FreeSlotsLocked(SwapDevice& d, SwapCluster& c, uint64_t first, uint64_t n);
  // Drops a folio from the swap cache with c locked (§3.4).
  void DelFolioLocked(SwapDevice& d, SwapCluster& c, Folio& f);
  uint32_t SlotCount(const SwapCluster& c, uint32_t i) const;
  void PutOneLocked(SwapCluster& c, uint32_t i);

  // swap_reclaim.cc
  int TryReclaim(SwapDevice& d, uint64_t off, unsigned flags);
  void ReclaimFull(SwapDevice& d, bool force);
  int DoDiscard(SwapDevice& d);  // clusters discarded
  void RunDeferred();
  void MaybeRunDeferred() {
    if (opts.run_deferred_work_inline && work_pending.load(std::memory_order_relaxed))
      RunDeferred();
  }

  // slot_cache.cc
  bool SlotCacheAlloc(PerCpu& pc, int cpu, Folio& f, SwapEntry* out);
  void SlotCacheCheckActive();
  void SlotCacheDrainAll();
  void SlotCacheDrainLocked(PerCpu& pc) REQUIRES(pc.lock);
};

}  // namespace swaplab::alloc
