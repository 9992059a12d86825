// SPDX-License-Identifier: MIT
// A folio as the swap code sees it: a naturally aligned group of 2^order
// pages that can sit in the swap cache (kernel: struct folio, the fields
// swap and reclaim read).
#pragma once
#pragma GCC visibility push(default)

#include <atomic>
#include <thread>

#include "swaplab/alloc/types.h"

namespace swaplab::alloc {

// The caller owns every Folio. While a folio is in the swap cache the
// allocator's slot table points at it, so the caller must not destroy it
// before it has left the swap cache; destroy it only while holding its lock
// and after checking in_swap_cache() is false (reclaim from another CPU
// trylocks it and holds the lock while it works).
//
// Operations that take a Folio& require the caller to hold the folio lock
// (kernel: folio_lock()); they report -EINVAL otherwise.
class Folio {
 public:
  explicit Folio(int order = 0) : order_(order) {}
  Folio(const Folio&) = delete;
  Folio& operator=(const Folio&) = delete;

  int order() const { return order_; }
  int nr_pages() const { return 1 << order_; }
  // Changing the order is only allowed out of the swap cache (a split).
  void set_order(int order) { order_ = order; }

  // First slot while in the swap cache, invalid otherwise. Written by the
  // allocator under the folio lock and the cluster lock.
  SwapEntry swap() const { return swap_; }
  bool in_swap_cache() const { return swap_.valid(); }

  // Folio lock. A folio locked by its owner cannot be reclaimed.
  bool TryLock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void Lock() {
    while (!TryLock()) std::this_thread::yield();
  }
  void Unlock() { locked_.store(false, std::memory_order_release); }
  bool locked() const { return locked_.load(std::memory_order_relaxed); }

  // State reclaim reads (allocator spec §4.2, Appendix A). Change them under
  // the folio lock.
  bool mapped = true;      // some page-table entry still maps it
  bool writeback = false;  // under writeback: not freeable
  bool dirty = false;      // set when it loses its swap copy

 private:
  friend struct FolioAccess;  // the allocator sets swap_
  int order_;
  SwapEntry swap_{};
  std::atomic<bool> locked_{false};
};

// RAII folio lock.
class FolioLockGuard {
 public:
  explicit FolioLockGuard(Folio& f) : f_(f) { f_.Lock(); }
  ~FolioLockGuard() { f_.Unlock(); }
  FolioLockGuard(const FolioLockGuard&) = delete;
  FolioLockGuard& operator=(const FolioLockGuard&) = delete;

 private:
  Folio& f_;
};

}  // namespace swaplab::alloc
#pragma GCC visibility pop
