// SPDX-License-Identifier: MIT
// References, freeing and the swap cache (allocator spec §3, §4.5).
#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "alloc/cluster_lists.h"
#include "alloc/device_ref.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

std::string Where(const SwapDevice& d, uint64_t off) {
  return "device " + std::to_string(d.type) + " offset " + std::to_string(off);
}

// Why a folio cannot be used by `op`: not locked, or not in the swap cache.
[[gnu::cold, gnu::noinline]] Status NotInCacheOrUnlocked(const Folio& f, const char* op) {
  if (!f.locked()) return Status(-EINVAL, std::string(op) + ": the folio is not locked");
  return Status(-EINVAL, std::string(op) + ": the folio is not in the swap cache");
}

bool LockedAndInCache(const Folio& f) { return f.locked() && f.in_swap_cache(); }

}  // namespace

// Real count of slot i, extend table included (§1.4).
uint32_t SwapSystem::State::SlotCount(const SwapCluster& c, uint32_t i) const {
  if (!c.table) return 0;  // a free cluster: every slot EMPTY
  const uint32_t inline_count = slot::Count(c.table[i]);
  if (inline_count == static_cast<uint32_t>(count_max) && c.extend) return c.extend[i];
  return inline_count;
}

// Mirrors __swap_cluster_put_entry(): count − 1, never frees (§3.3).
void SwapSystem::State::PutOneClusterLocked(SwapCluster& c, uint32_t i) {
  c.lock.AssertHeld();
  const uint64_t e = c.table[i];
  const uint32_t cnt = slot::Count(e);
  if (cnt == static_cast<uint32_t>(count_max)) {
    const uint32_t v = c.extend[i] - 1;
    if (v == static_cast<uint32_t>(count_max) - 1) {
      c.extend[i] = 0;
      SetSlot(c, i, e, slot::WithCount(e, v));
      if (--c.extend_users == 0) c.extend.reset();
    } else {
      c.extend[i] = v;
    }
  } else {
    SetSlot(c, i, e, slot::WithCount(e, cnt - 1));
  }
}

// Mirrors __swap_cluster_free_entries() + swap_range_free() (§3.5).
void SwapSystem::State::FreeSlotsClusterLocked(SwapDevice& d, SwapCluster& c, uint64_t first,
                                               uint64_t n) {
  c.lock.AssertHeld();
  const uint64_t base = first - ClusterStart(d, c);
  // Never a Reclaimable slot (SwapCluster::reclaimable stays): callers free
  // SHADOW slots, slots of no folio, and slot-cache slots (no folio).
  for (uint64_t i = 0; i < n; ++i) assert(!slot::Reclaimable(c.table[base + i]));
  if (n == 1) {
    c.table[base] = slot::kEmpty;  // order 0: one store, not a memset call
  } else {
    for (uint64_t i = 0; i < n; ++i) c.table[base + i] = slot::kEmpty;
  }
  c.count -= static_cast<uint32_t>(n);
  if (UsesMapScan(d)) {
    // 6.12 swap_range_free(): the free-slot bounds of the swap_map scan.
    SpinGuard g(d.lock);
    d.lowest_bit = std::min(d.lowest_bit, first);
    d.highest_bit = std::max(d.highest_bit, first + n - 1);
  }
  // The list move and swap_usage_sub share one device-lock section.
  if (c.count == 0) {
    FreeCluster(d, c, n);
  } else {
    PartialFreeCluster(d, c, n);
  }
}

// Mirrors __swap_cache_del_folio(): entries become SHADOW with their counts;
// count-0 slots are freed, all at once if every count was 0 (§3.4).
void SwapSystem::State::DelFolioClusterLocked(SwapDevice& d, SwapCluster& c, Folio& f,
                                              std::vector<SwapEntry>* held) {
  c.lock.AssertHeld();
  const uint64_t first = f.swap().offset;
  const uint32_t base = static_cast<uint32_t>(first - ClusterStart(d, c));
  const uint32_t n = static_cast<uint32_t>(f.nr_pages());
  bool all_zero = true;
  int reclaimable = 0;  // one update of SwapCluster::reclaimable for the folio
  for (uint32_t i = base; i < base + n; ++i) {
    const uint64_t e = c.table[i];
    const uint32_t cnt = slot::Count(e);
    reclaimable += slot::Reclaimable(e);
    c.table[i] = slot::Make(SlotKind::kShadow, cnt);
    all_zero &= cnt == 0;
  }
  if (reclaimable != 0) AddReclaimable(c, -reclaimable);
  FolioAccess::SetSwap(f, SwapEntry{});
  if (held != nullptr && policy.slot_cache_return && !(all_zero && n > 1)) {
    // 6.12 put_swap_folio(): an order-0 folio's slot, or the count-0 slots
    // of a large folio not free as a whole, go through free_swap_slot():
    // cache-held (SWAP_HAS_CACHE alone) until the return buffer frees them.
    for (uint32_t i = base; i < base + n; ++i) {
      if (slot::Count(c.table[i]) != 0) continue;
      SetSlot(c, i, slot::Cached(nullptr, 0));
      held->push_back(SwapEntry{d.type, ClusterStart(d, c) + i});
    }
    return;
  }
  if (all_zero) {
    FreeSlotsClusterLocked(d, c, first, n);
    return;
  }
  for (uint32_t i = base; i < base + n; ++i) {
    if (slot::Count(c.table[i]) == 0) FreeSlotsClusterLocked(d, c, ClusterStart(d, c) + i, 1);
  }
}

