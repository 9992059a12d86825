// SPDX-License-Identifier: MIT
// swapon and swapoff calls that must fail (src/alloc/swapon.cc, allocator
// spec §5.1, §5.2): bad swapon options of every kind, swapoff of an
// inactive type.
#include <string>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::OpBadSwapon(const OpSpec& op) {
  SwaponOptions o = MakeSwapon(op);
  int code = -EINVAL;
  std::string what;
  switch (op.b % 8) {
    case 0:
      if (!devs_.empty()) {
        o.name = devs_.begin()->second.opts.name;
        code = -EBUSY;
        what = "swapon of an active name";
        break;
      }
      [[fallthrough]];
    case 1:
      o.bad_pages.push_back(0);
      what = "swapon with bad page 0";
      break;
    case 2:
      o.bad_pages.push_back(o.pages);
      what = "swapon with a bad page past the end";
      break;
    case 3: {
      const uint64_t b = 1 + op.d % (o.pages - 1);
      o.bad_pages = {b, b};
      what = "swapon with a duplicated bad page";
      break;
    }
    case 4:
      o.pages = 3;
      o.bad_pages = {1, 2};
      what = "swapon without a usable page";
      break;
    case 5:
      o.prio = 32768;
      what = "swapon with prio 32768";
      break;
    case 6:
      if (op.d & 1) {
        o.blkdev = false;
        o.bad_pages = {1 + op.d % (o.pages - 1)};
        what = "swapon of a swap file listing a bad page";
        break;
      }
      o.prio = -5;
      what = "swapon with prio -5";
      break;
    default:
      o.pages = op.d & 1;
      o.bad_pages.clear();
      what = "swapon of " + std::to_string(o.pages) + " pages";
      break;
  }
  ExpectRejected(what, code, [&] { return sys_->Swapon(o).status(); });
}

void Harness::RejectSwapon(const OpSpec& op, uint32_t which) {
  switch (which) {
    case 0:
      OpBadSwapon(op);
      return;
    case 15: {
      const int t = (op.b & 1) ? InactiveType() : kMaxSwapfiles + 3;
      ExpectRejected("Swapoff(inactive type " + std::to_string(t) + ")", -EINVAL,
                     [&] { return sys_->Swapoff(t, {}); });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
