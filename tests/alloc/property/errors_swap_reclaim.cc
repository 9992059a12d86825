// SPDX-License-Identifier: MIT
// Reclaim calls that must do nothing (src/alloc/swap_reclaim.cc, allocator
// spec §4): TryToReclaimSwap of a slot without a folio, ReclaimFullClusters
// of an inactive type.
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::RejectSwapReclaim(const OpSpec& op, uint32_t which) {
  SwapEntry e;
  switch (which) {
    case 17: {
      if (op.b & 1) {
        e = {InactiveType(), 1};
      } else if (!PickSlot(
                     op.d,
                     [](const MSlot& s) {
                       return s.kind == MSlot::Kind::kFree || s.kind == MSlot::Kind::kBad;
                     },
                     &e)) {
        return;
      }
      ExpectRejected("TryToReclaimSwap(" + ToString(e) + " without folio)", 0, [&] {
        const int r = sys_->TryToReclaimSwap(e, kReclaimAnyway);
        return r == 0 ? Status(-ENOENT, "0") : Status::Ok();
      });
      return;
    }
    case 21: {
      const int t = InactiveType();
      ExpectRejected("ReclaimFullClusters(inactive type " + std::to_string(t) + ")", 0,
                     [&] { return sys_->ReclaimFullClusters(t, op.b & 1); });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