namespace {

// Validates and applies +1 on slots [first, first + n) of one locked
// cluster, all or nothing (§3.2). `op` names the caller for messages.
Status DupRangeClusterLocked(SwapSystem::State& s, SwapDevice& d, SwapCluster& c, uint64_t first,
                             uint32_t n, const char* op) REQUIRES(c.lock) {
  c.lock.AssertHeld();
  const uint32_t base = static_cast<uint32_t>(first - s.ClusterStart(d, c));
  const uint32_t cm = static_cast<uint32_t>(s.count_max);
  bool needs_extend = false;
  for (uint32_t i = base; i < base + n; ++i) {
    const uint64_t e = c.table ? c.table[i] : slot::kEmpty;
    const SlotKind kind = slot::Kind(e);
    const uint64_t off = s.ClusterStart(d, c) + i;
    if (kind == SlotKind::kBad || kind == SlotKind::kHib)
      return Status(-EINVAL, std::string(op) + ": " + Where(d, off) + " is a " +
                                 std::string(Name(kind)) + " slot");
    const uint32_t cnt = s.SlotCount(c, i);
    if (cnt == 0 && kind != SlotKind::kCached)
      return Status(-ENOENT, std::string(op) + ": " + Where(d, off) + " is not in use");
    if (cnt >= UINT32_MAX - 1)
      return Status(-EINVAL, std::string(op) + ": " + Where(d, off) + " count would overflow");
    if (slot::Count(e) == cm - 1) needs_extend = true;
  }
  if (needs_extend && !c.extend) {
    if (s.opts.fail_extend_table_alloc)
      return Status(-ENOMEM, std::string(op) + ": no memory for the extend table of cluster " +
                                 std::to_string(s.ClusterIndex(d, c)) + " on device " +
                                 std::to_string(d.type));
    c.extend = std::make_unique<uint32_t[]>(s.cluster_size);
  }
  for (uint32_t i = base; i < base + n; ++i) {
    const uint64_t e = c.table[i];
    const uint32_t cnt = slot::Count(e);
    if (cnt < cm - 1) {
      SwapSystem::State::SetSlot(c, i, e, slot::WithCount(e, cnt + 1));
    } else if (cnt == cm - 1) {
      c.extend[i] = cm;
      SwapSystem::State::SetSlot(c, i, e, slot::WithCount(e, cm));
      ++c.extend_users;
    } else {
      ++c.extend[i];
    }
  }
  return Status::Ok();
}

// The slots of a folio (page < 0: all) or an error.
Status FolioRange(const SwapSystem::State& s, const Folio& f, int page, uint64_t* first,
                  uint32_t* n, const char* op) {
  (void)s;
  if (page >= f.nr_pages())
    return Status(-EINVAL, std::string(op) + ": page " + std::to_string(page) +
                               " is outside an order-" + std::to_string(f.order()) + " folio");
  *first = f.swap().offset + (page < 0 ? 0 : static_cast<uint64_t>(page));
  *n = page < 0 ? static_cast<uint32_t>(f.nr_pages()) : 1;
  return Status::Ok();
}

// Slots [first, first + n) of a locked, swap-cached folio: all in cluster c
// of device d.
struct FolioSlots {
  SwapDevice* d = nullptr;
  SwapCluster* c = nullptr;
  uint64_t first = 0;
  uint32_t n = 0;
};

// The checks and the lookup folio_dup_swap() and folio_put_swap() share:
// the folio locked and in the swap cache, `page` inside it. The caller
// takes the cluster lock (the analysis cannot follow a lock handed back
// through the result).
Status LocateFolioSlots(SwapSystem::State& s, const Folio& folio, int page, const char* op,
                        FolioSlots* out) {
  if (!LockedAndInCache(folio)) return NotInCacheOrUnlocked(folio, op);
  if (Status st = FolioRange(s, folio, page, &out->first, &out->n, op); !st.ok()) return st;
  out->d = CachedFolioDevice(s, folio);
  out->c = &out->d->ClusterOf(out->first, s.cluster_shift);
  return Status::Ok();
}

}  // namespace

