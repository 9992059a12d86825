// SPDX-License-Identifier: MIT
// Device selection (src/alloc/avail_list.cc, allocator spec §2.3): which
// device a successful allocation may use, given the avail list and the CPU
// hint before the call.
#include <algorithm>
#include <climits>
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

Harness::Selection Harness::BeforeAlloc(int cpu, int order) const {
  return Selection{sys_->avail_devices(), sys_->Hint(cpu, order), !AllocMayReclaim()};
}

void Harness::CheckSelection(const Selection& before, SwapEntry got, int order) {
  if (policy_.slot_cache) return;  // §10.1: batches come from whichever device refilled
  const bool via_hint = before.hint.type == got.type;
  if (order > 0) {
    // Large folios try only the first device of the avail list (§2.3).
    HARNESS_CHECK(
        via_hint || (!before.avail.empty() && before.avail.front() == got.type),
        "order-" + std::to_string(order) + " folio placed on device " + std::to_string(got.type) +
            ", but the avail list started with " +
            (before.avail.empty() ? std::string("nothing") : std::to_string(before.avail.front())) +
            " and the CPU hint pointed at " + std::to_string(before.hint.type) + " (§2.3)");
    return;
  }
  if (!before.exact || via_hint) return;
  // Order 0 walks the avail list by priority and cannot fail on a device
  // with an EMPTY slot outside the discard list (§2.3, §2.4).
  int top = INT32_MIN;
  for (const auto& [t, sc] : scan_) {
    if (sc.empty_not_discard > 0) top = std::max(top, sc.prio);
  }
  const int got_prio = scan_.at(got.type).prio;
  HARNESS_CHECK(got_prio >= top, "order-0 folio placed on device " + std::to_string(got.type) +
                                     " (prio " + std::to_string(got_prio) +
                                     ") while a device of prio " + std::to_string(top) +
                                     " had an EMPTY slot (§2.3)");
}

}  // namespace swaplab::alloc::model
