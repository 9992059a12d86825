// Harness operations that succeed (or may fail for lack of space): each
// calls the API, predicts the outcome from the model where the spec fixes
// it, and updates the model. Included by property_harness.h only.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <string>

#include "alloc/property_harness.h"

namespace swaplab::alloc::model {

// When set, SwapCacheDelFolio that frees a slot while storage is suspended
// is a failure (API: "while set, no folio leaves the swap cache"; §8 O4).
inline constexpr bool kStrictSuspendedCacheDel = true;

inline uint32_t Mix(uint32_t x, uint32_t i) {
  uint32_t h = x * 2654435761u + (i + 1) * 40503u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

inline SwaponOptions Harness::MakeSwapon(const OpSpec& op) {
  SwaponOptions o;
  const uint64_t clusters = 2 + op.a % 7;
  const uint64_t tail = ((op.a >> 3) & 1) ? (op.a >> 4) % C() : 0;
  o.pages = clusters * C() - tail;
  ++serial_;
  o.name = "dev" + std::to_string(serial_);
  o.bdev = 100 + serial_;
  o.first_block = 10000 * static_cast<uint64_t>(serial_);
  o.ssd = op.b & 1;
  o.blkdev = ((op.b >> 1) & 3) != 0;
  o.discard = static_cast<DiscardMode>((op.b >> 3) & 3);
  o.discard_supported = ((op.b >> 5) & 3) != 0;
  if (op.d % 3 != 0) o.prio = static_cast<int>((op.d >> 2) % 4);
  o.discard_sink = &sink_;
  std::set<uint64_t> bad;
  // A regular file may not list bad pages (§5.1 step 3).
  for (uint32_t i = 0; o.blkdev && i < op.c % 4; ++i) bad.insert(1 + Mix(op.c, i) % (o.pages - 1));
  if (o.blkdev && ((op.c >> 2) & 7) == 0 && clusters >= 3) {
    for (uint64_t s = C(); s < 2 * C(); ++s) bad.insert(s);  // a cluster made of bad slots (C4)
  }
  o.bad_pages.assign(bad.begin(), bad.end());
  if ((op.c >> 5) & 1) std::reverse(o.bad_pages.begin(), o.bad_pages.end());
  return o;
}

inline void Harness::OpSwapon(const OpSpec& op) {
  if (devs_.size() >= 5) {
    desc_ += " skipped (5 devices)";
    return;
  }
  SwaponOptions o = MakeSwapon(op);
  int want = 0;
  while (devs_.count(want)) ++want;
  std::ostringstream d;
  d << " " << o.name << " pages=" << o.pages << " bad=" << o.bad_pages.size() << " ssd=" << o.ssd
    << " blkdev=" << o.blkdev << " discard=" << Name(o.discard)
    << " supported=" << o.discard_supported << " prio=" << (o.prio ? std::to_string(*o.prio) : "-");
  desc_ += d.str();
  auto r = sys_->Swapon(o);
  HARNESS_CHECK(r.ok(), "valid swapon failed: " + r.status().ToString());
  HARNESS_CHECK(*r == want, "got type " + std::to_string(*r) + ", want the lowest free record " +
                                std::to_string(want) + " (§5.1 step 1)");
  desc_ += " -> type " + std::to_string(*r);
  MDevice m;
  m.type = *r;
  m.opts = o;
  m.max = o.pages;
  m.slots.resize((o.pages + C() - 1) / C() * C());
  m.slots[0].kind = MSlot::Kind::kBad;
  for (uint64_t b : o.bad_pages) m.slots[b].kind = MSlot::Kind::kBad;
  for (uint64_t s = m.max; s < m.slots.size(); ++s) m.slots[s].kind = MSlot::Kind::kBad;
  m.pages = m.max - 1 - o.bad_pages.size();
  devs_[*r] = std::move(m);
  swapped_on_type_ = *r;
}

inline void Harness::OpAlloc(const OpSpec& op) {
  const int k = PickOrder(op.a);
  const int cpu = PickCpu(op.c);
  const bool must = k == 0 ? Order0MustSucceed() : LargeMustSucceed();
  int fi = -1;
  if ((op.b & 3) == 0) {  // reuse a folio that left the swap cache
    std::vector<int> idle;
    for (size_t i = 0; i < folios_.size(); ++i) {
      if (!folios_[i].cached) idle.push_back(static_cast<int>(i));
    }
    if (!idle.empty()) {
      fi = idle[(op.b >> 2) % idle.size()];
      FolioLockGuard g(*folios_[fi].f);
      folios_[fi].f->set_order(k);
      folios_[fi].f->mapped = true;
      folios_[fi].f->writeback = false;
      folios_[fi].f->dirty = false;
    }
  }
  if (fi < 0) fi = NewFolio(k);
  Folio& f = *folios_[fi].f;
  desc_ += " folio#" + std::to_string(fi) + " order " + std::to_string(k) + " cpu " +
           std::to_string(cpu);
  const Selection sel = BeforeAlloc(cpu, k);
  const SwapCounters before = sys_->counters();
  Status st;
  {
    FolioLockGuard g(f);
    st = sys_->FolioAllocSwap(cpu, f);
  }
  ReconcileVanished(Vanish::kAny, {fi});
  const SwapCounters after = sys_->counters();
  if (st.ok()) {
    desc_ += " -> " + ToString(f.swap());
    CheckSelection(sel, f.swap(), k);
    AcceptAllocation(fi, "FolioAllocSwap");
    HARNESS_CHECK(after.alloc_failures == before.alloc_failures,
                  "alloc_failures counted although FolioAllocSwap succeeded (§7)");
    HARNESS_CHECK(after.pswpout == before.pswpout, "pswpout counted at allocation time (§7)");
    return;
  }
  desc_ += " -> " + st.ToString();
  HARNESS_CHECK(st.code() == -ENOMEM, "FolioAllocSwap of a valid folio returned " + st.ToString());
  HARNESS_CHECK(!f.in_swap_cache(), "failed FolioAllocSwap left the folio in the swap cache");
  HARNESS_CHECK(!must,
                k == 0 ? "order-0 allocation failed while a device has an EMPTY slot (§2.4, §2.9)"
                       : "order-" + std::to_string(k) +
                             " allocation failed while every avail device is a block device "
                             "with a FREE cluster (§2.3, §2.4)");
  HARNESS_CHECK(after.alloc_failures == before.alloc_failures + 1,
                "alloc_failures did not count the -ENOMEM");
}

inline void Harness::OpSwapOut(const OpSpec& op) {
  const int k = op.a % 3 == 0 ? 0 : 1 + static_cast<int>((op.a / 3) % cfg_.cluster_shift);
  const int cpu = PickCpu(op.c);
  const int n = 1 << k;
  const bool must = k == 0 ? Order0MustSucceed() : LargeMustSucceed();
  // Split pages are placed one by one; the bound below holds only while no
  // placement can reclaim (vm_swap_full() stays false).
  uint64_t empty = 0;
  for (const auto& [t, s] : scan_) empty += s.empty;
  const bool bound = suspended_ || 2 * (sys_->nr_swap_pages() - n) >= sys_->total_swap_pages();
  const int fi = NewFolio(k);
  std::vector<int> split;
  std::vector<Folio*> ptrs;
  if (k > 0) {
    for (int i = 0; i < n; ++i) {
      split.push_back(NewFolio(0));
      ptrs.push_back(folios_[split.back()].f.get());
    }
  }
  Folio& f = *folios_[fi].f;
  desc_ += " folio#" + std::to_string(fi) + " order " + std::to_string(k) + " cpu " +
           std::to_string(cpu);
  const Selection sel = BeforeAlloc(cpu, k);
  const SwapCounters before = sys_->counters();
  Result<SwapOutResult> r = Status(-EINVAL, "not called");
  {
    FolioLockGuard g(f);
    r = sys_->SwapOutFolio(cpu, f, ptrs);
  }
  std::set<int> news(split.begin(), split.end());
  news.insert(fi);
  ReconcileVanished(Vanish::kAny, news);
  const SwapCounters after = sys_->counters();
  const bool pmd = k == cfg_.cluster_shift;
  // Nothing placed: -ENOMEM, or (order 0) OK with pages_placed == 0; the
  // API comment allows both.
  const bool nothing = !r.ok() || (!r->split && r->pages_placed == 0);
  if (!nothing && !r->split) {
    desc_ += " -> whole " + ToString(f.swap());
    HARNESS_CHECK(f.in_swap_cache(), "SwapOutFolio reported success but the folio is not cached");
    CheckSelection(sel, f.swap(), k);
    AcceptAllocation(fi, "SwapOutFolio");
    HARNESS_CHECK(r->pages_placed == n, "pages_placed " + std::to_string(r->pages_placed));
    for (int s : split)
      HARNESS_CHECK(!folios_[s].f->in_swap_cache(), "split page cached without split");
    HARNESS_CHECK(after.swpout[k] == before.swpout[k] + 1, "swpout[order] not counted (§7)");
    HARNESS_CHECK(after.pswpout == before.pswpout + n, "pswpout not counted by 2^order (§7)");
    HARNESS_CHECK(after.thp_swpout == before.thp_swpout + (pmd ? 1 : 0), "thp_swpout (§7)");
    HARNESS_CHECK(after.swpout_fallback == before.swpout_fallback,
                  "swpout_fallback counted on success");
    return;
  }
  HARNESS_CHECK(!f.in_swap_cache(),
                "SwapOutFolio split or failed but the folio is in the swap cache");
  int placed = 0;
  for (int s : split) {
    if (!folios_[s].f->in_swap_cache()) continue;
    AcceptAllocation(s, "SwapOutFolio split page");
    ++placed;
  }
  if (!nothing) {
    desc_ += " -> split, " + std::to_string(r->pages_placed) + " placed";
    HARNESS_CHECK(k > 0, "an order-0 folio was split");
    HARNESS_CHECK(!must,
                  "large folio split although every avail device is a block device with a FREE "
                  "cluster (§2.3, §2.4)");
    // The split pages stay locked for the whole call (as reclaim holds
    // them), so no later placement of the call reclaims an earlier one.
    HARNESS_CHECK(placed == r->pages_placed && r->pages_placed <= n,
                  "pages_placed " + std::to_string(r->pages_placed) + " but " +
                      std::to_string(placed) + " split pages cached");
    HARNESS_CHECK(after.swpout_fallback[k] == before.swpout_fallback[k] + 1,
                  "swpout_fallback[order] not counted on split (§2.10)");
    HARNESS_CHECK(after.thp_swpout_fallback == before.thp_swpout_fallback + (pmd ? 1 : 0),
                  "thp_swpout_fallback (§2.10)");
    HARNESS_CHECK(after.swpout[0] == before.swpout[0] + r->pages_placed &&
                      after.pswpout == before.pswpout + r->pages_placed,
                  "swpout[0] / pswpout must count the placed order-0 pages");
    placed = r->pages_placed;
  } else {
    desc_ += " -> " + (r.ok() ? std::string("nothing placed") : r.status().ToString());
    HARNESS_CHECK(r.ok() || r.status().code() == -ENOMEM,
                  "SwapOutFolio returned " + r.status().ToString());
    HARNESS_CHECK(!r.ok() || k == 0, "large folio neither placed whole nor split (§2.10)");
    HARNESS_CHECK(placed == 0, "SwapOutFolio failed but placed split pages");
    HARNESS_CHECK(!(k == 0 && must),
                  "order-0 swap-out failed while a device has an EMPTY slot (§2.4)");
  }
  HARNESS_CHECK(!bound || static_cast<uint64_t>(placed) >= std::min<uint64_t>(n, empty),
                "split placed " + std::to_string(placed) + " pages while " + std::to_string(empty) +
                    " slots were EMPTY (§2.4: order 0 finds any EMPTY slot)");
}

inline void Harness::OpDupFolio(const OpSpec& op) {
  const int fi = PickCachedFolio(op.a);
  if (fi < 0) return;
  MFolio& mf = folios_[fi];
  const int n = mf.f->nr_pages();
  const int page =
      op.b % 3 == 0 ? -1 - static_cast<int>(op.b % 2) : static_cast<int>((op.b / 3) % n);
  const uint32_t reps = (op.c & 3) == 0 ? 1 + (op.c >> 2) % (policy_.count_max + 3) : 1;
  desc_ += " folio#" + std::to_string(fi) + " page " + std::to_string(page) + " x" +
           std::to_string(reps);
  FolioLockGuard g(*mf.f);
  for (uint32_t r = 0; r < reps; ++r) {
    const SwapEntry first{mf.entry.type, mf.entry.offset + (page < 0 ? 0 : page)};
    if (fail_extend_ && NeedsExtend(first, page < 0 ? n : 1)) {
      // §3.2: all or nothing when the extend table cannot be allocated.
      ExpectRejected("FolioDupSwap without memory for the extend table", -ENOMEM,
                     [&] { return sys_->FolioDupSwap(*mf.f, page); });
      return;
    }
    CheckStatusOk(sys_->FolioDupSwap(*mf.f, page), "FolioDupSwap #" + std::to_string(r));
    for (int p = 0; p < n; ++p) {
      if (page < 0 || p == page) ++SlotOf({mf.entry.type, mf.entry.offset + p}).count;
    }
  }
}

inline void Harness::OpPutFolio(const OpSpec& op) {
  std::vector<int> cand;
  for (int fi : CachedFolios()) {
    const MFolio& mf = folios_[fi];
    for (int p = 0; p < mf.f->nr_pages(); ++p) {
      if (devs_.at(mf.entry.type).slots[mf.entry.offset + p].count > 0) {
        cand.push_back(fi);
        break;
      }
    }
  }
  if (cand.empty()) return;
  const int fi = (op.a & 1) ? cand.back() : cand[(op.a >> 1) % cand.size()];
  MFolio& mf = folios_[fi];
  const int n = mf.f->nr_pages();
  std::vector<int> pages;
  bool all = true;
  for (int p = 0; p < n; ++p) {
    if (SlotOf({mf.entry.type, mf.entry.offset + p}).count > 0) {
      pages.push_back(p);
    } else {
      all = false;
    }
  }
  const int page = (all && (op.b & 1)) ? -1 : pages[(op.b >> 1) % pages.size()];
  desc_ += " folio#" + std::to_string(fi) + " page " + std::to_string(page);
  {
    FolioLockGuard g(*mf.f);
    CheckStatusOk(sys_->FolioPutSwap(*mf.f, page), "FolioPutSwap");
  }
  for (int p = 0; p < n; ++p) {
    if (page < 0 || p == page) --SlotOf({mf.entry.type, mf.entry.offset + p}).count;
  }
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpDupDirect(const OpSpec& op) {
  auto cand = SlotsWhere([](const MSlot& s) { return s.referenced(); });
  if (cand.empty()) return;
  const SwapEntry e = cand[op.a % cand.size()];
  desc_ += " " + ToString(e);
  if (fail_extend_ && NeedsExtend(e, 1)) {
    ExpectRejected("SwapDupEntryDirect without memory for the extend table", -ENOMEM,
                   [&] { return sys_->SwapDupEntryDirect(e); });
    return;
  }
  CheckStatusOk(sys_->SwapDupEntryDirect(e), "SwapDupEntryDirect");
  ++SlotOf(e).count;
  ReconcileVanished(Vanish::kNone);
}

// §3.3 swap_put_entries_direct, simulated piece by piece (a piece is the
// part of the range inside one cluster) including the reclaim attempt with
// UNMAPPED|FULL when a cached slot dropped to count 0.
inline void Harness::OpZap(const OpSpec& op) {
  auto cand = SlotsWhere([](const MSlot& s) { return s.referenced(); });
  if (cand.empty()) return;
  const SwapEntry e = cand[op.a % cand.size()];
  MDevice& d = devs_.at(e.type);
  const uint64_t want = 1 + op.b % 8;
  uint64_t len = 1;
  while (len < want && e.offset + len < d.max && d.slots[e.offset + len].referenced()) ++len;
  desc_ += " " + ToString(e) + " nr " + std::to_string(len);

  int64_t nr = sys_->nr_swap_pages();
  const int64_t total = sys_->total_swap_pages();
  std::set<int> attempted, expect_reclaimed;
  for (uint64_t o = e.offset; o < e.offset + len;) {
    const uint64_t piece_end = std::min(e.offset + len, (o / C() + 1) * C());
    bool maybe = false;
    for (uint64_t s = o; s < piece_end; ++s) {
      MSlot& m = d.slots[s];
      if (m.count == 1 && m.kind == MSlot::Kind::kShadow) {
        m = MSlot{};
        ++nr;
      } else {
        if (m.count == 1 && m.kind == MSlot::Kind::kCached) maybe = true;
        --m.count;
      }
    }
    for (uint64_t s = o; maybe && s < piece_end; ++s) {
      const MSlot& m = d.slots[s];
      if (m.kind != MSlot::Kind::kCached || attempted.count(m.folio)) continue;
      const int fi = m.folio;
      attempted.insert(fi);
      const Folio& f = *folios_[fi].f;
      const bool decide = !f.mapped || 2 * nr < total;
      if (decide && !f.writeback && !suspended_ && AllCountsZero(fi)) {
        nr += f.nr_pages();
        ModelUncache(fi);
        expect_reclaimed.insert(fi);
      }
    }
    o = piece_end;
  }
  CheckStatusOk(sys_->SwapPutEntriesDirect(e, len), "SwapPutEntriesDirect");
  for (int fi : attempted) {
    const MFolio& mf = folios_[fi];
    const bool gone = !mf.f->in_swap_cache();
    const bool want_gone = expect_reclaimed.count(fi) > 0;
    HARNESS_CHECK(gone == want_gone,
                  "folio#" + std::to_string(fi) + (want_gone ? " should" : " should not") +
                      " have been reclaimed by the zap (§3.3 step 3, §4.2 UNMAPPED|FULL: mapped=" +
                      std::to_string(mf.f->mapped) +
                      " writeback=" + std::to_string(mf.f->writeback) +
                      " suspended=" + std::to_string(suspended_) + ")");
    if (gone) HARNESS_CHECK(mf.f->dirty, "zap-reclaimed folio not marked dirty (§4.2 step 6)");
  }
  if (!expect_reclaimed.empty()) desc_ += " reclaimed " + std::to_string(expect_reclaimed.size());
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpCacheDel(const OpSpec& op) {
  const int fi = PickCachedFolio(op.a);
  if (fi < 0) return;
  MFolio& mf = folios_[fi];
  desc_ += " folio#" + std::to_string(fi) + " at " + ToString(mf.entry);
  const int n = mf.f->nr_pages();
  {
    FolioLockGuard g(*mf.f);
    mf.f->writeback = false;  // writeback completed, reclaim removes it
    // Half the time the usual life first: unmap (one reference per page),
    // so whole SHADOW runs remain for swap-in.
    if ((op.b & 1) && !(fail_extend_ && NeedsExtend(mf.entry, n))) {
      desc_ += " after unmap";
      CheckStatusOk(sys_->FolioDupSwap(*mf.f), "FolioDupSwap (unmap before reclaim)");
      for (int p = 0; p < n; ++p) ++SlotOf({mf.entry.type, mf.entry.offset + p}).count;
      mf.f->mapped = false;
    }
  }
  const bool frees = [&] {
    for (int p = 0; p < n; ++p) {
      if (SlotOf({mf.entry.type, mf.entry.offset + p}).count == 0) return true;
    }
    return false;
  }();
  const auto before = Observe(*sys_, folios_);
  Status st;
  {
    FolioLockGuard g(*mf.f);
    st = sys_->SwapCacheDelFolio(*mf.f);
  }
  if (suspended_ && !st.ok()) {
    desc_ += " -> refused while suspended";
    ExpectUnchanged(before, "refused SwapCacheDelFolio");
    return;
  }
  CheckStatusOk(st, "SwapCacheDelFolio");
  HARNESS_CHECK(!mf.f->in_swap_cache(),
                "SwapCacheDelFolio succeeded but the folio is still cached");
  HARNESS_CHECK(!(kStrictSuspendedCacheDel && suspended_ && frees),
                "SwapCacheDelFolio freed slots while storage is suspended (§4.6, O4)");
  ModelUncache(fi);
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpFreeSwap(const OpSpec& op) {
  std::vector<int> cand = CachedFolios();
  if (cand.empty()) return;
  if (op.b & 1) {
    std::vector<int> only;
    for (int fi : cand) {
      if (AllCountsZero(fi)) only.push_back(fi);
    }
    if (!only.empty()) cand = only;
  }
  const int fi = cand[op.a % cand.size()];
  MFolio& mf = folios_[fi];
  const bool want = !mf.f->writeback && !suspended_ && AllCountsZero(fi);
  desc_ += " folio#" + std::to_string(fi);
  bool got;
  {
    FolioLockGuard g(*mf.f);
    got = sys_->FolioFreeSwap(*mf.f);
  }
  desc_ += got ? " -> freed" : " -> kept";
  HARNESS_CHECK(got == want,
                std::string("FolioFreeSwap returned ") + (got ? "true" : "false") +
                    " (§3.4: freeable iff cached, not writeback, not suspended, all counts 0;"
                    " writeback=" +
                    std::to_string(mf.f->writeback) + " suspended=" + std::to_string(suspended_) +
                    ")");
  if (got) {
    HARNESS_CHECK(!mf.f->in_swap_cache(), "FolioFreeSwap returned true but the folio is cached");
    HARNESS_CHECK(mf.f->dirty, "FolioFreeSwap must mark the folio dirty (§3.4)");
    ModelUncache(fi);
  }
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpCacheAdd(const OpSpec& op) {
  auto cand = SlotsWhere([](const MSlot& s) { return s.kind == MSlot::Kind::kShadow; });
  if (cand.empty()) return;
  const SwapEntry e = cand[op.a % cand.size()];
  const MDevice& d = devs_.at(e.type);
  int k = PickOrder(op.b);
  uint64_t base = e.offset;
  for (; k > 0; --k) {
    const uint64_t n = uint64_t{1} << k;
    base = e.offset & ~(n - 1);
    bool ok = base + n <= d.max;
    for (uint64_t s = base; ok && s < base + n; ++s) ok = d.slots[s].kind == MSlot::Kind::kShadow;
    if (ok) break;
  }
  if (k == 0) base = e.offset;
  const int fi = NewFolio(k);
  Folio& f = *folios_[fi].f;
  f.mapped = false;
  desc_ += " folio#" + std::to_string(fi) + " order " + std::to_string(k) + " at " +
           ToString({e.type, base});
  {
    FolioLockGuard g(f);
    CheckStatusOk(sys_->SwapCacheAddFolio(f, {e.type, base}), "SwapCacheAddFolio");
  }
  HARNESS_CHECK((f.swap() == SwapEntry{e.type, base}),
                "swap-in folio.swap() is " + ToString(f.swap()));
  ModelCache(fi, {e.type, base}, /*fresh=*/false);
  ReconcileVanished(Vanish::kNone, {fi});
}

inline void Harness::OpTryReclaim(const OpSpec& op) {
  SwapEntry e;
  int fi = -1;
  const uint32_t v = op.a % 5;
  if (v <= 2) {
    fi = PickCachedFolio(op.d);
    if (fi < 0) return;
    e = folios_[fi].entry;
    e.offset += (op.a / 5) % folios_[fi].f->nr_pages();
  } else {
    auto cand = SlotsWhere([v](const MSlot& s) {
      return v == 3 ? s.kind == MSlot::Kind::kShadow : s.kind == MSlot::Kind::kFree;
    });
    if (cand.empty()) return;
    e = cand[(op.a / 5) % cand.size()];
  }
  const unsigned flags = op.b & 7;
  const bool locked = fi >= 0 && (op.c & 3) == 0;
  int want = 0;
  if (fi >= 0) {
    const Folio& f = *folios_[fi].f;
    const int n = f.nr_pages();
    const bool decide =
        (flags & kReclaimAnyway) || ((flags & kReclaimUnmapped) && !f.mapped) ||
        ((flags & kReclaimFull) && 2 * sys_->nr_swap_pages() < sys_->total_swap_pages());
    const bool ok = !locked && decide && !f.writeback && !suspended_ && AllCountsZero(fi);
    want = ok ? n : -n;
  }
  desc_ +=
      " " + ToString(e) + " flags " + std::to_string(flags) + (locked ? " (folio locked)" : "");
  if (locked) folios_[fi].f->Lock();
  const int got = sys_->TryToReclaimSwap(e, flags);
  if (locked) folios_[fi].f->Unlock();
  desc_ += " -> " + std::to_string(got);
  HARNESS_CHECK(got == want, "TryToReclaimSwap returned " + std::to_string(got) + ", want " +
                                 std::to_string(want) + " (§4.2)");
  if (got > 0) {
    HARNESS_CHECK(!folios_[fi].f->in_swap_cache(), "reclaimed folio still cached");
    HARNESS_CHECK(folios_[fi].f->dirty, "reclaimed folio not marked dirty (§4.2 step 6)");
    ModelUncache(fi);
  }
  ReconcileVanished(Vanish::kNone);
}

// §4.4 swap_reclaim_full_clusters, simulated exactly: clusters from the
// head of the full list (budget: inuse / CLUSTER forced, else one), each
// walked from its start; a cache-only slot makes the walk try its folio
// (ANYWAY) and advance by the folio size from that slot, so a large folio
// entered past its first page makes the walk overshoot (as the kernel).
inline void Harness::OpReclaimFull(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const bool force = op.b & 1;
  desc_ += " type " + std::to_string(t) + (force ? " force" : "");
  auto di = sys_->Device(t);
  auto full = sys_->List(t, ListId::kFull);
  HARNESS_CHECK(di.ok() && full.ok(), "Device() / List() failed");
  const uint64_t budget = std::max<uint64_t>(1, force ? di->inuse / C() : 1);
  MDevice& d = devs_.at(t);
  std::set<int> expect;
  for (size_t i = 0; i < full->size() && i < budget; ++i) {
    const uint64_t start = (*full)[i] * C(), end = std::min(d.max, start + C());
    for (uint64_t o = start; o < end;) {
      const MSlot& m = d.slots[o];
      if (m.kind != MSlot::Kind::kCached || m.count != 0) {
        ++o;
        continue;
      }
      const int fi = m.folio;
      const uint64_t n = folios_[fi].f->nr_pages();
      if (!folios_[fi].f->writeback && !suspended_ && AllCountsZero(fi)) {
        expect.insert(fi);
        ModelUncache(fi);
      }
      o += n;
    }
  }
  CheckStatusOk(sys_->ReclaimFullClusters(t, force), "ReclaimFullClusters");
  for (int fi : expect) {
    HARNESS_CHECK(!folios_[fi].f->in_swap_cache(),
                  "full-cluster reclaim kept cache-only folio#" + std::to_string(fi) +
                      " (§4.4 walk from the head of the full list)");
    HARNESS_CHECK(folios_[fi].f->dirty, "reclaimed folio not marked dirty (§4.2 step 6)");
  }
  if (!expect.empty()) desc_ += " reclaimed " + std::to_string(expect.size());
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpRunDeferred(const OpSpec& op) {
  (void)op;
  desc_ += sys_->HasDeferredWork() ? " (pending)" : " (idle)";
  const auto full_before = FullClusters();
  sys_->RunDeferredWork();
  ReconcileVanished(Vanish::kFullClusters, {}, &full_before);
  HARNESS_CHECK(!sys_->HasDeferredWork(), "RunDeferredWork left work pending");
  for (const auto& [t, d] : devs_) {
    auto di = sys_->Device(t);
    HARNESS_CHECK(di.ok() && di->discard_clusters == 0,
                  "device " + std::to_string(t) + " still has clusters waiting for discard");
  }
}

inline void Harness::OpSuspend(const OpSpec& op) {
  const bool on = op.b % 4 == 0;
  desc_ += on ? " on" : " off";
  sys_->SetStorageSuspended(on);
  suspended_ = on;
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpHibAlloc(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const int cpu = PickCpu(op.c);
  const bool must = !AllocMayReclaim() && scan_.at(t).empty_not_discard > 0;
  desc_ += " type " + std::to_string(t) + " cpu " + std::to_string(cpu);
  const SwapEntry e = sys_->AllocHibernationSlot(cpu, t);
  ReconcileVanished(Vanish::kAny, {}, nullptr, t);
  if (!e.valid()) {
    desc_ += " -> none";
    HARNESS_CHECK(!must,
                  "AllocHibernationSlot found nothing while the device has an EMPTY slot outside "
                  "the discard list (§6, §2.4)");
    return;
  }
  desc_ += " -> " + ToString(e);
  HARNESS_CHECK(e.type == t, "hibernation slot on another device (§6: exactly that device)");
  MDevice& d = devs_.at(t);
  HARNESS_CHECK(e.offset < d.max, "hibernation slot past the end");
  MSlot& s = d.slots[e.offset];
  HARNESS_CHECK(s.kind == MSlot::Kind::kFree,
                "hibernation slot " + ToString(e) + " was " + Describe(s) + " (O1)");
  s = MSlot{MSlot::Kind::kHib, 1, -1};
  exempt_.insert({t, e.offset});
}

inline void Harness::OpHibFree(const OpSpec& op) {
  auto cand = SlotsWhere([](const MSlot& s) { return s.kind == MSlot::Kind::kHib; });
  if (cand.empty()) return;
  const SwapEntry e = cand[op.a % cand.size()];
  desc_ += " " + ToString(e);
  CheckStatusOk(sys_->FreeHibernationSlot(e), "FreeHibernationSlot");
  SlotOf(e) = MSlot{};
  ReconcileVanished(Vanish::kNone);
}

inline void Harness::OpFolioFlags(const OpSpec& op) {
  const int fi = PickCachedFolio(op.a);
  if (fi < 0) return;
  Folio& f = *folios_[fi].f;
  FolioLockGuard g(f);
  f.mapped = op.b & 1;
  f.writeback = (op.b & 6) == 0;
  desc_ += " folio#" + std::to_string(fi) + " mapped=" + std::to_string(f.mapped) +
           " writeback=" + std::to_string(f.writeback);
}

// try_to_unuse's owner side: bring the data back and drop every reference
// the model holds on the slot (and on the rest of its folio).
inline void Harness::UnuseOne(SwapEntry e, std::vector<std::string>& errs) {
  auto it = devs_.find(e.type);
  if (it == devs_.end() || e.offset >= it->second.slots.size()) {
    errs.push_back("unuse(" + ToString(e) + "): not a slot of an active device");
    return;
  }
  MDevice& d = it->second;
  MSlot& s = d.slots[e.offset];
  switch (s.kind) {
    case MSlot::Kind::kFree:
      return;  // dropped earlier with its folio
    case MSlot::Kind::kBad:
      errs.push_back("unuse(" + ToString(e) + ") on a BAD slot");
      return;
    case MSlot::Kind::kHib: {
      Status st = sys_->FreeHibernationSlot(e);
      if (!st.ok()) {
        errs.push_back("unuse: FreeHibernationSlot" + ToString(e) + ": " + st.ToString());
      } else {
        s = MSlot{};
      }
      return;
    }
    case MSlot::Kind::kShadow:
      while (s.count > 0) {
        Status st = sys_->SwapPutEntriesDirect(e, 1);
        if (!st.ok()) {
          errs.push_back("unuse: SwapPutEntriesDirect" + ToString(e) + ": " + st.ToString());
          return;
        }
        if (--s.count == 0) s = MSlot{};
      }
      return;
    case MSlot::Kind::kCached: {
      const int fi = s.folio;
      MFolio& mf = folios_[fi];
      FolioLockGuard g(*mf.f);
      if (!mf.f->in_swap_cache()) return;  // swapoff dropped it itself
      for (int p = 0; p < mf.f->nr_pages(); ++p) {
        MSlot& ps = d.slots[mf.entry.offset + p];
        while (ps.count > 0) {
          Status st = sys_->FolioPutSwap(*mf.f, p);
          if (!st.ok()) {
            errs.push_back("unuse: FolioPutSwap(folio#" + std::to_string(fi) +
                           "): " + st.ToString());
            return;
          }
          --ps.count;
        }
      }
      mf.f->writeback = false;
      Status st = sys_->SwapCacheDelFolio(*mf.f);
      if (st.ok() && !mf.f->in_swap_cache()) {
        ModelUncache(fi);
      } else if (!suspended_) {
        errs.push_back("unuse: SwapCacheDelFolio(folio#" + std::to_string(fi) +
                       "): " + st.ToString());
      }
      return;
    }
  }
}

inline void Harness::OpSwapoff(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  const bool full_unuse = op.b % 4 != 0;
  desc_ += " type " + std::to_string(t) + (full_unuse ? " unuse=drop-all" : " unuse=none");
  if (devs_.at(t).pinned) {
    const auto before = Observe(*sys_, folios_);
    Status st = sys_->Swapoff(t, {});
    desc_ += " (pinned) -> " + st.ToString();
    HARNESS_CHECK(st.code() == -EBUSY,
                  "swapoff of a pinned device returned " + st.ToString() + " (§6)");
    ExpectUnchanged(before, "swapoff of a pinned device");
    return;
  }
  bool referenced = false, hib = false;
  for (const MSlot& s : devs_.at(t).slots) {
    referenced |= s.kind == MSlot::Kind::kHib || s.count > 0;
    hib |= s.kind == MSlot::Kind::kHib;
  }
  // HIB entries (policy hibernation_hib_entry) are no swap reference, so
  // unuse is not asked to drop them and swapoff stays busy (§6: the
  // hibernation session frees them by offset).
  const bool hib_blocks = hib && policy_.hibernation_hib_entry;
  std::vector<std::string> errs;
  SwapSystem::UnuseFn fn;
  if (full_unuse) fn = [&](SwapEntry e) { UnuseOne(e, errs); };
  Status st = sys_->Swapoff(t, fn);
  desc_ += " -> " + (st.ok() ? std::string("ok") : st.ToString());
  HARNESS_CHECK(errs.empty(), "unuse callback: " + (errs.empty() ? "" : errs.front()));
  ReconcileVanished(Vanish::kAny, {}, nullptr, t);
  if (st.ok()) {
    HARNESS_CHECK(!hib_blocks, "swapoff succeeded over HIB entries nobody freed");
    HARNESS_CHECK(
        full_unuse || !referenced,
        "swapoff succeeded although slots are still referenced and unuse dropped nothing");
    for (uint64_t o = 0; o < devs_.at(t).slots.size(); ++o) {
      const MSlot& s = devs_.at(t).slots[o];
      HARNESS_CHECK(!s.used(), "swapoff succeeded but the model still holds " + ToString({t, o}) +
                                   " " + Describe(s));
    }
    swapped_off_ = std::move(devs_.at(t));
    swapped_off_type_ = t;
    devs_.erase(t);
    return;
  }
  HARNESS_CHECK(st.code() == -EBUSY, "swapoff returned " + st.ToString() + " (§5.2: -EBUSY)");
  bool cache_only_writeback = false;  // swapoff cannot reclaim these itself
  for (int fi : CachedFolios()) {
    cache_only_writeback |= folios_[fi].entry.type == t && folios_[fi].f->writeback;
  }
  const bool expect_ok =
      !suspended_ && !hib_blocks && !cache_only_writeback && (full_unuse || !referenced);
  HARNESS_CHECK(!expect_ok, "swapoff failed although every reference was dropped (§5.2 step 4)");
}

inline void Harness::OpPin(const OpSpec& op) {
  if (devs_.empty()) return;
  const int t = std::next(devs_.begin(), op.a % devs_.size())->first;
  MDevice& d = devs_.at(t);
  const uint64_t bdev = d.opts.bdev, block = d.opts.first_block;
  switch (op.b % 4) {
    case 0:
      desc_ += " unpin " + std::to_string(t);
      sys_->UnpinHibernationSwapType(t);
      d.pinned = false;
      break;
    case 1: {
      desc_ += " find " + std::to_string(t);
      auto r = sys_->FindHibernationSwapType(bdev, block);
      HARNESS_CHECK(r.ok() && *r == t, "FindHibernationSwapType(bdev, block of slot 0) " +
                                           (r.ok() ? std::to_string(*r) : r.status().ToString()));
      auto w = sys_->FindHibernationSwapType(bdev, block + 1);
      HARNESS_CHECK(!w.ok(), "FindHibernationSwapType with the wrong block succeeded (§6)");
      break;
    }
    default: {
      desc_ += " pin " + std::to_string(t);
      if (d.pinned) {
        const auto before = Observe(*sys_, folios_);
        auto r = sys_->PinHibernationSwapType(bdev, block);
        HARNESS_CHECK(!r.ok() && r.status().code() == -EBUSY,
                      "second pin did not return -EBUSY (§6)");
        ExpectUnchanged(before, "second pin");
      } else {
        auto r = sys_->PinHibernationSwapType(bdev, block);
        HARNESS_CHECK(r.ok() && *r == t, "PinHibernationSwapType " +
                                             (r.ok() ? std::to_string(*r) : r.status().ToString()));
        d.pinned = true;
      }
    }
  }
}

inline void Harness::OpQueries(const OpSpec& op) {
  const int64_t nr = sys_->nr_swap_pages(), total = sys_->total_swap_pages();
  HARNESS_CHECK(sys_->vm_swap_full() == (2 * nr < total), "vm_swap_full() (§4.1)");
  const std::string proc = sys_->ProcSwaps();
  for (const auto& [t, d] : devs_) {
    auto di = sys_->Device(t);
    HARNESS_CHECK(di.ok(), "Device()");
    HARNESS_CHECK(sys_->CountSwapPages(t, false) == d.pages, "CountSwapPages(type, false) (§6)");
    HARNESS_CHECK(sys_->CountSwapPages(t, true) == d.pages - di->inuse,
                  "CountSwapPages(type, true) (§6)");
    const uint64_t off = 1 + op.a % (d.max - 1);
    HARNESS_CHECK(sys_->SwapdevBlock(t, off) == d.opts.first_block + off, "SwapdevBlock (§6)");
    HARNESS_CHECK(proc.find(d.opts.name) != std::string::npos, "ProcSwaps() misses " + d.opts.name);
  }
  auto first = sys_->FindFirstSwap();
  HARNESS_CHECK(first.ok() == !devs_.empty(), "FindFirstSwap() " + first.status().ToString());
  if (first.ok())
    HARNESS_CHECK(devs_.count(*first) > 0, "FindFirstSwap() returned an inactive type");
  for (int t : sys_->avail_devices())
    HARNESS_CHECK(devs_.count(t) > 0, "avail device not active (G3)");
  ReconcileVanished(Vanish::kNone);
}

}  // namespace swaplab::alloc::model
