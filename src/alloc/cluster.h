// SPDX-License-Identifier: MIT
// A cluster of slots and the lists clusters sit on (allocator spec §1.3,
// §1.7; kernel: struct swap_cluster_info). Part of a SwapSystem's internal
// state (system_state.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "alloc/spin_lock.h"
#include "swaplab/alloc/types.h"

namespace swaplab::alloc {

inline constexpr uint32_t kNil = UINT32_MAX;

// SwapCluster record (kernel: struct swap_cluster_info).
//   count == number of non-EMPTY entries of table (bad slots included)  [C1]
//   no table ⇒ count == 0;  flag == list the cluster is on              [C2]
//   FREE ⇒ count 0, no table, order 0;  FULL ⇒ count == CLUSTER         [C4]
// Protected by `lock` (clang's analysis checks it), except prev/next/listed,
// which the owning device's lock protects. A cluster does not know its
// device (no back pointer, as in the kernel), so no attribute can name that
// lock; only the ...DeviceLocked list operations (cluster_lists.h) touch the
// links, and they require and assert the device lock.
struct SwapCluster {
  SpinLock lock;
  ClusterFlag flag GUARDED_BY(lock) = ClusterFlag::kNone;
  uint8_t order GUARDED_BY(lock) = 0;
  uint32_t count GUARDED_BY(lock) = 0;
  uint32_t prev = kNil, next = kNil;  // list links (device lock)
  bool listed = false;                // on a list (device lock)
  // Hibernation session (hibernation spec §9.5, §9.7):
  bool hib_claimed GUARDED_BY(lock) = false;   // on the session's private list (flag FREE)
  bool hib_whole GUARDED_BY(lock) = false;     // handed out whole, no table, count counts it
  bool hib_reserved GUARDED_BY(lock) = false;  // reserved at swapon: no list, flag NONE
  // Slot counts below fit 16 bits: a cluster has at most 2^15 slots.
  static_assert(kMaxClusterShift < 16);
  uint16_t extend_users GUARDED_BY(lock) = 0;  // slots whose count lives in extend
  // Slots of table that are slot::Reclaimable: the index the full-cluster
  // reclaim walks by (SwapSystem::State::ReclaimFull). Written only with
  // `lock` held (SetSlot), read under the device lock without it, as the
  // list links are: an atomic, so that read is not a data race.
  std::atomic<uint16_t> reclaimable{0};
  std::unique_ptr<uint64_t[]> table GUARDED_BY(lock);   // CLUSTER slot entries, or none
  std::unique_ptr<uint32_t[]> extend GUARDED_BY(lock);  // counts past the inline width
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
  static constexpr uint8_t kBase[] = {
      0, kFreeListIdx, kNonfullListIdx, kFragListIdx, kFullListIdx, kDiscardListIdx};
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

}  // namespace swaplab::alloc
