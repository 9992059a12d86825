// SPDX-License-Identifier: MIT
// Operations that must be rejected: each call returns an error (or the
// "nothing done" value) and leaves every observable fact unchanged
// (conventions: "bad input never corrupts state: validate first, then
// mutate"). OpError picks the call; the calls live beside the allocator
// file that implements them, in errors_<file>.cc.
#include <functional>
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::ExpectRejected(const std::string& what, int code,
                             const std::function<Status()>& call) {
  desc_ += " " + what;
  const auto before = Observe(*sys_, folios_);
  const Status st = call();
  desc_ += " -> " + (st.ok() ? std::string("ok") : st.ToString());
  HARNESS_CHECK(!st.ok(), what + " succeeded but must be rejected");
  if (code != 0) {
    HARNESS_CHECK(st.code() == code,
                  what + " returned " + st.ToString() + ", want " + ErrnoName(code));
  }
  ExpectUnchanged(before, "rejected " + what);
}

void Harness::ExpectUnchanged(const std::vector<std::string>& before, const std::string& what) {
  const std::string diff = DiffObservations(before, Observe(*sys_, folios_));
  HARNESS_CHECK(diff.empty(), what + " changed the state:\n  " + diff);
}

int Harness::InactiveType() const {
  int t = 0;
  while (devs_.count(t)) ++t;
  return t;
}

int Harness::UncachedFolio(uint32_t x) {
  std::vector<int> idle;
  for (size_t i = 0; i < folios_.size(); ++i) {
    if (!folios_[i].cached) idle.push_back(static_cast<int>(i));
  }
  return idle.empty() ? NewFolio(0) : idle[x % idle.size()];
}

bool Harness::PickSlot(uint32_t x, const std::function<bool(const MSlot&)>& pred,
                       SwapEntry* out) const {
  auto cand = SlotsWhere(pred);
  if (cand.empty()) return false;
  *out = cand[x % cand.size()];
  return true;
}

// op.a % 24 picks the call; each errors_<file>.cc switches on that number.
void Harness::OpError(const OpSpec& op) {
  const uint32_t which = op.a % 24;
  switch (which) {
    case 0:
    case 15:
      RejectSwapon(op, which);
      return;
    case 1:
    case 2:
    case 3:
      RejectFastPath(op, which);
      return;
    case 14:
    case 22:
      RejectHibernationHooks(op, which);
      return;
    case 17:
    case 21:
      RejectSwapReclaim(op, which);
      return;
    case 20:
      RejectSwapSystem();
      return;
    default:  // 4-13, 16, 18, 19, 23
      RejectSwapFree(op, which);
      return;
  }
}

}  // namespace swaplab::alloc::model
