// SPDX-License-Identifier: MIT
// The read-only views must refuse inactive and out-of-range ids
// (src/alloc/swap_system.cc, allocator spec §7).
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::RejectSwapSystem() {
  const int t = InactiveType();
  ExpectRejected("read-only queries on inactive / out-of-range ids", 0, [&] {
    bool any_ok = sys_->Device(t).ok() || sys_->Cluster(t, 0).ok() ||
                  sys_->List(t, ListId::kFree).ok() || sys_->Slot({t, 1}).ok();
    for (const auto& [dt, d] : devs_) {
      any_ok |= sys_->Cluster(dt, d.slots.size() / C()).ok();
      any_ok |= sys_->Slot({dt, d.slots.size() + 5}).ok();
    }
    return any_ok ? Status::Ok() : Status(-EINVAL, "all rejected");
  });
}

}  // namespace swaplab::alloc::model
