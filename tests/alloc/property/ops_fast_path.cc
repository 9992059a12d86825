// SPDX-License-Identifier: MIT
// FolioAllocSwap (src/alloc/fast_path.cc and the slow path behind it):
// a new or reused folio gets slots, or -ENOMEM only when the spec allows it.
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::OpAlloc(const OpSpec& op) {
  const int k = PickOrder(op.a);
  const int cpu = PickCpu(op.c);
  const bool must = k == 0 ? Order0MustSucceed() : LargeMustSucceed();
  int fi = -1;
  if ((op.b & 3) == 0) {  // reuse a folio that left the swap cache
    std::vector<int> idle;
    for (size_t i = 0; i < folios_.size(); ++i) {
      if (!folios_[i].cached) idle.push_back(static_cast<int>(i));
    }
    if (!idle.empty()) {
      fi = idle[(op.b >> 2) % idle.size()];
      FolioLockGuard g(*folios_[fi].f);
      folios_[fi].f->set_order(k);
      folios_[fi].f->mapped = true;
      folios_[fi].f->writeback = false;
      folios_[fi].f->dirty = false;
    }
  }
  if (fi < 0) fi = NewFolio(k);
  Folio& f = *folios_[fi].f;
  desc_ += " folio#" + std::to_string(fi) + " order " + std::to_string(k) + " cpu " +
           std::to_string(cpu);
  const Selection sel = BeforeAlloc(cpu, k);
  const SwapCounters before = sys_->counters();
  Status st;
  {
    FolioLockGuard g(f);
    st = sys_->FolioAllocSwap(cpu, f);
  }
  ReconcileVanished(Vanish::kAny, {fi});
  const SwapCounters after = sys_->counters();
  if (st.ok()) {
    desc_ += " -> " + ToString(f.swap());
    CheckSelection(sel, f.swap(), k);
    AcceptAllocation(fi, "FolioAllocSwap");
    HARNESS_CHECK(after.alloc_failures == before.alloc_failures,
                  "alloc_failures counted although FolioAllocSwap succeeded (§7)");
    HARNESS_CHECK(after.pswpout == before.pswpout, "pswpout counted at allocation time (§7)");
    return;
  }
  desc_ += " -> " + st.ToString();
  HARNESS_CHECK(st.code() == -ENOMEM, "FolioAllocSwap of a valid folio returned " + st.ToString());
  HARNESS_CHECK(!f.in_swap_cache(), "failed FolioAllocSwap left the folio in the swap cache");
  HARNESS_CHECK(!must,
                k == 0 ? "order-0 allocation failed while a device has an EMPTY slot (§2.4, §2.9)"
                       : "order-" + std::to_string(k) +
                             " allocation failed while every avail device is a block device "
                             "with a FREE cluster (§2.3, §2.4)");
  HARNESS_CHECK(after.alloc_failures == before.alloc_failures + 1,
                "alloc_failures did not count the -ENOMEM");
}

}  // namespace swaplab::alloc::model
