// SPDX-License-Identifier: MIT
// swapon and swapoff (allocator spec §5).
#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "alloc/cluster_lists.h"
#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

constexpr uint64_t kMaxSwapBadpages = 637;  // (PAGE_SIZE − 10 − 1536) / 4

struct BlockRange {
  uint64_t first, n;
};

// The disk blocks an area covers: its extents, or max blocks from slot 0.
std::vector<BlockRange> BlockRanges(const std::vector<SwapExtent>& extents, uint64_t first_block,
                                    uint64_t max) {
  std::vector<BlockRange> r;
  if (extents.empty()) r.push_back(BlockRange{first_block, max});
  for (const SwapExtent& e : extents) r.push_back(BlockRange{e.start_block, e.nr_pages});
  return r;
}

Status Invalid(const std::string& what) { return Status(-EINVAL, "swapon: " + what); }

// The column count of 6.12's setup_clusters(): SWAP_CLUSTER_COLS, the larger
// of the cluster infos in one 64-byte cache line (24 bytes each) and the
// clusters in one swap address space (SWAP_ADDRESS_SPACE_PAGES, 1 << 14
// slots), both rounded up. Its first column is cluster_next / cluster
// size, and cluster_next is 1 at swapon (read_swap_header): column 0.
uint64_t SwapClusterCols(uint64_t cluster_size) {
  constexpr uint64_t kCacheLine = 64, kClusterInfoBytes = 24, kAddressSpacePages = 1 << 14;
  const uint64_t info_cols = (kCacheLine + kClusterInfoBytes - 1) / kClusterInfoBytes;
  const uint64_t space_cols = (kAddressSpacePages + cluster_size - 1) / cluster_size;
  return std::max(info_cols, space_cols);
}

// Active-list insertion: after every device of the same or higher priority.
void InsertByPrio(std::vector<int>& list, const SwapSystem::State& s, int type) {
  const int prio = s.records[type]->prio;
  size_t pos = 0;
  while (pos < list.size() && s.records[list[pos]]->prio >= prio) ++pos;
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(pos), type);
}

// An area's geometry from its header (§5.1 steps 3-5), validated before
// anything changes.
struct AreaGeometry {
  uint64_t max = 0;        // slots the device uses
  uint64_t pages = 0;      // usable: max − 1 − the listed bad pages below max
  std::set<uint64_t> bad;  // the header's bad pages, each once
};

// §5.1 steps 3 and 8: the header's size, the priority, the bad-page list's
// length and who may have one.
Status CheckHeader(const SwaponOptions& o) {
  if (o.pages < 2)
    return Invalid("area '" + o.name + "' has " + std::to_string(o.pages) +
                   " pages; it needs the header page and at least one usable page");
  if (o.prio && (*o.prio < 0 || *o.prio > kMaxSwapPrio))
    return Invalid("priority " + std::to_string(*o.prio) + " is outside 0.." +
                   std::to_string(kMaxSwapPrio));
  if (o.bad_pages.size() > kMaxSwapBadpages)
    return Invalid(std::to_string(o.bad_pages.size()) + " bad pages listed, at most " +
                   std::to_string(kMaxSwapBadpages));
  if (!o.blkdev && !o.bad_pages.empty())
    return Invalid("a swap file may not list bad pages (area '" + o.name + "')");
  return Status::Ok();
}

// §5.1 steps 4-5: max, the bad pages (each in [1, last_page], once), the
// usable pages, the extents.
Status ReadGeometry(const SwaponOptions& o, uint64_t max_swapfile_pages, AreaGeometry* g) {
  g->max = std::min(o.pages, max_swapfile_pages);
  for (uint64_t b : o.bad_pages) {
    if (b == 0 || b > o.pages - 1)
      return Invalid("bad page " + std::to_string(b) +
                     " is outside [1, last_page = " + std::to_string(o.pages - 1) + "]");
    if (!g->bad.insert(b).second) return Invalid("bad page " + std::to_string(b) + " listed twice");
  }
  uint64_t nbad = 0;
  for (uint64_t b : g->bad) nbad += b < g->max;
  g->pages = g->max - 1 - nbad;
  if (g->pages == 0) return Invalid("area '" + o.name + "' has no usable page");
  for (const SwapExtent& e : o.extents) {
    if (e.nr_pages == 0 || e.start_page >= g->max)
      return Invalid("extent at page " + std::to_string(e.start_page) +
                     " is empty or past the end");
  }
  return Status::Ok();
}