// Mirrors folio_dup_swap(): unmapping adds one reference per mapping.
Status SwapSystem::FolioDupSwap(Folio& folio, int page) {
  State& s = *s_;
  FolioSlots fs;
  if (Status st = LocateFolioSlots(s, folio, page, "folio_dup_swap", &fs); !st.ok()) return st;
  SpinGuard g(fs.c->lock);
  return DupRangeClusterLocked(s, *fs.d, *fs.c, fs.first, fs.n, "folio_dup_swap");
}

// Mirrors folio_put_swap(): −1 per slot, the folio stays cached.
Status SwapSystem::FolioPutSwap(Folio& folio, int page) {
  State& s = *s_;
  FolioSlots fs;
  if (Status st = LocateFolioSlots(s, folio, page, "folio_put_swap", &fs); !st.ok()) return st;
  SwapDevice& d = *fs.d;
  SwapCluster& c = *fs.c;
  SpinGuard g(c.lock);
  const uint32_t base = static_cast<uint32_t>(fs.first - s.ClusterStart(d, c));
  for (uint32_t i = base; i < base + fs.n; ++i) {
    if (s.SlotCount(c, i) == 0)
      return Status(-EINVAL, "folio_put_swap: " + Where(d, s.ClusterStart(d, c) + i) +
                                 " has no reference to put");
  }
  for (uint32_t i = base; i < base + fs.n; ++i) s.PutOneClusterLocked(c, i);
  return Status::Ok();
}

// Mirrors swap_dup_entry_direct() (fork).
Status SwapSystem::SwapDupEntryDirect(SwapEntry entry) {
  State& s = *s_;
  auto dev = GetDeviceFor(s, entry, 1, "swap_dup_entry_direct");
  if (!dev.ok()) return dev.status();
  DeviceRef d(*dev);
  SwapCluster& c = d->ClusterOf(entry.offset, s.cluster_shift);
  SpinGuard g(c.lock);
  return DupRangeClusterLocked(s, *d, c, entry.offset, 1, "swap_dup_entry_direct");
}

namespace {

// Mirrors 6.12 free_swap_and_cache_nr() (policy slot_cache_return), slots
// checked by the caller: __swap_entries_free() frees a range of more than
// one slot inside one cluster directly only if every slot has count 1 and
// none is in the swap cache; otherwise each slot is put, and one left with
// nothing (no count, no cache) goes through free_swap_slot() (cache-held
// until the return buffer frees it). Then slots left with the cache alone
// are offered to __try_to_reclaim_swap(TTRS_UNMAPPED | TTRS_FULL).
void PutEntriesReturning(SwapSystem::State& s, SwapDevice& d, SwapEntry entry, uint64_t nr) {
  const uint64_t end = entry.offset + nr;
  SwapCluster& first = d.ClusterOf(entry.offset, s.cluster_shift);
  const uint64_t first_start = s.ClusterStart(d, first);
  bool any_only_cache = false;
  bool uniform = false;
  if (nr > 1 && end <= first_start + s.cluster_size) {
    SpinGuard g(first.lock);
    const uint64_t e0 = first.table[entry.offset - first_start];
    uniform = s.SlotCount(first, static_cast<uint32_t>(entry.offset - first_start)) == 1;
    for (uint64_t off = entry.offset; uniform && off < end; ++off) {
      const uint32_t i = static_cast<uint32_t>(off - first_start);
      uniform = slot::Kind(first.table[i]) == slot::Kind(e0) && s.SlotCount(first, i) == 1;
    }
    if (uniform && slot::Kind(e0) == SlotKind::kShadow) {
      s.FreeSlotsClusterLocked(d, first, entry.offset, nr);  // swap_entry_range_free
    } else if (uniform) {
      for (uint64_t off = entry.offset; off < end; ++off)
        s.PutOneClusterLocked(first, static_cast<uint32_t>(off - first_start));
      any_only_cache = true;
    }
  }
  std::vector<SwapEntry> held;
  for (uint64_t off = entry.offset; !uniform && off < end;) {
    SwapCluster& c = d.ClusterOf(off, s.cluster_shift);
    const uint64_t cstart = s.ClusterStart(d, c);
    SpinGuard g(c.lock);
    for (; off < end && off < cstart + s.cluster_size; ++off) {
      const uint32_t i = static_cast<uint32_t>(off - cstart);
      const bool shadow = slot::Kind(c.table[i]) == SlotKind::kShadow;
      if (s.SlotCount(c, i) == 1 && shadow) {
        s.SetSlot(c, i, slot::Cached(nullptr, 0));  // __swap_entry_free: usage 0
        held.push_back(SwapEntry{d.type, off});
        continue;
      }
      if (s.SlotCount(c, i) == 1) any_only_cache = true;
      s.PutOneClusterLocked(c, i);
    }
  }
  if (!held.empty()) s.SlotReturn(held);
  if (!any_only_cache) return;
  for (uint64_t off = entry.offset; off < end;) {
    SwapCluster& c = d.ClusterOf(off, s.cluster_shift);
    bool only_cache;
    {
      SpinGuard g(c.lock);
      const uint64_t e = c.table ? c.table[off - s.ClusterStart(d, c)] : slot::kEmpty;
      only_cache = slot::Kind(e) == SlotKind::kCached && slot::Count(e) == 0;
    }
    uint64_t step = 1;
    if (only_cache) {
      const int r = s.TryReclaim(d, off, kReclaimUnmapped | kReclaimFull);
      const uint64_t n = r == 0 ? 1 : static_cast<uint64_t>(r < 0 ? -r : r);
      step = (off / n + 1) * n - off;  // to the folio's next boundary
    }
    off += step;
  }
}

}  // namespace

