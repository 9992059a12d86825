// SPDX-License-Identifier: MIT
// Where the image gets its slots (spec §5, §9.5-§9.8), selectable by name:
//   base                 — AllocHibernationSlot, one slot at a time (§5.1, §5.4)
//   free-clusters        — RFC patch 5: claimed free clusters whole, run cache (§5.5)
//   free-clusters-sorted — + patch 6: claimed clusters in disk order (§9.6)
//   reserve              — + patch 10: the swapon reservation first (§9.7)
//   pmd                  — seed 000's alternative: AllocHibernationRange of
//                          order 9 (the cluster order), then lower, then 0
// The session also keeps the extents tree of every slot handed out (§5.2)
// and gives them all back on error (free_all_swap_pages, §5.3).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <string_view>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::hibernate {

enum class SlotSourceKind { kBase, kFreeClusters, kFreeClustersSorted, kReserve, kPmd };
Result<SlotSourceKind> ParseSlotSource(std::string_view name);
const char* Name(SlotSourceKind k);

// swsusp_extents: closed slot ranges [start, end] keyed by start. Mirrors
// swsusp_extents_insert(): a slot next to a range grows it; ranges are
// never merged with each other. (std::map replaces the rb-tree walk, so a
// slot that touches two ranges grows the lower one.)
class ExtentTree {
 public:
  // -EINVAL if `slot` is already recorded.
  Status Insert(uint64_t slot);
  const std::map<uint64_t, uint64_t>& ranges() const { return ranges_; }
  uint64_t slots() const { return slots_; }
  bool empty() const { return ranges_.empty(); }
  void Clear() {
    ranges_.clear();
    slots_ = 0;
  }

 private:
  std::map<uint64_t, uint64_t> ranges_;  // start -> end (inclusive)
  uint64_t slots_ = 0;
};

struct SessionStats {
  uint64_t slots = 0;           // slots handed to the writer
  uint64_t runs_taken = 0;      // runs from the allocator (each single slot counts)
  uint64_t fallback_slots = 0;  // single slots (run length 1)
  // Stretches of consecutive slots in the order they were handed out (a
  // new one whenever a slot is not the previous one + 1).
  uint64_t alloc_runs = 0;
};

// One image's slot bookkeeping on device `type`. Not thread-safe.
class ImageSession {
 public:
  ImageSession(alloc::SwapSystem& sys, int type, SlotSourceKind kind, alloc::CpuId cpu = 0);
  ~ImageSession();  // End()
  ImageSession(const ImageSession&) = delete;
  ImageSession& operator=(const ImageSession&) = delete;

  // Binds the RFC session (HibernationBind; sort for -sorted and reserve)
  // and marks storage suspended. -ENODEV: no such active device; -EINVAL:
  // `reserve` on a device swapped on without a reservation.
  Status Begin();
  // Mirrors alloc_swapdev_block(): one slot, recorded in the extents; 0 if
  // none is left (or the injected failure point was reached).
  uint64_t AllocSlot();
  // swapdev_block(): the slot's disk block.
  uint64_t Dblock(uint64_t slot) const { return sys_.SwapdevBlock(type_, slot); }
  // count_swap_pages(type, free=1): free slots, the reservation counted free.
  uint64_t FreeSlots() const { return sys_.CountSwapPages(type_, true); }
  // Mirrors free_all_swap_pages(): the unused rest of the current run,
  // then every extent, then HibernationReset. The first error is returned
  // (and freeing goes on).
  Status FreeAll();
  // Unbinds (claimed, unused clusters go back) and puts storage suspension
  // back as Begin found it.
  void End();

  // Fault injection: the n-th AllocSlot call (0-based) and every later one fail.
  void FailAllocAt(uint64_t n) { fail_at_ = n; }
  int type() const { return type_; }
  SlotSourceKind kind() const { return kind_; }
  const ExtentTree& extents() const { return extents_; }
  const SessionStats& stats() const { return stats_; }

 private:
  bool NextRun();
  Status GiveBack(uint64_t first, uint64_t nr);
  alloc::SwapSystem& sys_;
  int type_;
  SlotSourceKind kind_;
  alloc::CpuId cpu_;
  bool begun_ = false, bound_ = false, was_suspended_ = false;
  uint64_t run_offset_ = 0, run_left_ = 0;  // swsusp_run (§5.5)
  int pmd_order_ = -1;                      // largest order still worth trying
  uint64_t calls_ = 0, fail_at_ = UINT64_MAX, last_slot_ = 0;
  ExtentTree extents_;
  SessionStats stats_;
};

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