// -EBUSY when record t already serves o's name, or blocks of o's block
// device (its `max` slots).
Status CheckNotInUse(const SwapDevice& d, int t, const SwaponOptions& o, uint64_t max) {
  if (d.used && d.name == o.name)
    return Status(-EBUSY,
                  "swapon: '" + o.name + "' is already in use as device " + std::to_string(t));
  if (!d.used || o.bdev == 0 || d.bdev != o.bdev) return Status::Ok();
  for (const BlockRange& a : BlockRanges(d.extents, d.first_block, d.max)) {
    for (const BlockRange& b : BlockRanges(o.extents, o.first_block, max)) {
      if (a.first < b.first + b.n && b.first < a.first + a.n)
        return Status(-EBUSY, "swapon: '" + o.name + "' overlaps blocks " +
                                  std::to_string(std::max(a.first, b.first)) +
                                  ".. of active device " + std::to_string(t) + " ('" + d.name +
                                  "') on the same block device");
    }
  }
  return Status::Ok();
}

// §5.1 step 1 (swap lock held): the lowest free record, once every record
// was checked against the new area.
Result<int> FindRecordSwapLocked(const SwapSystem::State& s, const SwaponOptions& o, uint64_t max) {
  int type = -1;
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    const SwapDevice& d = *s.records[t];
    if (Status st = CheckNotInUse(d, t, o, max); !st.ok()) return st;
    if (type < 0 && !d.used) type = t;
  }
  if (type < 0)
    return Status(-EPERM,
                  "swapon: all " + std::to_string(kMaxSwapfiles) + " device records are in use");
  return type;
}

// A free record being filled in for a validated area (§5.1 steps 1, 5-8),
// swap lock held. No other thread can reach its clusters yet; nothing here
// fails.
struct NewDevice {
  SwapSystem::State& s;
  SwapDevice& d;
  const SwaponOptions& o;
  const AreaGeometry& g;

  void InitRecord();
  void MarkBad(uint64_t off);
  void SetUpClusters();
  void ReserveForHibernation();
  void ListClusters();
  void ResetScanState();
  void SetDiscard();
  void SetPriority();
};

// §5.1 step 1: the record's identity, size and flags; off the avail list.
void NewDevice::InitRecord() {
  d.used = true;
  d.name = o.name;
  d.max = g.max;
  d.pages = g.pages;
  d.bad.assign(g.bad.begin(), g.bad.end());
  d.bad.erase(std::remove_if(d.bad.begin(), d.bad.end(), [&](uint64_t b) { return b >= g.max; }),
              d.bad.end());
  d.ssd = o.ssd;
  d.blkdev = o.blkdev;
  d.bdev = o.bdev;
  d.first_block = o.first_block;
  d.extents = o.extents;
  d.sink = o.discard_sink;
  d.hibernation_pinned = false;
  d.inuse.store(kOffListBit);
  d.discard_pending = false;
  d.reclaim_pending = false;
}

// One BAD slot, in a table allocated as needed, counted by its cluster.
void NewDevice::MarkBad(uint64_t off) {
  SwapCluster& c = d.ClusterOf(off, s.cluster_shift);
  c.lock.AssertUnpublished();
  if (!c.table) s.AllocTable(c);
  s.SetSlot(c, off - s.ClusterStart(d, c), slot::Bad());
  ++c.count;
}

// Clusters (§5.1 step 5): BAD slots for the header, the header's bad
// pages and the tail of the last cluster, then the lists in index order.
void NewDevice::SetUpClusters() {
  d.nr_clusters = (g.max + s.cluster_size - 1) >> s.cluster_shift;
  d.clusters = std::make_unique<SwapCluster[]>(d.nr_clusters);
  MarkBad(0);
  for (uint64_t b : d.bad) MarkBad(b);
  for (uint64_t off = g.max; off < d.nr_clusters << s.cluster_shift; ++off) MarkBad(off);
  ReserveForHibernation();
  ListClusters();
}

