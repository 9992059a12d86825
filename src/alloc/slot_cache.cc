// SPDX-License-Identifier: MIT
// The per-CPU swap slot cache of kernels up to v6.14 (allocator spec §10.1,
// kernel: mm/swap_slots.c): the allocation side, and 6.12's return buffer
// (policy slot_cache_return).
#include <algorithm>
#include <string>
#include <utility>

#include "alloc/system_state.h"

namespace swaplab::alloc {

// Mirrors check_cache_active(): active while free swap is plentiful;
// deactivation drains every CPU's cache.
void SwapSystem::State::SlotCacheCheckActive() {
  const int64_t nr = NrSwapPages();
  const int64_t per_all = static_cast<int64_t>(policy.slot_cache_batch) * opts.nr_cpus;
  const bool active = slot_cache_active.load(std::memory_order_acquire);
  if (!active && nr > 5 * per_all) {
    std::lock_guard g(slot_cache_mutex);
    slot_cache_active.store(true, std::memory_order_release);
  } else if (active && nr < 2 * per_all) {
    std::lock_guard g(slot_cache_mutex);
    if (slot_cache_active.exchange(false, std::memory_order_acq_rel)) SlotCacheDrainAll();
  }
}

void SwapSystem::State::FreeHeldSlot(const SwapEntry& e) {
  SwapDevice* d = Dev(e.type);
  if (d == nullptr || !d->TryGet()) return;
  {
    SwapCluster& c = d->ClusterOf(e.offset, cluster_shift);
    SpinGuard g(c.lock);
    const uint64_t v = c.table ? c.table[e.offset - ClusterStart(*d, c)] : slot::kEmpty;
    if (slot::Kind(v) == SlotKind::kCached && slot::FolioOf(v) == nullptr)
      FreeSlotsClusterLocked(*d, c, e.offset, 1);
  }
  d->Put();
}

namespace {

// The order 6.12's lib/sort.c sort() leaves entries in when they are
// sorted by swap type alone (swp_entry_cmp): a bottom-up heapsort that pops
// the two largest at a time; not stable, so the entries of one device can
// come out of a mixed batch in another order than they went in.
void HeapSortByType(std::vector<SwapEntry>& v) {
  auto cmp = [&](size_t i, size_t j) { return v[i].type - v[j].type; };
  auto parent = [](size_t i) { return (i - 1) / 2; };
  size_t n = v.size(), a = n / 2;
  unsigned shift = 0;
  if (a == 0) return;
  for (;;) {
    if (a != 0) {
      a -= size_t{1} << shift;  // building the heap: sift v[a] down
    } else if (n > 3) {
      std::swap(v[0], v[--n]);  // the largest to the end
      shift = cmp(1, 2) <= 0 ? 1 : 0;
      a = size_t{1} << shift;   // the larger child, second largest,
      std::swap(v[a], v[--n]);  // next to it; v[a] sifts down now, v[0] next
    } else {
      break;
    }
    // Down to a leaf along the larger child (ties: the right one), then back
    // up to where v[a] belongs, and rotate it into place.
    size_t b = a, c = 0, d = 0;
    for (;;) {
      c = 2 * b + 1;
      d = c + 1;
      if (d >= n) break;
      b = cmp(c, d) > 0 ? c : d;
    }
    if (d == n) b = c;  // a last leaf without a sibling
    while (b != a && cmp(a, b) >= 0) b = parent(b);
    for (c = b; b != a;) {
      b = parent(b);
      std::swap(v[b], v[c]);
    }
  }
  std::swap(v[0], v[--n]);
  if (n == 2 && cmp(0, 1) > 0) std::swap(v[0], v[1]);
}

}  // namespace

void SwapSystem::State::FreeHeldSlots(std::vector<SwapEntry>& entries) {
  if (nr_swapfiles.load(std::memory_order_acquire) > 1) HeapSortByType(entries);
  for (const SwapEntry& e : entries) FreeHeldSlot(e);
}

void SwapSystem::State::SlotCacheDrainCpuLocked(PerCpu& pc) {
  pc.lock.AssertHeld();
  std::vector<SwapEntry> cached(
      pc.slot_cache.begin() + static_cast<std::ptrdiff_t>(pc.slot_cache_cur), pc.slot_cache.end());
  FreeHeldSlots(cached);
  pc.slot_cache.clear();
  pc.slot_cache_cur = 0;
  // 6.12 drains the return buffer after the cache (SLOTS_CACHE_RET).
  FreeHeldSlots(pc.slot_ret);
  pc.slot_ret.clear();
}

void SwapSystem::State::SlotReturnCpuLocked(PerCpu& pc, const SwapEntry& e) {
  if (pc.slot_ret.size() >= static_cast<size_t>(policy.slot_cache_batch)) {
    FreeHeldSlots(pc.slot_ret);
    pc.slot_ret.clear();
  }
  pc.slot_ret.push_back(e);
}

void SwapSystem::State::SlotReturn(const std::vector<SwapEntry>& held, int locked_cpu) {
  PerCpu& pc = cpus[locked_cpu >= 0 ? locked_cpu : current_cpu.load(std::memory_order_relaxed)];
  for (const SwapEntry& e : held) {
    if (!SlotReturnActive()) {
      FreeHeldSlot(e);  // direct_free
    } else if (locked_cpu >= 0) {
      pc.lock.AssertHeld();
      SlotReturnCpuLocked(pc, e);
    } else {
      SpinGuard g(pc.lock);
      SlotReturnCpuLocked(pc, e);
    }
  }
}

void SwapSystem::State::SlotCacheDrainAll() {
  for (int cpu = 0; cpu < opts.nr_cpus; ++cpu) {
    SpinGuard g(cpus[cpu].lock);
    SlotCacheDrainCpuLocked(cpus[cpu]);
  }
}

// Mirrors folio_alloc_swap() → get_swap_page() of v6.14: the next cached
// slot, refilling with up to one batch from the first device that yields.
bool SwapSystem::State::SlotCacheAlloc(PerCpu& pc, int cpu, Folio& f, SwapEntry* out) {
  SlotCacheCheckActive();
  if (!slot_cache_active.load(std::memory_order_acquire)) return false;
  SpinGuard g(pc.lock);
  if (pc.slot_cache_cur >= pc.slot_cache.size()) {
    pc.slot_cache.clear();
    pc.slot_cache_cur = 0;
    const AllocRequest rq{cpu, 0, nullptr, CommitKind::kSlotCache, policy.swap_pages_taken_ahead};
    // Mirrors get_swap_pages(): up to a batch from the first device that
    // yields (6.12: the batch capped by nr_swap_pages and taken off it
    // ahead).
    const int goal = TakePagesAhead(policy.slot_cache_batch, 0);
    std::vector<uint64_t> offs(static_cast<size_t>(goal));
    int got = 0;
    if (goal > 0) {
      WalkAvail(0, [&](SwapDevice& d) {
        got = AllocBatchOnDevice(d, rq, goal, offs.data());
        for (int i = 0; i < got; ++i) pc.slot_cache.push_back(SwapEntry{d.type, offs[i]});
        return got > 0;
      });
    }
    GiveBackPagesAhead(goal, got, 0);
    Bump(pc.stats.slot_cache_refills);
  }
  while (pc.slot_cache_cur < pc.slot_cache.size()) {
    const SwapEntry e = pc.slot_cache[pc.slot_cache_cur++];
    SwapDevice* d = Dev(e.type);
    if (d == nullptr || !d->TryGet()) continue;
    bool ok = false;
    {
      SwapCluster& c = d->ClusterOf(e.offset, cluster_shift);
      SpinGuard cg(c.lock);
      const uint64_t i = e.offset - ClusterStart(*d, c);
      const uint64_t v = c.table[i];
      if (slot::Kind(v) == SlotKind::kCached && slot::FolioOf(v) == nullptr) {
        SetSlot(c, i, slot::Cached(&f, 0));
        FolioAccess::SetSwap(f, e);
        ok = true;
      }
    }
    d->Put();
    if (ok) {
      Bump(pc.stats.slot_cache_hits);
      *out = e;
      return true;
    }
  }
  return false;
}

}  // namespace swaplab::alloc
