// Allocation: the per-CPU fast path, the slow path with device selection,
// the per-device search, the in-cluster scan and the commit (allocator
// spec §2).
#include <algorithm>
#include <functional>
#include <string>

#include "alloc/system_state.h"

namespace swaplab::alloc {
namespace {

enum class RangeCheck { kOk, kBusy, kNeedsReclaim };

}  // namespace

// Mirrors mm/swapfile.c: swap_alloc_fast(). Runs under the CPU-local lock.
// ScanCluster releases the cluster lock taken here (hand-off the analysis
// cannot follow).
[[gnu::flatten]] bool SwapSystem::State::AllocFast(PerCpu& pc, const AllocRequest& rq, SwapEntry* out)
    NO_THREAD_SAFETY_ANALYSIS {
  const int k = rq.order;
  const int type = pc.dev[k];
  uint64_t off = pc.off[k];
  if (type < 0 || off == 0) return false;
  // No device reference (the kernel takes one): swapoff clears every CPU's
  // hints under that CPU's lock, which this path holds, before it frees the
  // clusters, and a commit on a device being swapped off fails (!WRITEOK).
  SwapDevice* d = Dev(type);
  uint64_t found = 0;
  if (off < (d->nr_clusters << cluster_shift)) {  // may be the BAD tail: scanned, fails
    SwapCluster& c = d->ClusterOf(off, cluster_shift);
    c.lock.Lock();
    if (Usable(c, k)) {
      if (c.count == 0) off = ClusterStart(*d, c);
      bool abort = false;
      found = ScanCluster(*d, c, off, rq, &abort);
    } else {
      c.lock.Unlock();
    }
  }
  if (found != 0) *out = SwapEntry{type, found};
  return found != 0;
}

// Moves `type` behind the devices of its priority (kernel: plist_requeue).
static void RequeueLocked(std::vector<int>& avail, const std::array<std::unique_ptr<SwapDevice>,
                                                                   kMaxSwapfiles>& records,
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
    RequeueLocked(avail, records, type);
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

// Mirrors swap_alloc_slow().
bool SwapSystem::State::AllocSlow(const AllocRequest& rq, SwapEntry* out) {
  return WalkAvail(rq.order, [&](SwapDevice& d) {
    const uint64_t off = AllocateOnDevice(d, rq);
    if (off != 0) *out = SwapEntry{d.type, off};
    return off != 0;
  });
}

// seq_next is written under the global cluster lock, which the caller holds
// for non-SSD devices only.
void SwapSystem::State::SetHint(SwapDevice& d, const AllocRequest& rq, uint64_t next)
    NO_THREAD_SAFETY_ANALYSIS {
  const int k = rq.order;
  if (UsesSeq(d)) {
    d.seq_next[k] = next;
  } else if (policy.percpu_hint_per_device) {
    d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + k] = next;
  } else {
    PerCpu& pc = cpus[rq.cpu];
    pc.dev[k] = d.type;
    pc.off[k] = next;
  }
}

// Mirrors cluster_alloc_swap_entry(): the hint first, then the policy's
// ordered search steps (§2.4, §10.2).
// Locks are taken conditionally (the global cluster lock on non-SSD
// devices) and cluster locks are released by ScanCluster, which the
// analysis cannot follow.
uint64_t SwapSystem::State::AllocateOnDevice(SwapDevice& d, const AllocRequest& rq)
    NO_THREAD_SAFETY_ANALYSIS {
  const int k = rq.order;
  if (k > 0 && !d.blkdev) return 0;  // swap files never hold large folios (O3)
  CpuCounters& stats = cpus[rq.cpu].stats;
  const bool seq = UsesSeq(d);
  if (seq) d.global_cluster_lock.Lock();
  uint64_t found = 0;
  bool abort = false;
  uint64_t off = 0;
  if (seq) {
    off = d.seq_next[k];
  } else if (policy.percpu_hint_per_device) {
    off = d.pcp_next[static_cast<size_t>(rq.cpu) * kMaxOrders + k];
  }
  if (off != 0 && off < (d.nr_clusters << cluster_shift)) {
    SwapCluster& c = d.ClusterOf(off, cluster_shift);
    c.lock.Lock();
    if (Usable(c, k)) {
      if (c.count == 0) off = ClusterStart(d, c);
      found = ScanCluster(d, c, off, rq, &abort);
      if (found != 0) Bump(stats.served_by_hint);
    } else {
      c.lock.Unlock();
    }
  }

  // Scans `list` at `order`: one cluster, or until the list yields none.
  auto scan = [&](ListId list, int order, bool all, uint64_t* failed_count) -> uint64_t {
    uint64_t guard = d.nr_clusters + 1;  // each failed cluster leaves the list
    do {
      SwapCluster* c = Isolate(d, list, order);
      if (c == nullptr) return 0;
      const uint64_t f = ScanCluster(d, *c, ClusterStart(d, *c), rq, &abort);
      if (f != 0 || abort) return f;
      if (failed_count) ++*failed_count;
    } while (all && --guard > 0);
    return 0;
  };

  auto frag_len = [&](int order) {
    SpinGuard g(d.lock);
    return d.frag(order).len;
  };
  bool restart = true;
  while (found == 0 && !abort && restart) {
    restart = false;
    // §10.2 step 4: the frag clusters counted before the nonfull clusters
    // that just failed were moved there.
    uint64_t moved_to_frag = 0;
    for (SearchStep step : policy.search) {
      switch (step) {
        case SearchStep::kFreeIfDiscard:
          if (d.page_discard) found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kFree:
          found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kFreeIfNotDiscard:
          if (!d.page_discard) found = scan(ListId::kFree, 0, false, nullptr);
          break;
        case SearchStep::kNonfull:
          if (k < pmd_order) {
            const uint64_t before = frag_len(k);
            found = scan(ListId::kNonfull, k, true, nullptr);
            const uint64_t after = frag_len(k);
            moved_to_frag = after > before ? after - before : 0;
          }
          break;
        case SearchStep::kReclaimFull:
          if (VmSwapFull()) ReclaimFull(d, false);
          break;
        case SearchStep::kFragOne:
          if (k < pmd_order) found = scan(ListId::kFrag, k, false, nullptr);
          break;
        case SearchStep::kFragAll:
          if (k < pmd_order) {
            uint64_t n = frag_len(k);
            n = n > moved_to_frag ? n - moved_to_frag : 0;
            for (uint64_t i = 0; i < n && found == 0 && !abort; ++i)
              found = scan(ListId::kFrag, k, false, nullptr);
          }
          break;
        case SearchStep::kSyncDiscardRestart:
          if (d.page_discard && DoDiscard(d) > 0) restart = true;
          break;
        case SearchStep::kStealHigher:
          if (k == 0) {
            for (int o = 1; o <= pmd_order && found == 0 && !abort; ++o) {
              found = scan(ListId::kFrag, o, true, nullptr);
              if (found == 0 && !abort) found = scan(ListId::kNonfull, o, true, nullptr);
            }
          }
          break;
      }
      if (found != 0) {
        Bump(stats.served_by_step[static_cast<size_t>(step)]);
        break;
      }
      if (abort || restart) break;
    }
  }
  if (seq) d.global_cluster_lock.Unlock();
  return found;
}

// Mirrors cluster_scan_range(): EMPTY is fine; a cache-only slot only when
// swap is more than half full, and then it must be reclaimed first (§2.7).
// vm_swap_full() is read only when a cache-only slot is met: it has no side
// effects, and an all-EMPTY range (the fast path's case) needs no answer.
static inline RangeCheck CheckRange(const SwapSystem::State& s, const SwapCluster& c,
                                    uint32_t first, uint32_t n) {
  const uint64_t e0 = c.table[first];
  if (n == 1 && e0 == slot::kEmpty) return RangeCheck::kOk;  // order 0, free slot
  bool reclaim = false;
  for (uint32_t i = first; i < first + n; ++i) {
    const uint64_t e = c.table[i];
    if (e == slot::kEmpty) continue;
    if (slot::Kind(e) == SlotKind::kCached && slot::Count(e) == 0 && s.VmSwapFull()) {
      reclaim = true;
      continue;
    }
    return RangeCheck::kBusy;
  }
  return reclaim ? RangeCheck::kNeedsReclaim : RangeCheck::kOk;
}

// Mirrors alloc_swap_scan_cluster(): forward only, aligned, at most one
// allocation; relocates the cluster and rewrites the hint (§2.6).
// Entered with c locked, returns with it unlocked; drops and retakes it to
// reclaim (not expressible to the analysis).
// AllocFast is flattened, so the fast path runs an inlined copy.
uint64_t SwapSystem::State::ScanCluster(SwapDevice& d, SwapCluster& c, uint64_t off,
                                        const AllocRequest& rq, bool* abort)
    NO_THREAD_SAFETY_ANALYSIS {
  const int k = rq.order;
  const uint32_t n = 1u << k;
  const uint64_t start = ClusterStart(d, c);
  const uint64_t last = start + cluster_size - n;
  uint64_t found = 0, next = 0, added = 0;
  if (c.count + n <= cluster_size) {
    uint64_t o = off;
    while (o <= last) {
      const RangeCheck r = CheckRange(*this, c, static_cast<uint32_t>(o - start), n);
      if (r == RangeCheck::kBusy) {
        o += n;
        continue;
      }
      if (r == RangeCheck::kNeedsReclaim) {
        // Mirrors cluster_reclaim_range(): drops the cluster lock.
        c.lock.Unlock();
        for (uint64_t s = o; s < o + n; ++s) {
          c.lock.Lock();
          const uint64_t e = c.table ? c.table[s - start] : slot::kEmpty;
          c.lock.Unlock();
          if (slot::Kind(e) == SlotKind::kBad || slot::Count(e) != 0) break;
          if (slot::Kind(e) == SlotKind::kCached && TryReclaim(d, s, kReclaimAnyway) < 0) break;
        }
        c.lock.Lock();
        if (!Usable(c, k)) goto finish;
        if (c.count == 0) {
          o = start;
        } else {
          bool all_empty = true;
          for (uint64_t s = o; s < o + n; ++s) all_empty &= c.table[s - start] == slot::kEmpty;
          if (!all_empty) {
            o += n;
            continue;
          }
        }
      }
      if (!Commit(d, c, start, o, rq)) {
        *abort = true;  // not WRITEOK: fail the whole device (§11 U7)
        goto finish;
      }
      found = o;
      added = n;
      if (c.count < cluster_size && o + n <= last) next = o + n;
      break;
    }
  }
finish:
  Relocate(d, c, added);  // and inuse += added (swap_range_alloc)
  c.lock.Unlock();
  SetHint(d, rq, next);
  return found;
}

// C5 seen at commit time (kept out of the inlined fast path).
[[gnu::cold, gnu::noinline]] static void RecordOrderMismatch(SwapSystem::State& s, int order,
                                                             uint64_t off, int type,
                                                             int cluster_order) {
  s.RecordViolation("C5: order-" + std::to_string(order) + " allocation at offset " +
                    std::to_string(off) + " of device " + std::to_string(type) +
                    " in a cluster of order " + std::to_string(cluster_order));
}

// Mirrors __swap_cluster_alloc_entries() (§2.8). The usage change of
// swap_range_alloc() follows in Relocate, in the same cluster-lock section.
bool SwapSystem::State::Commit(SwapDevice& d, SwapCluster& c, uint64_t start, uint64_t off,
                               const AllocRequest& rq) {
  if (!d.writeok.load(std::memory_order_acquire)) return false;
  const uint32_t n = 1u << rq.order;
  uint64_t e;
  switch (rq.kind) {
    case CommitKind::kFolio: e = slot::Cached(rq.folio, 0); break;
    case CommitKind::kSlotCache: e = slot::Cached(nullptr, 0); break;
    case CommitKind::kHibernation:
    default: e = policy.hibernation_hib_entry ? slot::Hib() : slot::Shadow(1); break;
  }
  const uint64_t base = off - start;
  for (uint32_t i = 0; i < n; ++i) c.table[base + i] = e;
  if (c.count == 0) {
    c.order = static_cast<uint8_t>(rq.order);
  } else if (rq.order > 0 && c.order != rq.order) {
    RecordOrderMismatch(*this, rq.order, off, d.type, c.order);
  }
  c.count += n;
  if (rq.folio != nullptr) FolioAccess::SetSwap(*rq.folio, SwapEntry{d.type, off});
  return true;
}

// Mirrors del_from_avail_list(): sets the off-list bit with a recheck.
// inuse has no other writer while the device lock is held.
void SwapSystem::State::DelFromAvailLocked(SwapDevice& d, bool swapoff) {
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
void SwapSystem::State::AddToAvailLocked(SwapDevice& d) {
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

// Mirrors swap_sync_discard(): the first active discard device with
// pending discards runs them now (§2.9).
bool SwapSystem::State::SyncDiscard() {
  std::vector<int> order;
  {
    std::lock_guard g(swap_lock);
    order = active;
  }
  for (int type : order) {
    SwapDevice* d = Dev(type);
    if (!d->TryGet()) continue;
    const bool discarded = d->page_discard && DoDiscard(*d) > 0;
    d->Put();
    if (discarded) return true;
  }
  return false;
}

// Why folio_alloc_swap refuses its arguments (kept out of the fast path).
[[gnu::cold, gnu::noinline]] static Status AllocSwapArgError(CpuId cpu, int nr_cpus,
                                                             const Folio& folio, int pmd_order) {
  const int k = folio.order();
  if (cpu < 0 || cpu >= nr_cpus)
    return Status(-EINVAL, "folio_alloc_swap: cpu " + std::to_string(cpu) + " is not in [0, " +
                               std::to_string(nr_cpus) + ")");
  if (k < 0 || k > pmd_order)
    return Status(-EINVAL, "folio_alloc_swap: order " + std::to_string(k) +
                               " is larger than a cluster (order " + std::to_string(pmd_order) +
                               ")");
  if (!folio.locked()) return Status(-EINVAL, "folio_alloc_swap: the folio is not locked");
  return Status(-EINVAL, "folio_alloc_swap: the folio is already in the swap cache at offset " +
                             std::to_string(folio.swap().offset));
}

[[gnu::cold, gnu::noinline]] static Status AllocSwapNoMemory(int k) {
  return Status(-ENOMEM, "folio_alloc_swap: no free swap slots for an order-" +
                             std::to_string(k) + " folio");
}

Status SwapSystem::FolioAllocSwap(CpuId cpu, Folio& folio) {
  State& s = *s_;
  const int k = folio.order();
  if (cpu < 0 || cpu >= s.opts.nr_cpus || k < 0 || k > s.pmd_order || !folio.locked() ||
      folio.in_swap_cache()) [[unlikely]]
    return AllocSwapArgError(cpu, s.opts.nr_cpus, folio, s.pmd_order);
  PerCpu& pc = s.cpus[cpu];
  const AllocRequest rq{cpu, k, &folio, CommitKind::kFolio};
  SwapEntry out;
  bool ok = false;
  for (;;) {
    if (s.policy.slot_cache && k == 0) ok = s.SlotCacheAlloc(pc, cpu, folio, &out);
    if (!ok) {
      pc.lock.Lock();
      if (!s.policy.percpu_hint_per_device) {
        ok = s.AllocFast(pc, rq, &out);
        Bump(ok ? pc.stats.fast_path_hits : pc.stats.fast_path_misses);
      }
      if (!ok) ok = s.AllocSlow(rq, &out);
      pc.lock.Unlock();
    }
    if (ok || k != 0 || !s.policy.sync_discard_retry || !s.SyncDiscard()) break;
    s.sync_discard_retries.fetch_add(1, std::memory_order_relaxed);
  }
  if (!ok) {  // counted once, for the call that returns -ENOMEM
    SpinGuard g(pc.lock);
    Bump(pc.stats.alloc_failures);
  }
  s.MaybeRunDeferred();
  if (!ok) return AllocSwapNoMemory(k);
  return Status::Ok();
}

Result<SwapOutResult> SwapSystem::SwapOutFolio(CpuId cpu, Folio& folio,
                                               std::span<Folio* const> split_pages) {
  State& s = *s_;
  const int k = folio.order();
  if (k > 0 && split_pages.size() != static_cast<size_t>(1) << k && k <= s.pmd_order)
    return Status(-EINVAL, "swap out: an order-" + std::to_string(k) + " folio needs " +
                               std::to_string(1 << k) + " split pages, got " +
                               std::to_string(split_pages.size()));
  // Validate and lock the split pages in one pass: a page listed twice is
  // met already locked by this pass, so no sorted copy is needed. On an
  // error the pages this pass locked are unlocked again: bad input changes
  // nothing. split_folio_to_list() hands the new folios back locked and
  // reclaim keeps them locked until each is written, so no placement of
  // this call can reclaim a page placed earlier in it (TryReclaim only
  // trylocks); here they are locked from the start, which changes nothing
  // while the folio is placed whole (split pages are not in the swap cache,
  // so no reclaim looks at them).
  struct SplitLocks {
    std::span<Folio* const> pages;
    size_t n = 0;
    ~SplitLocks() {
      for (size_t i = 0; i < n; ++i) pages[i]->Unlock();
    }
  } locks{split_pages};
  for (Folio* p : split_pages) {
    if (p == nullptr || p->order() != 0 || p->in_swap_cache() || !p->TryLock()) {
      if (p != nullptr && std::find(split_pages.begin(), split_pages.begin() +
                                        static_cast<std::ptrdiff_t>(locks.n), p) !=
                              split_pages.begin() + static_cast<std::ptrdiff_t>(locks.n))
        return Status(-EINVAL, "swap out: the same folio is listed twice among the split pages");
      return Status(-EINVAL, "swap out: split pages must be unlocked order-0 folios out of the "
                             "swap cache");
    }
    ++locks.n;
  }
  Status st = FolioAllocSwap(cpu, folio);
  if (st.ok()) {
    s.swpout[k].fetch_add(1, std::memory_order_relaxed);
    s.pswpout.fetch_add(folio.nr_pages(), std::memory_order_relaxed);
    if (k == s.pmd_order && k > 0) s.thp_swpout.fetch_add(1, std::memory_order_relaxed);
    return SwapOutResult{false, folio.nr_pages()};
  }
  if (st.code() != -ENOMEM || k == 0) {
    if (st.code() == -ENOMEM) return SwapOutResult{false, 0};
    return st;
  }
  // Mirrors shrink_folio_list(): split, count the fallback, retry at order 0.
  if (k == s.pmd_order) s.thp_swpout_fallback.fetch_add(1, std::memory_order_relaxed);
  s.swpout_fallback[k].fetch_add(1, std::memory_order_relaxed);
  SwapOutResult res{true, 0};
  // Page 0 first, then the tails in the order reclaim meets them (policy
  // split_tails_last_first, §2.10).
  const size_t n = split_pages.size();
  auto page_at = [&](size_t i) -> Folio& {
    if (i == 0 || !s.policy.split_tails_last_first) return *split_pages[i];
    return *split_pages[n - i];
  };
  for (size_t i = 0; i < n; ++i) {
    Folio* p = &page_at(i);
    if (FolioAllocSwap(cpu, *p).ok()) {
      s.swpout[0].fetch_add(1, std::memory_order_relaxed);
      s.pswpout.fetch_add(1, std::memory_order_relaxed);
      ++res.pages_placed;
    }
  }
  return res;  // `locks` unlocks the split pages
}

}  // namespace swaplab::alloc
