// SPDX-License-Identifier: MIT
// References and the swap cache (src/alloc/swap_free.cc, allocator spec
// §3): dup and put on folios and on bare entries, the zap of a run,
// removal from and addition to the swap cache, FolioFreeSwap. Each
// predicts the outcome from the model and updates it.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

namespace {

// When set, SwapCacheDelFolio that frees a slot while storage is suspended
// is a failure (API: "while set, no folio leaves the swap cache"; §8 O4).
constexpr bool kStrictSuspendedCacheDel = true;

}  // namespace

void Harness::OpDupFolio(const OpSpec& op) {
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

void Harness::OpPutFolio(const OpSpec& op) {
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

void Harness::OpDupDirect(const OpSpec& op) {
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
void Harness::OpZap(const OpSpec& op) {
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

void Harness::OpCacheDel(const OpSpec& op) {
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

void Harness::OpFreeSwap(const OpSpec& op) {
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

void Harness::OpCacheAdd(const OpSpec& op) {
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

}  // namespace swaplab::alloc::model
