// SPDX-License-Identifier: MIT
// CheckInvariants(): every invariant of allocator spec §8, at quiescence.
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

}  // namespace

InvariantReport SwapSystem::CheckInvariants() const {
  State& s = *s_;
  Checker ck;
  {
    std::lock_guard g(s.violation_mutex);
    if (!s.violation.empty()) return InvariantReport{"C5", s.violation};
  }
  std::lock_guard g(s.swap_lock);
  const uint32_t cs = s.cluster_size;
  const uint32_t cm = static_cast<uint32_t>(s.count_max);
  int64_t nr_expect = 0, total_expect = 0;
  std::vector<int> active_sorted;

  std::vector<uint8_t> seen;  // per device, one allocation for all of them
  for (int t = 0; t < kMaxSwapfiles; ++t) {
    SwapDevice& d = *s.records[t];
    if (!d.used) continue;
    SpinGuard dl(d.lock);
    // C2 / D5: walk every list; each cluster at most once, flag and order match.
    seen.assign(d.nr_clusters, 0);
    auto walk = [&](const ClusterList& l, ClusterFlag flag, int order, const char* name) {
      uint64_t n = 0;
      uint32_t prev = kNil;
      for (uint32_t i = l.head; i != kNil; i = d.clusters[i].next) {
        if (i >= d.nr_clusters)
          return ck.Fail("D5", "device " + std::to_string(t) + " list " + name + " holds cluster " +
                                   std::to_string(i));
        SwapCluster& c = d.clusters[i];
        if (seen[i]++)
          return ck.Fail("C2", At(t, i) + " is on more than one list or twice on " + name);
        const FlagOrder fo = ListedFlagOrderAtQuiescence(c);
        if (fo.flag != flag)
          return ck.Fail("C2", At(t, i) + " has flag " + std::string(Name(fo.flag)) +
                                   " but is on the " + name + " list");
        if (order >= 0 && fo.order != order)
          return ck.Fail("C2", At(t, i) + " of order " + std::to_string(fo.order) + " is on " +
                                   name + "[" + std::to_string(order) + "]");
        if (c.prev != prev) return ck.Fail("C2", At(t, i) + " has a broken back link on " + name);
        prev = i;
        if (++n > d.nr_clusters)
          return ck.Fail("C2", "device " + std::to_string(t) + " list " + name + " loops");
      }
      if (n != l.len || prev != l.tail)
        return ck.Fail(
            "C2", "device " + std::to_string(t) + " list " + name + " length or tail is wrong");
      return true;
    };
    walk(d.free_list(), ClusterFlag::kFree, -1, "free");
    walk(d.full_list(), ClusterFlag::kFull, -1, "full");
    walk(d.discard_list(), ClusterFlag::kDiscard, -1, "discard");
    for (int k = 0; k <= s.pmd_order; ++k) {
      walk(d.nonfull(k), ClusterFlag::kNonfull, k, "nonfull");
      walk(d.frag(k), ClusterFlag::kFrag, k, "frag");
    }
    if (!ck.report.ok()) return ck.report;

    uint64_t sum_count = 0, bad_slots = 0;
    for (uint64_t ci = 0; ci < d.nr_clusters; ++ci) {
      SwapCluster& c = d.clusters[ci];
      SpinGuard cl(c.lock);
      const uint64_t start = ci << s.cluster_shift;
      // Off every list: only the hibernation session's clusters (§9.5, §9.7).
      const bool hib_off_list = (c.hib_claimed && c.flag == ClusterFlag::kFree) ||
                                (c.hib_reserved && c.flag == ClusterFlag::kNone && c.count == 0) ||
                                (c.hib_whole && c.flag == ClusterFlag::kNone);
      if (!seen[ci] && !hib_off_list)
        return (
            ck.Fail("C3", At(t, ci) + " is on no list (flag " + std::string(Name(c.flag)) + ")"),
            ck.report);
      if (seen[ci] && (c.hib_claimed || c.hib_reserved))
        return (ck.Fail("C2", At(t, ci) + " is held by the hibernation session but on a list"),
                ck.report);
      uint32_t nonempty = 0, bad = 0, extended = 0, reclaimable = 0;
      if (c.table) {
        for (uint32_t j = 0; j < cs; ++j) {
          const uint64_t e = c.table[j];
          const uint64_t off = start + j;
          const SlotKind kind = slot::Kind(e);
          const uint32_t inl = slot::Count(e);
          if (e == slot::kEmpty) {
            if (c.extend && c.extend[j] != 0)
              return (ck.Fail("S3", At(t, ci) + " empty slot " + std::to_string(off) +
                                        " has an extend count"),
                      ck.report);
            continue;
          }
          ++nonempty;
          if (slot::Reclaimable(e)) ++reclaimable;
          if (kind > SlotKind::kHib)
            return (ck.Fail("S1", "slot " + std::to_string(off) + " has kind " +
                                      std::to_string(static_cast<int>(kind))),
                    ck.report);
          if (kind == SlotKind::kEmpty)
            return (ck.Fail("S1", "slot " + std::to_string(off) + " is empty with a count"),
                    ck.report);
          if (kind == SlotKind::kShadow && inl == 0)
            return (ck.Fail("S1", "slot " + std::to_string(off) + " of device " +
                                      std::to_string(t) + " is SHADOW with count 0"),
                    ck.report);
          if (kind == SlotKind::kBad) {
            ++bad;
            const bool header_bad = std::binary_search(d.bad.begin(), d.bad.end(), off);
            if (!(off == 0 || off >= d.max || header_bad))
              return (ck.Fail("S2", "slot " + std::to_string(off) + " of device " +
                                        std::to_string(t) + " is BAD but not a listed bad page"),
                      ck.report);
            if (c.order != 0)
              return (ck.Fail("C6", At(t, ci) + " holds a BAD slot but has order " +
                                        std::to_string(c.order)),
                      ck.report);
          }
          if (inl > cm)
            return (ck.Fail("S3", "slot " + std::to_string(off) + " inline count " +
                                      std::to_string(inl) + " > count_max"),
                    ck.report);
          if (inl == cm) {
            ++extended;
            if (!c.extend || c.extend[j] < cm)
              return (ck.Fail("S3", "slot " + std::to_string(off) +
                                        " says its count is in the extend table, which holds less "
                                        "than count_max"),
                      ck.report);
          } else if (c.extend && c.extend[j] != 0) {
            return (ck.Fail("S3", "slot " + std::to_string(off) +
                                      " has an inline count and an extend count"),
                    ck.report);
          }
          if (kind == SlotKind::kCached) {
            const Folio* f = slot::FolioOf(e);
            if (f == nullptr) {
              if (!s.policy.slot_cache)
                return (ck.Fail("S4", "slot " + std::to_string(off) + " is cached without a folio"),
                        ck.report);
              continue;
            }
            const uint64_t n = uint64_t{1} << f->order();
            const SwapEntry fe = f->swap();
            if (fe.type != t || fe.offset % n != 0 || off < fe.offset || off >= fe.offset + n ||
                (fe.offset >> s.cluster_shift) != ci)
              return (ck.Fail("S4", "slot " + std::to_string(off) + " of device " +
                                        std::to_string(t) + " points at an order-" +
                                        std::to_string(f->order()) + " folio whose first slot is " +
                                        std::to_string(fe.type) + ":" + std::to_string(fe.offset)),
                      ck.report);
            if (off == fe.offset) {
              for (uint64_t x = off; x < off + n; ++x) {
                const uint64_t ex = c.table[x - start];
                if (slot::Kind(ex) != SlotKind::kCached || slot::FolioOf(ex) != f)
                  return (
                      ck.Fail("S4", "folio at " + std::to_string(t) + ":" + std::to_string(off) +
                                        " does not own slot " + std::to_string(x)),
                      ck.report);
              }
            }
          }
        }
      }
      // S2: header and tail are BAD.
      for (uint64_t off : {uint64_t{0}}) {
        if (off >= start && off < start + cs &&
            (!c.table || slot::Kind(c.table[off - start]) != SlotKind::kBad))
          return (ck.Fail("S2", "the header slot of device " + std::to_string(t) + " is not BAD"),
                  ck.report);
      }
      for (uint64_t off = std::max(start, d.max); off < start + cs; ++off) {
        if (!c.table || slot::Kind(c.table[off - start]) != SlotKind::kBad)
          return (ck.Fail("S2", "slot " + std::to_string(off) + " past the end of device " +
                                    std::to_string(t) + " is not BAD"),
                  ck.report);
      }
      for (uint64_t b : d.bad) {
        if (b >= start && b < start + cs &&
            (!c.table || slot::Kind(c.table[b - start]) != SlotKind::kBad))
          return (ck.Fail("S2", "bad page " + std::to_string(b) + " of device " +
                                    std::to_string(t) + " is not BAD"),
                  ck.report);
      }
      if (extended != c.extend_users || (c.extend && extended == 0))
        return (ck.Fail("S3", At(t, ci) +
                                  " has an extend table that no slot uses, or a wrong user count"),
                ck.report);
      // C7: the full-cluster reclaim's index counts every cache-only slot
      // it could take back, so a full cluster is skipped exactly when its
      // scan would free nothing.
      if (c.reclaimable.load(std::memory_order_relaxed) != reclaimable)
        return (ck.Fail("C7", At(t, ci) + " counts " +
                                  std::to_string(c.reclaimable.load(std::memory_order_relaxed)) +
                                  " reclaimable slots but has " + std::to_string(reclaimable)),
                ck.report);
      // C1 (a cluster handed out whole to hibernation has no table: §9.5)
      if (c.hib_whole && !c.table) nonempty = c.count;
      if (c.count != nonempty)
        return (ck.Fail("C1", At(t, ci) + " count " + std::to_string(c.count) + " but " +
                                  std::to_string(nonempty) + " non-empty slots"),
                ck.report);
      // C3 / C4
      switch (c.flag) {
        case ClusterFlag::kNone:
          if (c.hib_reserved || c.hib_whole) break;
          return (ck.Fail("C3", At(t, ci) + " has flag NONE at quiescence"), ck.report);
        case ClusterFlag::kFree:
          if (c.count != 0 || c.table || c.order != 0)
            return (ck.Fail("C4", At(t, ci) + " is FREE with count " + std::to_string(c.count) +
                                      (c.table ? " and a table" : "") + " order " +
                                      std::to_string(c.order)),
                    ck.report);
          break;
        case ClusterFlag::kDiscard:
          if (c.count != 0)
            return (ck.Fail("C4", At(t, ci) + " is DISCARD with count " + std::to_string(c.count)),
                    ck.report);
          break;
        case ClusterFlag::kFull:
          if (c.count != cs)
            return (ck.Fail("C4", At(t, ci) + " is FULL with count " + std::to_string(c.count)),
                    ck.report);
          break;
        case ClusterFlag::kNonfull:
        case ClusterFlag::kFrag: {
          // A cluster of BAD slots only stays on nonfull[0] (swapon), or
          // moves to frag[0] when 6.12's search tries it (isolate_clusters
          // off: clusters are moved before they are scanned).
          const bool all_bad_exception =
              (c.flag == ClusterFlag::kNonfull ||
               (c.flag == ClusterFlag::kFrag && !s.policy.isolate_clusters)) &&
              c.order == 0 && bad == cs;
          if ((c.count == 0 || c.count >= cs) && !all_bad_exception)
            return (ck.Fail("C4", At(t, ci) + " is " + std::string(Name(c.flag)) + " with count " +
                                      std::to_string(c.count)),
                    ck.report);
          break;
        }
      }
      if (bad > 0 && (c.flag == ClusterFlag::kFree || c.flag == ClusterFlag::kDiscard))
        return (ck.Fail("C6", At(t, ci) + " holds BAD slots but is " + std::string(Name(c.flag))),
                ck.report);
      sum_count += c.count;
      bad_slots += bad;
    }
    // D1, D2, G4
    const uint64_t inuse = d.inuse_pages();
    if (inuse != sum_count - bad_slots)
      return (ck.Fail("D1", "device " + std::to_string(t) + " inuse " + std::to_string(inuse) +
                                " but clusters hold " + std::to_string(sum_count - bad_slots) +
                                " used slots"),
              ck.report);
    const uint64_t expected_bad = 1 + d.bad.size() + ((d.nr_clusters << s.cluster_shift) - d.max);
    if (bad_slots != expected_bad)
      return (ck.Fail("G4", "device " + std::to_string(t) + " has " + std::to_string(bad_slots) +
                                " BAD slots, expected " + std::to_string(expected_bad)),
              ck.report);
    if (d.pages != d.max - 1 - d.bad.size() - (d.hib_reserve_nr << s.cluster_shift) ||
        inuse > d.pages)
      return (ck.Fail("D2", "device " + std::to_string(t) + " pages " + std::to_string(d.pages) +
                                " inuse " + std::to_string(inuse)),
              ck.report);
    // D3
    bool listed;
    {
      SpinGuard ag(s.avail_lock);
      listed = std::find(s.avail.begin(), s.avail.end(), t) != s.avail.end();
    }
    const bool bit_clear = !(d.inuse.load() & kOffListBit);
    const bool should = d.writeok.load() && inuse < d.pages;
    if (listed != bit_clear || listed != should)
      return (
          ck.Fail("D3", "device " + std::to_string(t) + (listed ? " is" : " is not") +
                            " on the avail list, off-list bit " + (bit_clear ? "clear" : "set") +
                            ", writeok " + std::to_string(d.writeok.load()) + " inuse " +
                            std::to_string(inuse) + "/" + std::to_string(d.pages)),
          ck.report);
    if (d.active) {
      nr_expect += static_cast<int64_t>(d.pages - inuse);
      total_expect += static_cast<int64_t>(d.pages);
    } else {
      nr_expect -= static_cast<int64_t>(inuse);
    }
  }
  // D4
  for (int cpu = 0; cpu < s.opts.nr_cpus; ++cpu) {
    PerCpu& pc = s.cpus[cpu];
    SpinGuard cg(pc.lock);
    for (int k = 0; k < kMaxOrders; ++k) {
      if (pc.dev[k] < 0) continue;
      const SwapDevice* d = s.Dev(pc.dev[k]);
      const bool ok = d && d->used && d->active && !s.UsesSeq(*d) &&
                      pc.off[k] < (d->nr_clusters << s.cluster_shift);
      if (!ok)
        return (ck.Fail("D4", "cpu " + std::to_string(cpu) + " order " + std::to_string(k) +
                                  " points at device " + std::to_string(pc.dev[k]) + " offset " +
                                  std::to_string(pc.off[k])),
                ck.report);
    }
  }
  // G1, G2, G3
  if (s.total_swap_pages.load() != total_expect)
    return (ck.Fail("G1", "total_swap_pages " + std::to_string(s.total_swap_pages.load()) +
                              " but active devices have " + std::to_string(total_expect)),
            ck.report);
  if (s.NrSwapPages() != nr_expect)
    return (ck.Fail("G2", "nr_swap_pages " + std::to_string(s.NrSwapPages()) + " but devices say " +
                              std::to_string(nr_expect)),
            ck.report);
  SpinGuard ag(s.avail_lock);
  for (size_t i = 0; i < s.avail.size(); ++i) {
    const SwapDevice& d = *s.records[s.avail[i]];
    if (!d.active)
      return (ck.Fail("G3",
                      "device " + std::to_string(d.type) + " is on the avail list but not active"),
              ck.report);
    if (i > 0 && s.records[s.avail[i - 1]]->prio < d.prio)
      return (ck.Fail("G3", "the avail list is not sorted by priority"), ck.report);
  }
  return ck.report;
}

}  // namespace swaplab::alloc
