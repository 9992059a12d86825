// SPDX-License-Identifier: MIT
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

#include "alloc/cluster.h"
#include "alloc/per_cpu.h"
#include "alloc/slot_entry.h"
#include "alloc/spin_lock.h"
#include "alloc/swap_device.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc {

// The allocator's write access to Folio::swap_ (folio lock + cluster lock).
struct FolioAccess {
  static void SetSwap(Folio& f, SwapEntry e) { f.swap_ = e; }
};

// How a commit marks the slots (§2.8 step 2).
enum class CommitKind : uint8_t { kFolio, kSlotCache, kHibernation };

struct AllocRequest {
  int cpu = 0;
  int order = 0;
  Folio* folio = nullptr;
  CommitKind kind = CommitKind::kFolio;
  // 6.12 get_swap_pages() (policy swap_pages_taken_ahead): the caller took
  // the request off nr_swap_pages (pages_ahead); each slot taken gives its
  // pages back to pages_ahead as it is taken.
  bool taken_ahead = false;
};

// Hidden in a shared library: only the public header's API is exported.
struct __attribute__((visibility("hidden"))) SwapSystem::State {
  explicit State(SystemOptions o);

  SystemOptions opts;
  Policy policy;
  int cluster_shift;
  uint32_t cluster_size;
  int pmd_order;  // == cluster_shift: a whole cluster
  int count_max;

  std::mutex swap_lock;                                            // global swap lock
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
  // swapoff's try_to_unuse runs with the cache disabled (6.12:
  // disable_swap_slots_cache_lock): frees bypass the return buffers.
  std::atomic<bool> slot_cache_disabled{false};
  std::mutex slot_cache_mutex;  // activation / deactivation
  // The CPU of the latest call that names one (FolioAllocSwap, the
  // hibernation slots): the CPU whose return buffer takes the frees of
  // calls that name none (policy slot_cache_return; docs/fidelity.md).
  std::atomic<int> current_cpu{0};
  // Policy swap_pages_taken_ahead: pages taken off nr_swap_pages by calls in
  // progress beyond the slots they have committed (6.12 get_swap_pages()
  // lowers the counter by the whole request first; get_swap_page_of_type()
  // after its scan, which makes this −1 meanwhile).
  std::atomic<int64_t> pages_ahead{0};

  std::unique_ptr<PerCpu[]> cpus;

  // Counters updated without a CPU lock: the SYS rows of SWAPLAB_COUNTERS.
  SWAPLAB_COUNTERS(SWAPLAB_COUNTER_STORE_SYS)

  // The hibernation session (hibernation spec §9.5): one bound device.
  std::mutex hib_mutex;
  int hib_type = -1;
  bool hib_sorted = true;
  bool hib_reserve_armed = false;
  std::vector<uint32_t> hib_private;  // claimed free clusters, in hand-out order
  void ReturnClaimedHibLocked();      // hib_mutex held

  // First operational invariant violation seen (C5), reported by
  // CheckInvariants.
  std::mutex violation_mutex;
  std::string violation;

