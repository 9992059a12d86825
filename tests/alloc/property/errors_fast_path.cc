// SPDX-License-Identifier: MIT
// FolioAllocSwap calls that must fail (src/alloc/fast_path.cc): a folio
// already in the swap cache, an order above the cluster order (or an mTHP
// order under a policy without mTHP swap-out), an unlocked folio.
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::RejectFastPath(const OpSpec& op, uint32_t which) {
  const int cpu = PickCpu(op.c);
  switch (which) {
    case 1: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0) return;
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioAllocSwap(folio#" + std::to_string(fi) + " already cached)", -EINVAL,
                     [&] {
                       FolioLockGuard g(f);
                       return sys_->FolioAllocSwap(cpu, f);
                     });
      return;
    }
    case 2: {
      // Without mTHP swap-out (6.1) an order between 0 and the PMD order
      // is refused too, half the time that one is tried.
      const bool mthp = !policy_.mthp_swap && cfg_.cluster_shift > 1 && (op.b & 1);
      Folio& f = *folios_[NewFolio(mthp ? 1 : cfg_.cluster_shift + 1)].f;
      if (mthp) {
        ExpectRejected("FolioAllocSwap(mTHP order, mthp_swap off)", -EINVAL, [&] {
          FolioLockGuard g(f);
          return sys_->FolioAllocSwap(cpu, f);
        });
        return;
      }
      ExpectRejected("FolioAllocSwap(order > cluster order)", -EINVAL, [&] {
        FolioLockGuard g(f);
        return sys_->FolioAllocSwap(cpu, f);
      });
      return;
    }
    case 3: {
      Folio& f = *folios_[NewFolio(0)].f;
      ExpectRejected("FolioAllocSwap(unlocked folio)", -EINVAL,
                     [&] { return sys_->FolioAllocSwap(cpu, f); });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
