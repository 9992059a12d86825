// SPDX-License-Identifier: MIT
// The avail list: the device walk of the slow path and the list's
// membership changes (allocator spec §2.3, §2.8 step 5, §3.5).
#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "alloc/system_state.h"

namespace swaplab::alloc {

// Moves `type` behind the devices of its priority (kernel: plist_requeue).
static void RequeueAvailLocked(
    std::vector<int>& avail, const std::array<std::unique_ptr<SwapDevice>, kMaxSwapfiles>& records,
    int type) {
  size_t i = 0;
  while (i < avail.size() && avail[i] != type) ++i;
  if (i == avail.size()) return;
  const int prio = records[type]->prio;
  size_t j = i;
  while (j + 1 < avail.size() && records[avail[j + 1]]->prio == prio) {
    avail[j] = avail[j + 1];
    ++j;
  }
  avail[j] = type;
}

// Mirrors the device walk of swap_alloc_slow() (and get_swap_pages() of
// older kernels): priority order, requeue among equal priorities, large
// folios try one device only. Unlike the kernel, a device that already
// failed in this walk is skipped (allocator spec §11 U5, docs/fidelity.md).
bool SwapSystem::State::WalkAvail(int order, const std::function<bool(SwapDevice&)>& try_device) {
  uint64_t failed = 0;
  avail_lock.Lock();
  int type = avail.empty() ? -1 : avail.front();
  while (type >= 0) {
    int succ = -1;
    for (size_t i = 0; i + 1 < avail.size(); ++i) {
      if (avail[i] == type) {
        succ = avail[i + 1];
        break;
      }
    }
    RequeueAvailLocked(avail, records, type);
    avail_lock.Unlock();
    SwapDevice* d = Dev(type);
    if (d->TryGet()) {
      const bool ok = try_device(*d);
      d->Put();
      if (ok) return true;
      if (order > 0) return false;  // large folios try one device only
    }
    failed |= uint64_t{1} << type;
    avail_lock.Lock();
    bool succ_listed = false;
    for (int t : avail) succ_listed |= (t == succ);
    if (succ >= 0 && !succ_listed) {
      type = avail.empty() ? -1 : avail.front();
    } else {
      type = succ;
    }
    if (type >= 0 && (failed >> type & 1)) {
      type = -1;
      for (int t : avail) {
        if (!(failed >> t & 1)) {
          type = t;
          break;
        }
      }
    }
  }
  avail_lock.Unlock();
  return false;
}

// Mirrors swap_alloc_slow() (6.12: get_swap_pages() for one entry).
bool SwapSystem::State::AllocSlow(const AllocRequest& rq, SwapEntry* out) {
  if (!policy.swap_pages_taken_ahead) {
    return WalkAvail(rq.order, [&](SwapDevice& d) {
      const uint64_t off = AllocateOnDevice(d, rq);
      if (off != 0) *out = SwapEntry{d.type, off};
      return off != 0;
    });
  }
  if (TakePagesAhead(1, rq.order) == 0) return false;
  AllocRequest ahead = rq;
  ahead.taken_ahead = true;
  const bool ok = WalkAvail(rq.order, [&](SwapDevice& d) {
    uint64_t off = 0;
    if (AllocBatchOnDevice(d, ahead, 1, &off) == 0) return false;
    *out = SwapEntry{d.type, off};
    return true;
  });
  GiveBackPagesAhead(1, ok ? 1 : 0, rq.order);
  return ok;
}

int SwapSystem::State::TakePagesAhead(int nr, int order) {
  if (!policy.swap_pages_taken_ahead) return nr;
  const int64_t avail = NrSwapPages() >> order;
  if (avail <= 0) return 0;
  const int n = static_cast<int>(std::min<int64_t>(nr, avail));
  pages_ahead.fetch_add(int64_t{n} << order, std::memory_order_relaxed);
  return n;
}

void SwapSystem::State::GiveBackPagesAhead(int taken, int got, int order) {
  if (!policy.swap_pages_taken_ahead || taken <= got) return;
  pages_ahead.fetch_sub(int64_t{taken - got} << order, std::memory_order_relaxed);
}

// Mirrors del_from_avail_list(): sets the off-list bit with a recheck.
// inuse has no other writer while the device lock is held.
void SwapSystem::State::DelFromAvailDeviceLocked(SwapDevice& d, bool swapoff) {
  d.lock.AssertHeld();
  SpinGuard g(avail_lock);
  const uint64_t v = d.inuse.load(std::memory_order_relaxed);
  if (v & kOffListBit) return;
  if (!swapoff && v != d.pages) return;
  d.inuse.store(v | kOffListBit, std::memory_order_release);
  for (size_t i = 0; i < avail.size(); ++i) {
    if (avail[i] == d.type) {
      avail.erase(avail.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
}

// Mirrors add_to_avail_list(): clears the off-list bit unless full again,
// and inserts after the devices of the same priority.
void SwapSystem::State::AddToAvailDeviceLocked(SwapDevice& d) {
  d.lock.AssertHeld();
  SpinGuard g(avail_lock);
  const uint64_t v = d.inuse.load(std::memory_order_relaxed);
  if (!(v & kOffListBit)) return;
  if (!d.writeok.load(std::memory_order_acquire)) return;
  if ((v & ~kOffListBit) == d.pages) return;
  d.inuse.store(v & ~kOffListBit, std::memory_order_release);
  size_t pos = 0;
  while (pos < avail.size() && records[avail[pos]]->prio >= d.prio) ++pos;
  avail.insert(avail.begin() + static_cast<std::ptrdiff_t>(pos), d.type);
}

}  // namespace swaplab::alloc