// Mirrors swap_put_entries_direct() / swap_put_entries_cluster() (§3.3).
Status SwapSystem::SwapPutEntriesDirect(SwapEntry entry, uint64_t nr) {
  State& s = *s_;
  auto dev = GetDeviceFor(s, entry, nr, "swap_put_entries_direct");
  if (!dev.ok()) return dev.status();
  DeviceRef d(*dev);
  const uint64_t end = entry.offset + nr;
  // Validate every slot first: bad input changes nothing.
  for (uint64_t off = entry.offset; off < end;) {
    SwapCluster& c = d->ClusterOf(off, s.cluster_shift);
    const uint64_t cend = std::min(end, s.ClusterStart(*d, c) + s.cluster_size);
    SpinGuard g(c.lock);
    for (; off < cend; ++off) {
      const uint32_t i = static_cast<uint32_t>(off - s.ClusterStart(*d, c));
      const uint64_t e = c.table ? c.table[i] : slot::kEmpty;
      const SlotKind kind = slot::Kind(e);
      if ((kind != SlotKind::kShadow && kind != SlotKind::kCached) || s.SlotCount(c, i) == 0)
        return Status(-EINVAL, "swap_put_entries_direct: " + Where(*d, off) +
                                   " holds no swap reference (" + std::string(Name(kind)) +
                                   ", count " + std::to_string(c.table ? s.SlotCount(c, i) : 0) +
                                   ")");
    }
  }
  if (s.policy.slot_cache_return) {
    PutEntriesReturning(s, *d, entry, nr);
    s.MaybeRunDeferred();
    return Status::Ok();
  }
  for (uint64_t off = entry.offset; off < end;) {
    SwapCluster& c = d->ClusterOf(off, s.cluster_shift);
    const uint64_t cstart = s.ClusterStart(*d, c);
    const uint64_t piece = off;
    const uint64_t cend = std::min(end, cstart + s.cluster_size);
    bool reclaimable = false;
    {
      SpinGuard g(c.lock);
      uint64_t batch = 0, batch_n = 0;
      for (; off < cend; ++off) {
        const uint32_t i = static_cast<uint32_t>(off - cstart);
        const uint64_t e = c.table[i];
        const uint32_t cnt = s.SlotCount(c, i);
        if (cnt == 1 && slot::Kind(e) == SlotKind::kShadow) {
          if (batch_n == 0) batch = off;
          ++batch_n;
          continue;
        }
        if (cnt == 1) reclaimable = true;  // cached: its folio may go now
        s.PutOneClusterLocked(c, i);
        if (batch_n != 0) s.FreeSlotsClusterLocked(*d, c, batch, batch_n);
        batch_n = 0;
      }
      if (batch_n != 0) s.FreeSlotsClusterLocked(*d, c, batch, batch_n);
    }
    if (reclaimable) {
      for (uint64_t o = piece; o < cend;) {
        const int r = s.TryReclaim(*d, o, kReclaimUnmapped | kReclaimFull);
        if (r == 0) {
          ++o;
        } else {
          const uint64_t n = static_cast<uint64_t>(r < 0 ? -r : r);
          o = (o / n + 1) * n;
        }
      }
    }
  }
  s.MaybeRunDeferred();
  return Status::Ok();
}

