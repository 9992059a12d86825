// SPDX-License-Identifier: MIT
// CheckInvariants(): every invariant of allocator spec §8, at quiescence.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "alloc/system_state.h"

namespace swaplab::alloc {

namespace {

struct Checker {
  InvariantReport report;
  bool Fail(const char* id, std::string where) {
    if (report.ok()) report = InvariantReport{id, std::move(where)};
    return false;
  }
};

std::string At(int type, uint64_t cluster) {
  return "device " + std::to_string(type) + " cluster " + std::to_string(cluster);
}

// The list walk (C2) reads a listed cluster's flag and order under the
// device lock only: §9 orders the cluster lock before the device lock, so
// the walk cannot take it. CheckInvariants runs at quiescence, where no
// cluster lock is held; the analysis is told so for these two reads only.
struct FlagOrder {
  ClusterFlag flag;
  int order;
};
FlagOrder ListedFlagOrderAtQuiescence(const SwapCluster& c) NO_THREAD_SAFETY_ANALYSIS {
  return {c.flag, c.order};
}

// What one device's clusters add up to (D1, G4).
struct DeviceTally {
  uint64_t sum_count = 0, bad_slots = 0;
};

// What one cluster's slots hold, counted as they are checked (C1, C6, C7,
// S3).
struct SlotTally {
  uint32_t nonempty = 0, bad = 0, extended = 0, reclaimable = 0;
};

// One non-empty slot under check: its cluster's index and first offset,
// its index in the table, its offset and its entry.
struct SlotAt {
  uint64_t ci, start;
  uint32_t j;
  uint64_t off, e;
};

// One CheckInvariants() call, swap lock held: the first violation, in the
// order the checks run, and what the devices add up to for G1 and G2. The
// device lock is held over a device's checks, each cluster's lock over
// that cluster's (§9's order: the walk's device lock first is safe only
// because nothing else runs at quiescence).
class InvariantWalk {
 public:
  explicit InvariantWalk(SwapSystem::State& s)
      : s_(s), cs_(s.cluster_size), cm_(static_cast<uint32_t>(s.count_max)) {}
  const InvariantReport& report() const { return ck_.report; }

  bool Device(SwapDevice& d) EXCLUDES(d.lock);
  bool PerCpuHints();
  bool GlobalCounts();
  bool AvailListSorted();

 private:
  bool Lists(SwapDevice& d) REQUIRES(d.lock);
  bool WalkList(SwapDevice& d, const ClusterList& l, ClusterFlag flag, int order, const char* name)
      REQUIRES(d.lock);
  bool Cluster(SwapDevice& d, uint64_t ci, DeviceTally& dt) REQUIRES(d.lock);
  bool ClusterListed(const SwapDevice& d, uint64_t ci, const SwapCluster& c) REQUIRES(c.lock);
  bool Slots(const SwapDevice& d, uint64_t ci, const SwapCluster& c, SlotTally& n) REQUIRES(c.lock);
  bool Slot(const SwapDevice& d, const SwapCluster& c, const SlotAt& at, SlotTally& n)
      REQUIRES(c.lock);
  bool SlotKindValid(const SwapDevice& d, const SlotAt& at);
  [[gnu::cold, gnu::noinline]] bool SlotKindInvalid(const SwapDevice& d, const SlotAt& at);
  bool BadSlotListed(const SwapDevice& d, const SwapCluster& c, const SlotAt& at) REQUIRES(c.lock);
  bool SlotCountEncoded(const SwapCluster& c, const SlotAt& at, SlotTally& n) REQUIRES(c.lock);
  bool CachedSlotOwned(const SwapDevice& d, const SwapCluster& c, const SlotAt& at)
      REQUIRES(c.lock);
  bool FixedSlotsBad(const SwapDevice& d, uint64_t ci, const SwapCluster& c) REQUIRES(c.lock);
  bool ClusterCounts(const SwapDevice& d, uint64_t ci, const SwapCluster& c, SlotTally n)
      REQUIRES(c.lock);
  bool ClusterFlagAgrees(const SwapDevice& d, uint64_t ci, const SwapCluster& c, uint32_t bad)
      REQUIRES(c.lock);
  bool DeviceCounts(const SwapDevice& d, const DeviceTally& dt, uint64_t inuse) REQUIRES(d.lock);
  bool AvailListed(const SwapDevice& d, uint64_t inuse) REQUIRES(d.lock);

