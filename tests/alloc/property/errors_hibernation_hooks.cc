// SPDX-License-Identifier: MIT
// Hibernation hook calls that must fail (src/alloc/hibernation_hooks.cc,
// allocator spec §6): FreeHibernationSlot of a slot that is no
// hibernation slot, AllocHibernationSlot on an inactive type.
#include <functional>
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::RejectHibernationHooks(const OpSpec& op, uint32_t which) {
  const int cpu = PickCpu(op.c);
  auto is_free = [](const MSlot& s) { return s.kind == MSlot::Kind::kFree; };
  SwapEntry e;
  switch (which) {
    case 14: {
      // Without HIB entries a hibernation slot is SHADOW count 1 (§6, U2),
      // indistinguishable from a swapped-out page with one reference: only
      // other counts can be rejected then.
      const bool hib_entry = policy_.hibernation_hib_entry;
      auto pred =
          (op.b & 1) ? std::function<bool(const MSlot&)>(is_free) : [hib_entry](const MSlot& s) {
            return s.kind == MSlot::Kind::kShadow && (hib_entry || s.count != 1);
          };
      if (!PickSlot(op.d, pred, &e)) return;
      ExpectRejected(
          "FreeHibernationSlot(" + std::string(KindName(SlotOf(e).kind)) + " " + ToString(e) + ")",
          0, [&] { return sys_->FreeHibernationSlot(e); });
      return;
    }
    case 22: {
      const int t = InactiveType();
      ExpectRejected("AllocHibernationSlot(inactive type " + std::to_string(t) + ")", 0, [&] {
        const SwapEntry h = sys_->AllocHibernationSlot(cpu, t);
        return h.valid() ? Status::Ok() : Status(-ENODEV, "none");
      });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