// Hibernation reservation (seed 001 patch 10, hibernation spec §9.7):
// the first stretch of wanted empty clusters, on no list, not counted.
void NewDevice::ReserveForHibernation() {
  d.hib_reserve_start = d.hib_reserve_nr = 0;
  if (o.hibernation_reserve_pages == 0 || o.bdev == 0) return;
  const uint64_t want = (o.hibernation_reserve_pages + s.cluster_size - 1) >> s.cluster_shift;
  if (want > d.nr_clusters / 2) return;
  uint64_t run = 0;
  for (uint64_t i = 0; i < d.nr_clusters && run < want; ++i) {
    SwapCluster& c = d.clusters[i];
    c.lock.AssertUnpublished();
    run = c.count == 0 ? run + 1 : 0;
    if (run == want) {
      d.hib_reserve_start = i + 1 - want;
      d.hib_reserve_nr = want;
    }
  }
  for (uint64_t i = 0; i < d.hib_reserve_nr; ++i) {
    SwapCluster& c = d.clusters[d.hib_reserve_start + i];
    c.lock.AssertUnpublished();
    c.hib_reserved = true;
  }
  d.pages -= d.hib_reserve_nr << s.cluster_shift;
}

// The clusters join their lists (§5.1 step 5): with a BAD slot nonfull[0],
// else free. The order they join: disk order, or 6.12's columns
// (setup_clusters()).
void NewDevice::ListClusters() {
  std::vector<uint64_t> list_order;
  list_order.reserve(d.nr_clusters);
  const uint64_t cols = s.policy.interleave_free_clusters ? SwapClusterCols(s.cluster_size) : 1;
  for (uint64_t col = 0; col < cols; ++col) {
    for (uint64_t i = col; i < d.nr_clusters; i += cols) list_order.push_back(i);
  }
  SpinGuard lg(d.lock);
  d.lists.fill(ClusterList{});
  for (uint64_t i : list_order) {
    SwapCluster& c = d.clusters[i];
    c.lock.AssertUnpublished();
    if (c.hib_reserved) continue;  // flag NONE, on no list
    c.flag = c.count > 0 ? ClusterFlag::kNonfull : ClusterFlag::kFree;
    s.ListAppendDeviceLocked(d, c.count > 0 ? d.nonfull(0) : d.free_list(), c);
  }
}

// §5.1 step 5's seq_next, the scan positions and bases, the per-CPU hints.
void NewDevice::ResetScanState() {
  {
    SpinGuard cg(d.global_cluster_lock);
    d.seq_next.fill(0);
    d.cluster_next = 1;  // 6.12 read_swap_header()
    d.cluster_nr = 0;
    s.InitScanBasesLocked(d);
  }
  {
    SpinGuard lg(d.lock);
    d.lowest_bit = 1;
    d.highest_bit = g.max - 1;
  }
  d.pcp_next = std::make_unique<uint64_t[]>(static_cast<size_t>(s.opts.nr_cpus) * kMaxOrders);
}

// Discard flags (§5.1 step 7).
void NewDevice::SetDiscard() {
  d.discardable = d.area_discard = d.page_discard = false;
  if (o.discard == DiscardMode::kNone || !o.discard_supported) return;
  d.discardable = true;
  d.area_discard = o.discard != DiscardMode::kPages;
  d.page_discard = o.discard != DiscardMode::kOnce;
  if (d.area_discard && d.sink != nullptr) d.sink->Discard(d.type, 1, g.max - 1);
}

// Priority (§5.1 step 8, §10.3).
void NewDevice::SetPriority() {
  if (o.prio) {
    d.prio = *o.prio;
  } else if (s.policy.default_prio_round_robin) {
    d.prio = -1;
  } else {
    d.prio = --s.least_priority;
  }
}

}  // namespace

