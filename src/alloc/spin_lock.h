// SPDX-License-Identifier: MIT
// A small test-and-set lock with clang thread-safety annotations. Used for
// the allocator's spinlocks (§9): cluster, device, avail list, CPU-local,
// global cluster.
#pragma once

#include <atomic>
#include <cassert>
#include <thread>

#include "alloc/thread_annotations.h"

namespace swaplab::alloc {

class CAPABILITY("mutex") SpinLock {
 public:
  // Uncontended: one exchange. Contended: spin on plain loads (no cache
  // line ping-pong), yield after 64 tries.
  void Lock() ACQUIRE() {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
      return;
    LockSlow();
  }
  bool TryLock() TRY_ACQUIRE(true) { return TryLockRaw(); }
  void Unlock() RELEASE() { locked_.store(false, std::memory_order_release); }
  bool IsLocked() const { return locked_.load(std::memory_order_relaxed); }
  // Debug builds: some thread holds the lock (a SpinLock has no owner).
  void AssertHeld() const ASSERT_CAPABILITY(this) { assert(IsLocked()); }
  // Initialisation before publication (swapon filling in clusters no other
  // thread can reach yet): nobody holds the lock or can take it, so what it
  // guards may be written without it. Debug builds check the first half.
  void AssertUnpublished() const ASSERT_CAPABILITY(this) { assert(!IsLocked()); }

 private:
  [[gnu::noinline]] void LockSlow() {
    for (int spins = 0; !TryLockRaw(); ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }
  bool TryLockRaw() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  std::atomic<bool> locked_{false};
};

class SCOPED_CAPABILITY SpinGuard {
 public:
  explicit SpinGuard(SpinLock& l) ACQUIRE(l) : l_(l) { l_.Lock(); }
  ~SpinGuard() RELEASE() { l_.Unlock(); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  SpinLock& l_;
};

}  // namespace swaplab::alloc
