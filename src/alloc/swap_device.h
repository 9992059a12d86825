// SPDX-License-Identifier: MIT
// One swap device (allocator spec §1.2; kernel: struct swap_info_struct).
// Part of a SwapSystem's internal state (system_state.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "alloc/cluster.h"
#include "alloc/spin_lock.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::alloc {

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
  bool used = false;    // record taken (swapon ... end of swapoff)
  bool active = false;  // on the active list
  bool hibernation_pinned = false;
  int prio = -1;  // swap lock + avail lock to change

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
  // 6.12's swap_map scan of a device without clusters (policy
  // rotational_swap_map_scan, non-SSD only): where the next slot is
  // likely and how many more the current run may take (cluster_next,
  // cluster_nr), and bounds of the free slots that allocation and free
  // move as 6.12's swap_range_alloc / swap_range_free do (lowest_bit,
  // highest_bit: every free slot lies between them; 0 when full).
  uint64_t cluster_next GUARDED_BY(global_cluster_lock) = 1;
  uint64_t cluster_nr GUARDED_BY(global_cluster_lock) = 0;
  uint64_t lowest_bit GUARDED_BY(lock) = 1;
  uint64_t highest_bit GUARDED_BY(lock) = 0;
  // 6.1's SSD scan (policy ssd_swap_map_scan, SSD only), per CPU: the
  // percpu_cluster (cluster: its index + 1, 0 when null; next: the offset
  // its scan resumes at) and the scan base cluster_next_cpu. Swapon draws
  // each base as the kernel does (1 + a draw below highest_bit) from
  // scan_rng, a generator seeded by SystemOptions::scan_base_seed and the
  // device type, which set_cluster_next()'s jumps draw from too; a trace
  // sets what the kernel drew with SetScanBase.
  struct SsdCpu {
    uint64_t cluster = 0, next = 0, scan_base = 1;
  };
  std::unique_ptr<SsdCpu[]> ssd_cpu GUARDED_BY(global_cluster_lock);
  uint64_t scan_rng GUARDED_BY(global_cluster_lock) = 0;
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

}  // namespace swaplab::alloc