  SwapSystem::State& s_;
  Checker ck_;
  const uint32_t cs_;
  const uint32_t cm_;
  int64_t nr_expect_ = 0, total_expect_ = 0;
  std::vector<uint8_t> seen_;  // per device, one allocation for all of them
};

// One device: its lists, each of its clusters, its counts, its place on
// the avail list; then what it adds to G1 and G2.
bool InvariantWalk::Device(SwapDevice& d) {
  SpinGuard dl(d.lock);
  if (!Lists(d)) return false;
  DeviceTally dt;
  for (uint64_t ci = 0; ci < d.nr_clusters; ++ci) {
    if (!Cluster(d, ci, dt)) return false;
  }
  const uint64_t inuse = d.inuse_pages();
  if (!DeviceCounts(d, dt, inuse) || !AvailListed(d, inuse)) return false;
  if (d.active) {
    nr_expect_ += static_cast<int64_t>(d.pages - inuse);
    total_expect_ += static_cast<int64_t>(d.pages);
  } else {
    nr_expect_ -= static_cast<int64_t>(inuse);
  }
  return true;
}

// C2 / D5: walk every list; each cluster at most once, flag and order match.
// Every list is walked; the report keeps the first failure.
bool InvariantWalk::Lists(SwapDevice& d) {
  seen_.assign(d.nr_clusters, 0);
  WalkList(d, d.free_list(), ClusterFlag::kFree, -1, "free");
  WalkList(d, d.full_list(), ClusterFlag::kFull, -1, "full");
  WalkList(d, d.discard_list(), ClusterFlag::kDiscard, -1, "discard");
  for (int k = 0; k <= s_.pmd_order; ++k) {
    WalkList(d, d.nonfull(k), ClusterFlag::kNonfull, k, "nonfull");
    WalkList(d, d.frag(k), ClusterFlag::kFrag, k, "frag");
  }
  return ck_.report.ok();
}

// C2 / D5 for one list (order −1: a list of every order).
bool InvariantWalk::WalkList(SwapDevice& d, const ClusterList& l, ClusterFlag flag, int order,
                             const char* name) {
  const int t = d.type;
  uint64_t n = 0;
  uint32_t prev = kNil;
  for (uint32_t i = l.head; i != kNil; i = d.clusters[i].next) {
    if (i >= d.nr_clusters)
      return ck_.Fail("D5", "device " + std::to_string(t) + " list " + name + " holds cluster " +
                                std::to_string(i));
    SwapCluster& c = d.clusters[i];
    if (seen_[i]++)
      return ck_.Fail("C2", At(t, i) + " is on more than one list or twice on " + name);
    const FlagOrder fo = ListedFlagOrderAtQuiescence(c);
    if (fo.flag != flag)
      return ck_.Fail("C2", At(t, i) + " has flag " + std::string(Name(fo.flag)) +
                                " but is on the " + name + " list");
    if (order >= 0 && fo.order != order)
      return ck_.Fail("C2", At(t, i) + " of order " + std::to_string(fo.order) + " is on " + name +
                                "[" + std::to_string(order) + "]");
    if (c.prev != prev) return ck_.Fail("C2", At(t, i) + " has a broken back link on " + name);
    prev = i;
    if (++n > d.nr_clusters)
      return ck_.Fail("C2", "device " + std::to_string(t) + " list " + name + " loops");
  }
  if (n != l.len || prev != l.tail)
    return ck_.Fail("C2",
                    "device " + std::to_string(t) + " list " + name + " length or tail is wrong");
  return true;
}

// One cluster, under its lock: whether it is listed, its slots, its fixed
// BAD slots, its counts, its flag; then what it adds to D1 and G4.
bool InvariantWalk::Cluster(SwapDevice& d, uint64_t ci, DeviceTally& dt) {
  SwapCluster& c = d.clusters[ci];
  SpinGuard cl(c.lock);
  SlotTally n;
  if (!ClusterListed(d, ci, c) || !Slots(d, ci, c, n) || !FixedSlotsBad(d, ci, c) ||
      !ClusterCounts(d, ci, c, n) || !ClusterFlagAgrees(d, ci, c, n.bad))
    return false;
  dt.sum_count += c.count;
  dt.bad_slots += n.bad;
  return true;
}

// C3 / C2: on a list unless the hibernation session holds it.
bool InvariantWalk::ClusterListed(const SwapDevice& d, uint64_t ci, const SwapCluster& c) {
  // Off every list: only the hibernation session's clusters (§9.5, §9.7).
  const bool hib_off_list = (c.hib_claimed && c.flag == ClusterFlag::kFree) ||
                            (c.hib_reserved && c.flag == ClusterFlag::kNone && c.count == 0) ||
                            (c.hib_whole && c.flag == ClusterFlag::kNone);
  if (!seen_[ci] && !hib_off_list)
    return ck_.Fail("C3",
                    At(d.type, ci) + " is on no list (flag " + std::string(Name(c.flag)) + ")");
  if (seen_[ci] && (c.hib_claimed || c.hib_reserved))
    return ck_.Fail("C2", At(d.type, ci) + " is held by the hibernation session but on a list");
  return true;
}

// S1, S2, S3, S4 for every slot of the cluster's table, counted into n.
bool InvariantWalk::Slots(const SwapDevice& d, uint64_t ci, const SwapCluster& c, SlotTally& n) {
  if (!c.table) return true;
  const uint64_t start = ci << s_.cluster_shift;
  for (uint32_t j = 0; j < cs_; ++j) {
    const uint64_t e = c.table[j];
    if (e == slot::kEmpty) {  // most slots: nothing to check but the extend count
      if (c.extend && c.extend[j] != 0)
        return ck_.Fail("S3", At(d.type, ci) + " empty slot " + std::to_string(start + j) +
                                  " has an extend count");
      continue;
    }
    if (!Slot(d, c, SlotAt{ci, start, j, start + j, e}, n)) return false;
  }
  return true;
}

// One non-empty slot.
bool InvariantWalk::Slot(const SwapDevice& d, const SwapCluster& c, const SlotAt& at,
                         SlotTally& n) {
  const SlotKind kind = slot::Kind(at.e);
  ++n.nonempty;
  if (slot::Reclaimable(at.e)) ++n.reclaimable;
  if (!SlotKindValid(d, at)) return false;
  if (kind == SlotKind::kBad) {
    ++n.bad;
    if (!BadSlotListed(d, c, at)) return false;
  }
  if (!SlotCountEncoded(c, at, n)) return false;
  return kind != SlotKind::kCached || CachedSlotOwned(d, c, at);
}

// S1: a known kind, and no SHADOW with count 0. The test inline, the
// message (SlotKindInvalid) out of line: it runs for every used slot.
inline bool InvariantWalk::SlotKindValid(const SwapDevice& d, const SlotAt& at) {
  const SlotKind kind = slot::Kind(at.e);
  if (kind > SlotKind::kHib || kind == SlotKind::kEmpty ||
      (kind == SlotKind::kShadow && slot::Count(at.e) == 0)) [[unlikely]]
    return SlotKindInvalid(d, at);
  return true;
}

// S1's failure: what is wrong with the slot's kind.
bool InvariantWalk::SlotKindInvalid(const SwapDevice& d, const SlotAt& at) {
  const SlotKind kind = slot::Kind(at.e);
  if (kind > SlotKind::kHib)
    return ck_.Fail("S1", "slot " + std::to_string(at.off) + " has kind " +
                              std::to_string(static_cast<int>(kind)));
  if (kind == SlotKind::kEmpty)
    return ck_.Fail("S1", "slot " + std::to_string(at.off) + " is empty with a count");
  if (kind == SlotKind::kShadow && slot::Count(at.e) == 0)
    return ck_.Fail("S1", "slot " + std::to_string(at.off) + " of device " +
                              std::to_string(d.type) + " is SHADOW with count 0");
  return true;
}

// S2: a BAD slot is the header, past the end or a listed bad page; C6: its
// cluster has order 0.
bool InvariantWalk::BadSlotListed(const SwapDevice& d, const SwapCluster& c, const SlotAt& at) {
  const bool header_bad = std::binary_search(d.bad.begin(), d.bad.end(), at.off);
  if (!(at.off == 0 || at.off >= d.max || header_bad))
    return ck_.Fail("S2", "slot " + std::to_string(at.off) + " of device " +
                              std::to_string(d.type) + " is BAD but not a listed bad page");
  if (c.order != 0)
    return ck_.Fail(
        "C6", At(d.type, at.ci) + " holds a BAD slot but has order " + std::to_string(c.order));
  return true;
}

// S3: the count encoding, inline or in the extend table.
bool InvariantWalk::SlotCountEncoded(const SwapCluster& c, const SlotAt& at, SlotTally& n) {
  const uint32_t inl = slot::Count(at.e);
  if (inl > cm_)
    return ck_.Fail("S3", "slot " + std::to_string(at.off) + " inline count " +
                              std::to_string(inl) + " > count_max");
  if (inl == cm_) {
    ++n.extended;
    if (!c.extend || c.extend[at.j] < cm_)
      return ck_.Fail("S3", "slot " + std::to_string(at.off) +
                                " says its count is in the extend table, which holds less "
                                "than count_max");
  } else if (c.extend && c.extend[at.j] != 0) {
    return ck_.Fail("S3",
                    "slot " + std::to_string(at.off) + " has an inline count and an extend count");
  }
  return true;
}

// S4: a cached slot's folio is aligned, inside this cluster, and its first
// slot's folio owns all of its slots.
bool InvariantWalk::CachedSlotOwned(const SwapDevice& d, const SwapCluster& c, const SlotAt& at) {
  const int t = d.type;
  const uint64_t off = at.off;
  const Folio* f = slot::FolioOf(at.e);
  if (f == nullptr) {
    if (!s_.policy.slot_cache)
      return ck_.Fail("S4", "slot " + std::to_string(off) + " is cached without a folio");
    return true;
  }
  const uint64_t n = uint64_t{1} << f->order();
  const SwapEntry fe = f->swap();
  if (fe.type != t || fe.offset % n != 0 || off < fe.offset || off >= fe.offset + n ||
      (fe.offset >> s_.cluster_shift) != at.ci)
    return ck_.Fail("S4", "slot " + std::to_string(off) + " of device " + std::to_string(t) +
                              " points at an order-" + std::to_string(f->order()) +
                              " folio whose first slot is " + std::to_string(fe.type) + ":" +
                              std::to_string(fe.offset));
  if (off != fe.offset) return true;
  for (uint64_t x = off; x < off + n; ++x) {
    const uint64_t ex = c.table[x - at.start];
    if (slot::Kind(ex) != SlotKind::kCached || slot::FolioOf(ex) != f)
      return ck_.Fail("S4", "folio at " + std::to_string(t) + ":" + std::to_string(off) +
                                " does not own slot " + std::to_string(x));
  }
  return true;
}

// S2: header and tail are BAD.
bool InvariantWalk::FixedSlotsBad(const SwapDevice& d, uint64_t ci, const SwapCluster& c) {
  const int t = d.type;
  const uint64_t start = ci << s_.cluster_shift;
  for (uint64_t off : {uint64_t{0}}) {
    if (off >= start && off < start + cs_ &&
        (!c.table || slot::Kind(c.table[off - start]) != SlotKind::kBad))
      return ck_.Fail("S2", "the header slot of device " + std::to_string(t) + " is not BAD");
  }
  for (uint64_t off = std::max(start, d.max); off < start + cs_; ++off) {
    if (!c.table || slot::Kind(c.table[off - start]) != SlotKind::kBad)
      return ck_.Fail("S2", "slot " + std::to_string(off) + " past the end of device " +
                                std::to_string(t) + " is not BAD");
  }
  for (uint64_t b : d.bad) {
    if (b >= start && b < start + cs_ &&
        (!c.table || slot::Kind(c.table[b - start]) != SlotKind::kBad))
      return ck_.Fail("S2", "bad page " + std::to_string(b) + " of device " + std::to_string(t) +
                                " is not BAD");
  }
  return true;
}

// S3 (the extend table's users), C7 and C1: the cluster's counts against
// what its slots hold.
bool InvariantWalk::ClusterCounts(const SwapDevice& d, uint64_t ci, const SwapCluster& c,
                                  SlotTally n) {
  if (n.extended != c.extend_users || (c.extend && n.extended == 0))
    return ck_.Fail(
        "S3", At(d.type, ci) + " has an extend table that no slot uses, or a wrong user count");
  // C7: the full-cluster reclaim's index counts every cache-only slot
  // it could take back, so a full cluster is skipped exactly when its
  // scan would free nothing.
  if (c.reclaimable.load(std::memory_order_relaxed) != n.reclaimable)
    return ck_.Fail("C7", At(d.type, ci) + " counts " +
                              std::to_string(c.reclaimable.load(std::memory_order_relaxed)) +
                              " reclaimable slots but has " + std::to_string(n.reclaimable));
  // C1 (a cluster handed out whole to hibernation has no table: §9.5)
  if (c.hib_whole && !c.table) n.nonempty = c.count;
  if (c.count != n.nonempty)
    return ck_.Fail("C1", At(d.type, ci) + " count " + std::to_string(c.count) + " but " +
                              std::to_string(n.nonempty) + " non-empty slots");
  return true;
}

// C3 / C4: the flag against count, table and order; C6: BAD slots keep a
// cluster off the free and discard lists.
bool InvariantWalk::ClusterFlagAgrees(const SwapDevice& d, uint64_t ci, const SwapCluster& c,
                                      uint32_t bad) {
  switch (c.flag) {
    case ClusterFlag::kNone:
      if (c.hib_reserved || c.hib_whole) break;
      return ck_.Fail("C3", At(d.type, ci) + " has flag NONE at quiescence");
    case ClusterFlag::kFree:
      if (c.count != 0 || c.table || c.order != 0)
        return ck_.Fail("C4", At(d.type, ci) + " is FREE with count " + std::to_string(c.count) +
                                  (c.table ? " and a table" : "") + " order " +
                                  std::to_string(c.order));
      break;
    case ClusterFlag::kDiscard:
      if (c.count != 0)
        return ck_.Fail("C4", At(d.type, ci) + " is DISCARD with count " + std::to_string(c.count));
      break;
    case ClusterFlag::kFull:
      if (c.count != cs_)
        return ck_.Fail("C4", At(d.type, ci) + " is FULL with count " + std::to_string(c.count));
      break;
    case ClusterFlag::kNonfull:
    case ClusterFlag::kFrag: {
      // A cluster of BAD slots only stays on nonfull[0] (swapon), or
      // moves to frag[0] when 6.12's search tries it (isolate_clusters
      // off: clusters are moved before they are scanned).
      const bool all_bad_exception =
          (c.flag == ClusterFlag::kNonfull ||
           (c.flag == ClusterFlag::kFrag && !s_.policy.isolate_clusters)) &&
          c.order == 0 && bad == cs_;
      if ((c.count == 0 || c.count >= cs_) && !all_bad_exception)
        return ck_.Fail("C4", At(d.type, ci) + " is " + std::string(Name(c.flag)) + " with count " +
                                  std::to_string(c.count));
      break;
    }
  }
  if (bad > 0 && (c.flag == ClusterFlag::kFree || c.flag == ClusterFlag::kDiscard))
    return ck_.Fail("C6", At(d.type, ci) + " holds BAD slots but is " + std::string(Name(c.flag)));
  return true;
}

// D1, D2, G4: the device's counts against what its clusters hold.
bool InvariantWalk::DeviceCounts(const SwapDevice& d, const DeviceTally& dt, uint64_t inuse) {
  const int t = d.type;
  if (inuse != dt.sum_count - dt.bad_slots)
    return ck_.Fail("D1", "device " + std::to_string(t) + " inuse " + std::to_string(inuse) +
                              " but clusters hold " + std::to_string(dt.sum_count - dt.bad_slots) +
                              " used slots");
  const uint64_t expected_bad = 1 + d.bad.size() + ((d.nr_clusters << s_.cluster_shift) - d.max);
  if (dt.bad_slots != expected_bad)
    return ck_.Fail("G4", "device " + std::to_string(t) + " has " + std::to_string(dt.bad_slots) +
                              " BAD slots, expected " + std::to_string(expected_bad));
  if (d.pages != d.max - 1 - d.bad.size() - (d.hib_reserve_nr << s_.cluster_shift) ||
      inuse > d.pages)
    return ck_.Fail("D2", "device " + std::to_string(t) + " pages " + std::to_string(d.pages) +
                              " inuse " + std::to_string(inuse));
  return true;
}

// D3: on the avail list ⇔ off-list bit clear ⇔ WRITEOK and not full.
bool InvariantWalk::AvailListed(const SwapDevice& d, uint64_t inuse) {
  bool listed;
  {
    SpinGuard ag(s_.avail_lock);
    listed = std::find(s_.avail.begin(), s_.avail.end(), d.type) != s_.avail.end();
  }
  const bool bit_clear = !(d.inuse.load() & kOffListBit);
  const bool should = d.writeok.load() && inuse < d.pages;
  if (listed != bit_clear || listed != should)
    return ck_.Fail("D3", "device " + std::to_string(d.type) + (listed ? " is" : " is not") +
                              " on the avail list, off-list bit " + (bit_clear ? "clear" : "set") +
                              ", writeok " + std::to_string(d.writeok.load()) + " inuse " +
                              std::to_string(inuse) + "/" + std::to_string(d.pages));
  return true;
}

// D4: every per-CPU hint points into an active cluster device.
bool InvariantWalk::PerCpuHints() {
  for (int cpu = 0; cpu < s_.opts.nr_cpus; ++cpu) {
    PerCpu& pc = s_.cpus[cpu];
    SpinGuard cg(pc.lock);
    for (int k = 0; k < kMaxOrders; ++k) {
      if (pc.dev[k] < 0) continue;
      const SwapDevice* d = s_.Dev(pc.dev[k]);
      const bool ok = d && d->used && d->active && !s_.UsesSeq(*d) &&
                      pc.off[k] < (d->nr_clusters << s_.cluster_shift);
      if (!ok)
        return ck_.Fail("D4", "cpu " + std::to_string(cpu) + " order " + std::to_string(k) +
                                  " points at device " + std::to_string(pc.dev[k]) + " offset " +
                                  std::to_string(pc.off[k]));
    }
  }
  return true;
}

// G1, G2: the global counts against what the devices add up to.
bool InvariantWalk::GlobalCounts() {
  if (s_.total_swap_pages.load() != total_expect_)
    return ck_.Fail("G1", "total_swap_pages " + std::to_string(s_.total_swap_pages.load()) +
                              " but active devices have " + std::to_string(total_expect_));
  if (s_.NrSwapPages() != nr_expect_)
    return ck_.Fail("G2", "nr_swap_pages " + std::to_string(s_.NrSwapPages()) +
                              " but devices say " + std::to_string(nr_expect_));
  return true;
}

// G3: the avail list holds active devices only, by priority.
bool InvariantWalk::AvailListSorted() {
  SpinGuard ag(s_.avail_lock);
  for (size_t i = 0; i < s_.avail.size(); ++i) {
    const SwapDevice& d = *s_.records[s_.avail[i]];
    if (!d.active)
      return ck_.Fail("G3",
                      "device " + std::to_string(d.type) + " is on the avail list but not active");
    if (i > 0 && s_.records[s_.avail[i - 1]]->prio < d.prio)
      return ck_.Fail("G3", "the avail list is not sorted by priority");
  }
  return true;
}

}  // namespace

// Every invariant of §8, in the order the report has always given them:
// per device (lists, clusters, counts, avail list), then the per-CPU
// hints, then the global counts and the avail list's order.
InvariantReport SwapSystem::CheckInvariants() const {
  State& s = *s_;
  {
    std::lock_guard g(s.violation_mutex);
    if (!s.violation.empty()) return InvariantReport{"C5", s.violation};
  }
  std::lock_guard g(s.swap_lock);
  InvariantWalk walk(s);
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    SwapDevice& d = *s.records[t];
    if (d.used && !walk.Device(d)) return walk.report();
  }
  if (walk.PerCpuHints() && walk.GlobalCounts()) walk.AvailListSorted();
  return walk.report();
}

}  // namespace swaplab::alloc