// Mirrors the swapon syscall: read_swap_header, setup_swap_clusters_info,
// enable_swap_info. Validates everything before changing anything.
Result<int> SwapSystem::Swapon(const SwaponOptions& o) {
  State& s = *s_;
  AreaGeometry geo;
  if (Status st = CheckHeader(o); !st.ok()) return st;
  if (Status st = ReadGeometry(o, s.opts.max_swapfile_pages, &geo); !st.ok()) return st;

  std::lock_guard g(s.swap_lock);
  const Result<int> type = FindRecordSwapLocked(s, o, geo.max);
  if (!type.ok()) return type;
  s.nr_swapfiles.store(std::max(s.nr_swapfiles.load(), *type + 1));
  SwapDevice& d = *s.records[*type];
  NewDevice nd{s, d, o, geo};
  nd.InitRecord();
  nd.SetUpClusters();
  nd.ResetScanState();
  if (!d.ssd) s.nr_rotate_swap.fetch_add(1);
  nd.SetDiscard();
  nd.SetPriority();
  // Enable (§5.1 step 9; kernel: enable_swap_info): references first.
  d.Revive();
  s.EnableSwapInfoSwapLocked(d);
  return type;
}

// Mirrors _enable_swap_info(): the device's pages count, it joins the
// active list by priority, WRITEOK on, on the avail list. Swapon's last
// step and swapoff's way back when slots are still in use (§5.1 step 9,
// §5.2 step 4). Swap lock held.
void SwapSystem::State::EnableSwapInfoSwapLocked(SwapDevice& d) {
  total_swap_pages.fetch_add(static_cast<int64_t>(d.pages));
  d.active = true;
  InsertByPrio(active, *this, d.type);
  SpinGuard lg(d.lock);
  d.writeok.store(true, std::memory_order_release);
  AddToAvailDeviceLocked(d);
}

namespace {

// §5.2 step 1 (swap lock held): an active device, neither bound to nor
// pinned by a hibernation session.
Status CheckSwapoffSwapLocked(SwapSystem::State& s, const SwapDevice* dp, int type) {
  if (dp == nullptr || !dp->used || !dp->writeok.load())
    return Status(-EINVAL, "swapoff: no active swap device of type " + std::to_string(type));
  {
    std::lock_guard hg(s.hib_mutex);
    if (s.hib_type == type)
      return Status(-EBUSY, "swapoff: device " + std::to_string(type) +
                                " is bound to the hibernation session");
  }
  if (dp->hibernation_pinned)
    return Status(
        -EBUSY, "swapoff: device " + std::to_string(type) + " is pinned by a hibernation session");
  return Status::Ok();
}

// Step 2 (swap lock held): WRITEOK off, off the avail and active lists.
void DisableSwapInfoSwapLocked(SwapSystem::State& s, SwapDevice& d) EXCLUDES(d.lock) {
  {
    SpinGuard lg(d.lock);
    d.writeok.store(false, std::memory_order_release);
    s.DelFromAvailDeviceLocked(d, true);
  }
  s.active.erase(std::find(s.active.begin(), s.active.end(), d.type));
  d.active = false;
  s.total_swap_pages.fetch_sub(static_cast<int64_t>(d.pages));
}

// Step 3: every allocation that saw WRITEOK has finished.
void WaitForAllocations(SwapDevice& d) {
  for (uint64_t i = 0; i < d.nr_clusters; ++i) {
    d.clusters[i].lock.Lock();
    d.clusters[i].lock.Unlock();
  }
}

// What one pass of try_to_unuse finds still in use: slots the owners
// reference, and slots only the swap cache holds.
struct InUseSlots {
  std::vector<SwapEntry> referenced;
  std::vector<uint64_t> cached;
};

// Cluster i's slots in use into *in_use.
void CollectInUse(SwapSystem::State& s, const SwapDevice& d, uint64_t i, const SwapCluster& c,
                  InUseSlots* in_use) REQUIRES(c.lock) {
  if (!c.table) return;
  for (uint32_t j = 0; j < s.cluster_size; ++j) {
    const uint64_t e = c.table[j];
    const uint64_t off = (i << s.cluster_shift) + j;
    if (slot::Kind(e) == SlotKind::kCached && s.SlotCount(c, j) == 0) {
      in_use->cached.push_back(off);
    } else if ((slot::Kind(e) == SlotKind::kCached || slot::Kind(e) == SlotKind::kShadow) &&
               s.SlotCount(c, j) > 0) {
      in_use->referenced.push_back(SwapEntry{d.type, off});
    }
  }
}

// Step 4 (try_to_unuse): slot caches, the owners' references, the cache.
// 6.12 keeps the slot cache disabled meanwhile: frees go straight back.
void TryToUnuse(SwapSystem::State& s, SwapDevice& d, const SwapSystem::UnuseFn& unuse) {
  if (s.policy.slot_cache) s.SlotCacheDrainAll();
  s.slot_cache_disabled.store(s.policy.slot_cache, std::memory_order_release);
  for (int pass = 0; pass < 3 && d.inuse_pages() != 0; ++pass) {
    InUseSlots in_use;
    for (uint64_t i = 0; i < d.nr_clusters; ++i) {
      SwapCluster& c = d.clusters[i];
      SpinGuard cg(c.lock);
      CollectInUse(s, d, i, c, &in_use);
    }
    if (unuse) {
      for (const SwapEntry& e : in_use.referenced) unuse(e);
    }
    for (uint64_t off : in_use.cached) s.TryReclaim(d, off, kReclaimAnyway);
  }
  s.slot_cache_disabled.store(false, std::memory_order_release);
}

// Step 5's last part: no CPU's hint points at the device any more.
void ClearPerCpuHints(SwapSystem::State& s, int type) {
  for (int cpu = 0; cpu < s.opts.nr_cpus; ++cpu) {
    PerCpu& pc = s.cpus[cpu];
    SpinGuard cg(pc.lock);
    for (int k = 0; k < kMaxOrders; ++k) {
      if (pc.dev[k] == type) {
        pc.dev[k] = -1;
        pc.off[k] = 0;
      }
    }
  }
}

// Step 6 (swap lock held): free the record.
void FreeRecordSwapLocked(SwapSystem::State& s, SwapDevice& d) {
  if (!d.ssd) s.nr_rotate_swap.fetch_sub(1);
  if (d.prio < 0 && !s.policy.default_prio_round_robin) {
    // Older kernels renumber the default priorities below it.
    for (int t = 0; t < kMaxSwapfiles; ++t) {
      SwapDevice* o = s.records[t].get();
      if (o->used && o != &d && o->prio < d.prio) {
        SpinGuard ag(s.avail_lock);
        ++o->prio;
      }
    }
    ++s.least_priority;
  }
  d.clusters.reset();
  d.nr_clusters = 0;
  d.hib_reserve_start = d.hib_reserve_nr = 0;
  d.pcp_next.reset();
  d.used = false;
}

}  // namespace