// Reclaim removes a folio from the swap cache (kernel: __remove_mapping →
// __swap_cache_del_folio). Refused while storage is suspended (O4).
[[gnu::flatten]] Status SwapSystem::SwapCacheDelFolio(Folio& folio) {
  State& s = *s_;
  if (!LockedAndInCache(folio)) return NotInCacheOrUnlocked(folio, "swap_cache_del_folio");
  if (s.suspended.load(std::memory_order_acquire))
    return Status(-EBUSY,
                  "swap_cache_del_folio: storage is suspended; no folio leaves the swap "
                  "cache (allocator spec §4.6)");
  std::vector<SwapEntry> held;  // 6.12: put_swap_folio() -> free_swap_slot()
  {
    SwapDevice* d = CachedFolioDevice(s, folio);
    SwapCluster& c = d->ClusterOf(folio.swap().offset, s.cluster_shift);
    SpinGuard g(c.lock);
    s.DelFolioClusterLocked(*d, c, folio, s.policy.slot_cache_return ? &held : nullptr);
  }
  if (!held.empty()) s.SlotReturn(held);
  s.MaybeRunDeferred();
  return Status::Ok();
}

// Mirrors folio_free_swap(): freeable and no slot with a count (§3.4).
bool SwapSystem::FolioFreeSwap(Folio& folio) {
  State& s = *s_;
  if (!folio.locked() || !folio.in_swap_cache() || folio.writeback ||
      s.suspended.load(std::memory_order_acquire))
    return false;
  std::vector<SwapEntry> held;  // 6.12: delete_from_swap_cache() -> free_swap_slot()
  {
    SwapDevice* d = CachedFolioDevice(s, folio);
    SwapCluster& c = d->ClusterOf(folio.swap().offset, s.cluster_shift);
    SpinGuard g(c.lock);
    const uint32_t base = static_cast<uint32_t>(folio.swap().offset - s.ClusterStart(*d, c));
    for (uint32_t i = base; i < base + static_cast<uint32_t>(folio.nr_pages()); ++i) {
      if (s.SlotCount(c, i) != 0) return false;
    }
    s.DelFolioClusterLocked(*d, c, folio, s.policy.slot_cache_return ? &held : nullptr);
    folio.dirty = true;
  }
  if (!held.empty()) s.SlotReturn(held);
  s.MaybeRunDeferred();
  return true;
}

// Swap-in: a folio enters the swap cache over swapped-out slots.
Status SwapSystem::SwapCacheAddFolio(Folio& folio, SwapEntry entry) {
  State& s = *s_;
  if (!folio.locked()) return Status(-EINVAL, "swap_cache_add_folio: the folio is not locked");
  if (folio.in_swap_cache())
    return Status(-EINVAL, "swap_cache_add_folio: the folio is already in the swap cache");
  const int k = folio.order();
  if (k < 0 || k > s.pmd_order)
    return Status(-EINVAL,
                  "swap_cache_add_folio: order " + std::to_string(k) + " is larger than a cluster");
  if (entry.offset % (uint64_t{1} << k) != 0)
    return Status(-EINVAL, "swap_cache_add_folio: offset " + std::to_string(entry.offset) +
                               " is not aligned to an order-" + std::to_string(k) + " folio");
  auto dev = GetDeviceFor(s, entry, folio.nr_pages(), "swap_cache_add_folio");
  if (!dev.ok()) return dev.status();
  DeviceRef d(*dev);
  SwapCluster& c = d->ClusterOf(entry.offset, s.cluster_shift);
  SpinGuard g(c.lock);
  const uint32_t base = static_cast<uint32_t>(entry.offset - s.ClusterStart(*d, c));
  for (uint32_t i = base; i < base + static_cast<uint32_t>(folio.nr_pages()); ++i) {
    const uint64_t e = c.table ? c.table[i] : slot::kEmpty;
    if (slot::Kind(e) != SlotKind::kShadow)
      return Status(slot::Kind(e) == SlotKind::kCached ? -EEXIST : -ENOENT,
                    "swap_cache_add_folio: " + Where(*d, s.ClusterStart(*d, c) + i) + " is " +
                        std::string(Name(slot::Kind(e))) + ", not swapped out");
  }
  for (uint32_t i = base; i < base + static_cast<uint32_t>(folio.nr_pages()); ++i)
    s.SetSlot(c, i, slot::Cached(&folio, slot::Count(c.table[i])));
  FolioAccess::SetSwap(folio, entry);
  return Status::Ok();
}

}  // namespace swaplab::alloc
