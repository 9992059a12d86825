// SPDX-License-Identifier: MIT
// Slot sources and free_all_swap_pages (spec §5, §9.5-§9.8).
#include "swaplab/hibernate/image_session.h"

#include <bit>
#include <string>

namespace swaplab::hibernate {

Result<SlotSourceKind> ParseSlotSource(std::string_view n) {
  if (n == "base") return SlotSourceKind::kBase;
  if (n == "free-clusters") return SlotSourceKind::kFreeClusters;
  if (n == "free-clusters-sorted") return SlotSourceKind::kFreeClustersSorted;
  if (n == "reserve") return SlotSourceKind::kReserve;
  if (n == "pmd") return SlotSourceKind::kPmd;
  return Status(-EINVAL,
                "slot source '" + std::string(n) +
                    "': expected base, free-clusters, free-clusters-sorted, reserve or pmd");
}

const char* Name(SlotSourceKind k) {
  switch (k) {
    case SlotSourceKind::kBase:
      return "base";
    case SlotSourceKind::kFreeClusters:
      return "free-clusters";
    case SlotSourceKind::kFreeClustersSorted:
      return "free-clusters-sorted";
    case SlotSourceKind::kReserve:
      return "reserve";
    case SlotSourceKind::kPmd:
      return "pmd";
  }
  return "?";
}

// Mirrors kernel/power/swap.c: swsusp_extents_insert().
Status ExtentTree::Insert(uint64_t slot) {
  auto it = ranges_.upper_bound(slot);  // first range starting after slot
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (slot <= prev->second)
      return Status(-EINVAL,
                    "swsusp_extents: slot " + std::to_string(slot) + " is already recorded");
    if (slot == prev->second + 1) {
      prev->second = slot;
      ++slots_;
      return Status::Ok();
    }
  }
  if (it != ranges_.end() && it->first == slot + 1) {
    const uint64_t end = it->second;
    ranges_.erase(it);
    ranges_.emplace(slot, end);
  } else {
    ranges_.emplace(slot, slot);
  }
  ++slots_;
  return Status::Ok();
}

ImageSession::ImageSession(alloc::SwapSystem& sys, int type, SlotSourceKind kind, alloc::CpuId cpu)
    : sys_(sys), type_(type), kind_(kind), cpu_(cpu) {}

ImageSession::~ImageSession() { End(); }

Status ImageSession::Begin() {
  if (begun_) return Status::Ok();
  auto dev = sys_.Device(type_);
  if (!dev.ok() || !dev->writeok)
    return Status(-ENODEV, "image session: no active swap device of type " + std::to_string(type_));
  if (kind_ == SlotSourceKind::kReserve && sys_.HibernationReserve(type_).second == 0)
    return Status(-EINVAL,
                  "image session: slot source 'reserve' needs a device swapped on with "
                  "hibernation_reserve_pages (device " +
                      std::to_string(type_) + " has none)");
  if (kind_ == SlotSourceKind::kFreeClusters || kind_ == SlotSourceKind::kFreeClustersSorted ||
      kind_ == SlotSourceKind::kReserve) {
    Status st = sys_.HibernationBind(type_, kind_ != SlotSourceKind::kFreeClusters);
    if (!st.ok()) return st;
    bound_ = true;
  }
  pmd_order_ = std::countr_zero(sys_.cluster_size());
  was_suspended_ = sys_.storage_suspended();
  sys_.SetStorageSuspended(true);
  begun_ = true;
  return Status::Ok();
}

void ImageSession::End() {
  if (!begun_) return;
  if (bound_) sys_.HibernationUnbind();
  bound_ = false;
  sys_.SetStorageSuspended(was_suspended_);
  begun_ = false;
}

// Fills the run cache from the slot source; false if nothing is left.
bool ImageSession::NextRun() {
  switch (kind_) {
    case SlotSourceKind::kBase: {
      const alloc::SwapEntry e = sys_.AllocHibernationSlot(cpu_, type_);
      if (!e.valid()) return false;
      run_offset_ = e.offset;
      run_left_ = 1;
      break;
    }
    case SlotSourceKind::kPmd: {
      alloc::SwapEntry e{};
      int order = pmd_order_;
      for (; order >= 0; --order) {
        e = sys_.AllocHibernationRange(cpu_, type_, order);
        if (e.valid()) break;
      }
      if (!e.valid()) return false;
      pmd_order_ = order;  // larger orders just failed; do not retry them
      run_offset_ = e.offset;
      run_left_ = uint64_t{1} << order;
      break;
    }
    default: {
      const auto run = sys_.AllocHibernationRun(cpu_);
      if (run.nr == 0 || !run.first.valid() || run.first.type != type_) return false;
      run_offset_ = run.first.offset;
      run_left_ = run.nr;
      break;
    }
  }
  ++stats_.runs_taken;
  if (run_left_ == 1) ++stats_.fallback_slots;
  return true;
}

Status ImageSession::GiveBack(uint64_t first, uint64_t nr) {
  if (nr == 0) return Status::Ok();
  if (kind_ == SlotSourceKind::kBase) {
    Status first_err;
    for (uint64_t s = first; s < first + nr; ++s) {
      Status st = sys_.FreeHibernationSlot(alloc::SwapEntry{type_, s});
      if (!st.ok() && first_err.ok()) first_err = st;
    }
    return first_err;
  }
  return sys_.FreeHibernationRun(alloc::SwapEntry{type_, first}, nr);
}

// Mirrors alloc_swapdev_block() with the RFC's run cache (§5.1, §5.5).
uint64_t ImageSession::AllocSlot() {
  if (calls_++ >= fail_at_) return 0;
  if (!begun_) return 0;
  if (run_left_ == 0 && !NextRun()) return 0;
  const uint64_t slot = run_offset_++;
  --run_left_;
  if (!extents_.Insert(slot).ok()) {  // give back this slot and the unregistered tail
    (void)GiveBack(slot, run_left_ + 1);
    run_left_ = 0;
    return 0;
  }
  ++stats_.slots;
  if (stats_.slots == 1 || slot != last_slot_ + 1) ++stats_.alloc_runs;
  last_slot_ = slot;
  return slot;
}

// Mirrors free_all_swap_pages() (§5.3; RFC patch 5 variant for runs).
Status ImageSession::FreeAll() {
  Status first_err = GiveBack(run_offset_, run_left_);
  run_left_ = 0;
  for (const auto& [start, end] : extents_.ranges()) {
    Status st = GiveBack(start, end - start + 1);
    if (!st.ok() && first_err.ok()) first_err = st;
  }
  extents_.Clear();
  if (bound_) sys_.HibernationReset();
  return first_err;
}

}  // namespace swaplab::hibernate