// Mirrors the swapoff syscall with try_to_unuse (§5.2).
Status SwapSystem::Swapoff(int type, const UnuseFn& unuse) {
  State& s = *s_;
  SwapDevice* dp = s.Dev(type);
  {
    std::lock_guard g(s.swap_lock);
    if (Status st = CheckSwapoffSwapLocked(s, dp, type); !st.ok()) return st;
    DisableSwapInfoSwapLocked(s, *dp);
  }
  SwapDevice& d = *dp;
  WaitForAllocations(d);
  TryToUnuse(s, d, unuse);
  if (d.inuse_pages() != 0) {
    // Re-enable through swapon's last step (§5.2 step 4).
    {
      std::lock_guard g(s.swap_lock);
      s.EnableSwapInfoSwapLocked(d);
    }
    // Draining the slot caches and reclaiming above may have scheduled
    // discard or reclaim work; it runs at this call's end (Appendix A).
    s.MaybeRunDeferred();
    return Status(-EBUSY, "swapoff: " + std::to_string(d.inuse_pages()) + " slots of device " +
                              std::to_string(type) + " are still in use after unuse");
  }
  // Step 5: no references left; flush work; clear the per-CPU hints.
  d.KillAndWait();
  s.DoDiscard(d);
  d.discard_pending = false;
  d.reclaim_pending = false;
  ClearPerCpuHints(s, type);
  {
    std::lock_guard g(s.swap_lock);
    FreeRecordSwapLocked(s, d);
  }
  // Work scheduled on other devices while step 4 drained the slot caches
  // runs at this call's end (Appendix A).
  s.MaybeRunDeferred();
  return Status::Ok();
}

}  // namespace swaplab::alloc