  // swapon.cc
  void EnableSwapInfoSwapLocked(SwapDevice& d);  // swap lock held

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
    return total_swap_pages.load(std::memory_order_relaxed) - used -
           pages_ahead.load(std::memory_order_relaxed);
  }
  // `pending`: pages already counted in inuse that the kernel would not yet
  // have taken off nr_swap_pages at this point (see SwapUsageAddDeviceLocked).
  bool VmSwapFull(int64_t pending = 0) const {
    return 2 * (NrSwapPages() + pending) < total_swap_pages.load(std::memory_order_relaxed);
  }
  // Non-SSD devices serialise allocation on seq_next (policy knob).
  bool UsesSeq(const SwapDevice& d) const {
    return !d.ssd && policy.nonssd_global_cluster && !policy.rotational_swap_map_scan;
  }
  // 6.12: a device without SWP_SOLIDSTATE has no clusters to allocate from
  // (policy rotational_swap_map_scan): the swap_map scan serves it; 6.1
  // (policy ssd_swap_map_scan): an SSD too, through its per-CPU clusters.
  bool UsesMapScan(const SwapDevice& d) const {
    return d.ssd ? policy.ssd_swap_map_scan : policy.rotational_swap_map_scan;
  }
  // 6.1: an SSD whose order-0 slots come from the swap_map scan with
  // cluster_info (per-CPU clusters, per-CPU scan bases).
  bool UsesSsdMapScan(const SwapDevice& d) const { return d.ssd && policy.ssd_swap_map_scan; }
  bool Usable(const SwapCluster& c, int order) const REQUIRES(c.lock) {
    return c.flag <= ClusterFlag::kFrag && c.table &&
           (order == 0 || c.count == 0 || c.order == order);
  }
  void RecordViolation(std::string what);
  // Every store to a slot entry of a cluster with a table goes through
  // SetSlot (or says why the slot was not and will not be Reclaimable), so
  // that SwapCluster::reclaimable counts its Reclaimable slots (C7).
  static void AddReclaimable(SwapCluster& c, int delta) REQUIRES(c.lock) {
    c.reclaimable.store(
        static_cast<uint16_t>(c.reclaimable.load(std::memory_order_relaxed) + delta),
        std::memory_order_relaxed);
  }
  // `old` is c.table[i], which the caller has read.
  static void SetSlot(SwapCluster& c, uint64_t i, uint64_t old, uint64_t e) REQUIRES(c.lock) {
    const int delta =
        static_cast<int>(slot::Reclaimable(e)) - static_cast<int>(slot::Reclaimable(old));
    if (delta != 0) AddReclaimable(c, delta);
    c.table[i] = e;
  }
  static void SetSlot(SwapCluster& c, uint64_t i, uint64_t e) REQUIRES(c.lock) {
    SetSlot(c, i, c.table[i], e);
  }

  // cluster_lists.h (inline) and cluster_lists.cc
  void ListAppendDeviceLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) REQUIRES(d.lock);
  void ListRemoveDeviceLocked(SwapDevice& d, ClusterList& l, SwapCluster& c) REQUIRES(d.lock);
  void MoveClusterDeviceLocked(SwapDevice& d, SwapCluster& c, ClusterFlag to)
      REQUIRES(d.lock, c.lock);
  // Rotates l by r < l.len places: its first r clusters, in order, go to
  // the tail (what r isolate-and-relocate rounds leave behind).
  void ListRotateDeviceLocked(SwapDevice& d, ClusterList& l, uint64_t r) REQUIRES(d.lock);
  // Every list move: cluster lock held, device lock taken inside (§9).
  // `freed` slots of c were just freed: inuse drops by them in the same
  // device-lock section (swap_range_free's swap_usage_sub).
  void MoveCluster(SwapDevice& d, SwapCluster& c, ClusterFlag to, uint64_t freed = 0)
      REQUIRES(c.lock);
  // Mirrors isolate_lock_cluster(): the first cluster of `list` whose lock
  // can be taken, removed from the list, flag NONE, locked, with a table.
  // The lock of a cluster picked at run time cannot be named in an
  // attribute: callers say it is held with c->lock.AssertHeld().
  SwapCluster* Isolate(SwapDevice& d, ListId list, int order = 0);
  ClusterList& ListDeviceLocked(SwapDevice& d, ListId list, int order) REQUIRES(d.lock) {
    return d.lists[ListIndex(list, order)];
  }
  void AllocTable(SwapCluster& c) REQUIRES(c.lock);
  // `freed`: as for MoveCluster.
  void FreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed = 0) REQUIRES(c.lock);
  // Mirrors partial_free_cluster(), with the usage change of the `freed`
  // slots.
  void PartialFreeCluster(SwapDevice& d, SwapCluster& c, uint64_t freed) REQUIRES(c.lock);
  // Mirrors relocate_cluster(): after every scan of a cluster (§2.8), with
  // the usage change of the `added` slots the scan committed (the kernel's
  // swap_range_alloc, done here in the move's device-lock section).
  void Relocate(SwapDevice& d, SwapCluster& c, uint64_t added = 0) REQUIRES(c.lock);
  void ScheduleDiscard(SwapDevice& d);
  void ScheduleReclaim(SwapDevice& d);

  // fast_path.cc, avail_list.cc, device_search.cc, cluster_scan.h
  bool AllocFast(PerCpu& pc, const AllocRequest& rq, SwapEntry* out);
  bool AllocSlow(const AllocRequest& rq, SwapEntry* out);
  bool WalkAvail(int order, const std::function<bool(SwapDevice&)>& try_device);
  // Mirrors 6.12 scan_swap_map_slots() for one device: up to `nr` slots of
  // rq.order into `out` (the swap_map scan on a rotational device under
  // policy rotational_swap_map_scan, else AllocateOnDevice repeated, as
  // cluster_alloc_swap() does); returns how many.
  int AllocBatchOnDevice(SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out);
  // Mirrors 6.12 get_swap_pages()'s accounting (policy swap_pages_taken_ahead):
  // how many of `nr` requests of 2^order pages may be tried (0: none), taken
  // off nr_swap_pages ahead. Without the policy, nr.
  int TakePagesAhead(int nr, int order);
  // Gives back the part of a TakePagesAhead the call did not use.
  void GiveBackPagesAhead(int taken, int got, int order);
  // Mirrors cluster_alloc_swap_entry(); returns the offset or 0.
  // Non-SSD devices hold the global cluster lock around the whole search.
  uint64_t AllocateOnDevice(SwapDevice& d, const AllocRequest& rq);
  // The search itself, from hint `off` (the global cluster lock held on
  // non-SSD devices, see SetHint).
  uint64_t SearchDevice(SwapDevice& d, const AllocRequest& rq, uint64_t off);
  // Policy isolate_clusters off: 6.12's cluster_alloc_swap_entry(), which
  // scans clusters on their lists (device_search_inplace.cc).
  uint64_t SearchDeviceInPlace(SwapDevice& d, const AllocRequest& rq);
  // Mirrors 6.12 alloc_swap_scan_cluster(); c locked on entry, unlocked on
  // exit; *next is what the CPU's next[order] holds after it (0: invalid).
  uint64_t ScanClusterInPlace(SwapDevice& d, SwapCluster& c, uint64_t off, const AllocRequest& rq,
                              uint64_t* next, bool* abort) RELEASE(c.lock);
  // The list moves of 6.12 cluster_alloc_range() after `added` slots were
  // committed, with their usage change.
  void PlaceInPlace(SwapDevice& d, SwapCluster& c, uint64_t added) REQUIRES(c.lock);
  // Policy rotational_swap_map_scan on a non-SSD device: 6.12's
  // scan_swap_map_slots() without clusters (swap_map_scan.cc). Up to `nr`
  // order-0 slots into `out`; returns how many.
  int ScanSwapMap(SwapDevice& d, const AllocRequest& rq, int nr, uint64_t* out);
  // Policy ssd_swap_map_scan, a PMD-order request on an SSD: 6.1's
  // swap_alloc_cluster(), the free list's head whole (swap_map_scan.cc).
  // Returns the offset or 0.
  uint64_t AllocWholeCluster(SwapDevice& d, const AllocRequest& rq);
  // swapon: each CPU's scan base drawn as 6.1's swapon does (policy
  // ssd_swap_map_scan, SSD only).
  void InitScanBasesLocked(SwapDevice& d) REQUIRES(d.global_cluster_lock);
  // Mirrors alloc_swap_scan_cluster(); c locked on entry, unlocked on exit.
  uint64_t ScanCluster(SwapDevice& d, SwapCluster& c, uint64_t off, const AllocRequest& rq,
                       bool* abort) RELEASE(c.lock);
  // `start` is ClusterStart(d, c), which the caller has at hand.
  bool Commit(SwapDevice& d, SwapCluster& c, uint64_t start, uint64_t off, const AllocRequest& rq)
      REQUIRES(c.lock);
  // Mirrors swap_usage_add(): the device leaves the avail list when it is
  // exactly full (§2.8 step 5). Every writer of inuse holds the device
  // lock, so the update is a load and a store, not a locked instruction.
  void SwapUsageAddDeviceLocked(SwapDevice& d, uint64_t n) REQUIRES(d.lock);
  // Mirrors swap_usage_sub(): back on the avail list once not full (§3.5).
  void SwapUsageSubDeviceLocked(SwapDevice& d, uint64_t n) REQUIRES(d.lock);
  void SwapUsageSub(SwapDevice& d, uint64_t n);
  // The avail-list lock nests inside the device lock (kernel: si->lock,
  // then swap_avail_lock).
  void AddToAvailDeviceLocked(SwapDevice& d) REQUIRES(d.lock);
  void DelFromAvailDeviceLocked(SwapDevice& d, bool swapoff) REQUIRES(d.lock);
  void SetHint(SwapDevice& d, const AllocRequest& rq, uint64_t next);
  bool SyncDiscard();

  // swap_free.cc
  // Frees n slots starting at `first` (all in c, count ≤ 1, not cached).
  void FreeSlotsClusterLocked(SwapDevice& d, SwapCluster& c, uint64_t first, uint64_t n)
      REQUIRES(c.lock);
  // Drops a folio from the swap cache with c locked (§3.4). With `held`
  // (policy slot_cache_return, a free that is not TTRS_DIRECT), the slots
  // 6.12's put_swap_folio() hands to free_swap_slot() stay cache-held (no
  // folio, count 0) and are appended to *held for SlotReturn.
  void DelFolioClusterLocked(SwapDevice& d, SwapCluster& c, Folio& f,
                             std::vector<SwapEntry>* held = nullptr) REQUIRES(c.lock);
  uint32_t SlotCount(const SwapCluster& c, uint32_t i) const REQUIRES(c.lock);
  void PutOneClusterLocked(SwapCluster& c, uint32_t i) REQUIRES(c.lock);

  // swap_reclaim.cc
  // `locked_cpu`: as for SlotReturn (the caller holds that CPU's lock).
  int TryReclaim(SwapDevice& d, uint64_t off, unsigned flags, int locked_cpu = -1);
  void ReclaimFull(SwapDevice& d, bool force);
  // Turns over the clusters at the head of the full list that have no
  // Reclaimable slot, at most `rounds` of them; returns how many rounds of
  // ReclaimFull that stood for.
  int64_t SkipUnreclaimable(SwapDevice& d, int64_t rounds);
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
  void SlotCacheDrainCpuLocked(PerCpu& pc) REQUIRES(pc.lock);
  // Whether frees go through the return buffers now (6.12
  // use_swap_slot_cache: the policy, the cache active and not disabled).
  bool SlotReturnActive() const {
    return policy.slot_cache_return && slot_cache_active.load(std::memory_order_acquire) &&
           !slot_cache_disabled.load(std::memory_order_acquire);
  }
  // Mirrors 6.12 free_swap_slot() for each cache-held slot of `held` (no
  // cluster lock held): into current_cpu's return buffer, which is freed in
  // one batch first when full; freed at once when the buffers are off.
  // `locked_cpu` >= 0: the caller holds that CPU's lock (an allocation's
  // scan, 6.1's scan_swap_map_slots() reclaim), whose buffer takes them.
  void SlotReturn(const std::vector<SwapEntry>& held, int locked_cpu = -1);
  void SlotReturnCpuLocked(PerCpu& pc, const SwapEntry& e) REQUIRES(pc.lock);
  // Frees one cache-held slot (count 0, no folio) if it still is one.
  void FreeHeldSlot(const SwapEntry& e);
  // Mirrors 6.12 swapcache_free_entries(): sorted by device (the kernel's
  // heap sort) when more than one record was ever used, then freed.
  void FreeHeldSlots(std::vector<SwapEntry>& entries);
};

}  // namespace swaplab::alloc
