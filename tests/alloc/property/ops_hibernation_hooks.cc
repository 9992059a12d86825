// SPDX-License-Identifier: MIT
// The swap side of hibernation (src/alloc/hibernation_hooks.cc, allocator
// spec §6): hibernation slots, pinning a device, and the read-only hooks
// (CountSwapPages, SwapdevBlock, FindFirstSwap, with ProcSwaps and
// vm_swap_full).
#include <iterator>
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::OpHibAlloc(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const int cpu = PickCpu(op.c);
  const bool must = !AllocMayReclaim() && scan_.at(t).empty_not_discard > 0;
  desc_ += " type " + std::to_string(t) + " cpu " + std::to_string(cpu);
  const SwapEntry e = sys_->AllocHibernationSlot(cpu, t);
  ReconcileVanished(Vanish::kAny, {}, nullptr, t);
  if (!e.valid()) {
    desc_ += " -> none";
    HARNESS_CHECK(!must,
                  "AllocHibernationSlot found nothing while the device has an EMPTY slot outside "
                  "the discard list (§6, §2.4)");
    return;
  }
  desc_ += " -> " + ToString(e);
  HARNESS_CHECK(e.type == t, "hibernation slot on another device (§6: exactly that device)");
  MDevice& d = devs_.at(t);
  HARNESS_CHECK(e.offset < d.max, "hibernation slot past the end");
  MSlot& s = d.slots[e.offset];
  HARNESS_CHECK(s.kind == MSlot::Kind::kFree,
                "hibernation slot " + ToString(e) + " was " + Describe(s) + " (O1)");
  s = MSlot{MSlot::Kind::kHib, 1, -1};
  exempt_.insert({t, e.offset});
}

void Harness::OpHibFree(const OpSpec& op) {
  auto cand = SlotsWhere([](const MSlot& s) { return s.kind == MSlot::Kind::kHib; });
  if (cand.empty()) return;
  const SwapEntry e = cand[op.a % cand.size()];
  desc_ += " " + ToString(e);
  CheckStatusOk(sys_->FreeHibernationSlot(e), "FreeHibernationSlot");
  SlotOf(e) = MSlot{};
  ReconcileVanished(Vanish::kNone);
}

void Harness::OpPin(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  MDevice& d = devs_.at(t);
  const uint64_t bdev = d.opts.bdev, block = d.opts.first_block;
  switch (op.b % 4) {
    case 0:
      desc_ += " unpin " + std::to_string(t);
      sys_->UnpinHibernationSwapType(t);
      d.pinned = false;
      break;
    case 1: {
      desc_ += " find " + std::to_string(t);
      auto r = sys_->FindHibernationSwapType(bdev, block);
      HARNESS_CHECK(r.ok() && *r == t, "FindHibernationSwapType(bdev, block of slot 0) " +
                                           (r.ok() ? std::to_string(*r) : r.status().ToString()));
      auto w = sys_->FindHibernationSwapType(bdev, block + 1);
      HARNESS_CHECK(!w.ok(), "FindHibernationSwapType with the wrong block succeeded (§6)");
      break;
    }
    default: {
      desc_ += " pin " + std::to_string(t);
      if (d.pinned) {
        const auto before = Observe(*sys_, folios_);
        auto r = sys_->PinHibernationSwapType(bdev, block);
        HARNESS_CHECK(!r.ok() && r.status().code() == -EBUSY,
                      "second pin did not return -EBUSY (§6)");
        ExpectUnchanged(before, "second pin");
      } else {
        auto r = sys_->PinHibernationSwapType(bdev, block);
        HARNESS_CHECK(r.ok() && *r == t, "PinHibernationSwapType " +
                                             (r.ok() ? std::to_string(*r) : r.status().ToString()));
        d.pinned = true;
      }
    }
  }
}

void Harness::OpQueries(const OpSpec& op) {
  const int64_t nr = sys_->nr_swap_pages(), total = sys_->total_swap_pages();
  HARNESS_CHECK(sys_->vm_swap_full() == (2 * nr < total), "vm_swap_full() (§4.1)");
  const std::string proc = sys_->ProcSwaps();
  for (const auto& [t, d] : devs_) {
    auto di = sys_->Device(t);
    HARNESS_CHECK(di.ok(), "Device()");
    HARNESS_CHECK(sys_->CountSwapPages(t, false) == d.pages, "CountSwapPages(type, false) (§6)");
    HARNESS_CHECK(sys_->CountSwapPages(t, true) == d.pages - di->inuse,
                  "CountSwapPages(type, true) (§6)");
    const uint64_t off = 1 + op.a % (d.max - 1);
    HARNESS_CHECK(sys_->SwapdevBlock(t, off) == d.opts.first_block + off, "SwapdevBlock (§6)");
    HARNESS_CHECK(proc.find(d.opts.name) != std::string::npos, "ProcSwaps() misses " + d.opts.name);
  }
  auto first = sys_->FindFirstSwap();
  HARNESS_CHECK(first.ok() == !devs_.empty(), "FindFirstSwap() " + first.status().ToString());
  if (first.ok())
    HARNESS_CHECK(devs_.count(*first) > 0, "FindFirstSwap() returned an inactive type");
  for (int t : sys_->avail_devices())
    HARNESS_CHECK(devs_.count(t) > 0, "avail device not active (G3)");
  ReconcileVanished(Vanish::kNone);
}

}  // namespace swaplab::alloc::model
