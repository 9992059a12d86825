// SPDX-License-Identifier: MIT
// Reference and swap cache calls that must fail (src/alloc/swap_free.cc,
// allocator spec §3): dup / put of folios not cached, unlocked or past
// their last page, puts over count-0 slots, dup of free, bad and header
// slots, double frees, swap cache additions over used or misaligned
// slots, FolioFreeSwap of a folio not cached.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::RejectSwapFree(const OpSpec& op, uint32_t which) {
  auto is_free = [](const MSlot& s) { return s.kind == MSlot::Kind::kFree; };
  auto is_shadow = [](const MSlot& s) { return s.kind == MSlot::Kind::kShadow; };
  SwapEntry e;
  switch (which) {
    case 4: {
      const int fi = UncachedFolio(op.b);
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioDupSwap(folio#" + std::to_string(fi) + " not cached)", 0, [&] {
        FolioLockGuard g(f);
        return sys_->FolioDupSwap(f);
      });
      return;
    }
    case 5: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0) return;
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioDupSwap(folio#" + std::to_string(fi) + " unlocked)", -EINVAL,
                     [&] { return sys_->FolioDupSwap(f); });
      return;
    }
    case 6: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0) return;
      Folio& f = *folios_[fi].f;
      // Any page < 0 means "all pages" (API); only page >= nr_pages is bad.
      const int page = f.nr_pages() + static_cast<int>(op.b % 3);
      ExpectRejected("FolioDupSwap(page " + std::to_string(page) + ")", -EINVAL, [&] {
        FolioLockGuard g(f);
        return sys_->FolioDupSwap(f, page);
      });
      return;
    }
    case 7: {                                 // put on a page with count 0: all or nothing
      std::vector<std::pair<int, int>> cand;  // folio, zero page
      for (int fi : CachedFolios()) {
        const MFolio& mf = folios_[fi];
        for (int p = 0; p < mf.f->nr_pages(); ++p) {
          if (SlotOf({mf.entry.type, mf.entry.offset + p}).count == 0) cand.push_back({fi, p});
        }
      }
      if (cand.empty()) return;
      const auto [fi, zero] = cand[op.b % cand.size()];
      Folio& f = *folios_[fi].f;
      const int page = (op.c & 1) ? -1 : zero;
      ExpectRejected("FolioPutSwap(folio#" + std::to_string(fi) + ", page " + std::to_string(page) +
                         ") over a count-0 slot",
                     0, [&] {
                       FolioLockGuard g(f);
                       return sys_->FolioPutSwap(f, page);
                     });
      return;
    }
    case 8:
      switch (op.b % 3) {
        case 0:
          if (!PickSlot(op.d, is_free, &e)) return;
          // A free slot held by a per-CPU slot cache is CACHED count 0, which
          // §3.2 lets dup: only a really EMPTY slot must be refused.
          if (sys_->Slot(e)->kind != SlotKind::kEmpty) return;
          ExpectRejected("SwapDupEntryDirect(free " + ToString(e) + ")", -ENOENT,
                         [&] { return sys_->SwapDupEntryDirect(e); });
          return;
        case 1:
          if (!PickSlot(
                  op.d, [](const MSlot& s) { return s.kind == MSlot::Kind::kBad; }, &e)) {
            return;
          }
          if (e.offset == 0) {
            ExpectRejected("SwapDupEntryDirect(header " + ToString(e) + ")", 0,
                           [&] { return sys_->SwapDupEntryDirect(e); });
            return;
          }
          ExpectRejected("SwapDupEntryDirect(bad " + ToString(e) + ")", -EINVAL,
                         [&] { return sys_->SwapDupEntryDirect(e); });
          return;
        default:
          e = {InactiveType(), 1};
          ExpectRejected("SwapDupEntryDirect(inactive " + ToString(e) + ")", 0,
                         [&] { return sys_->SwapDupEntryDirect(e); });
          return;
      }
    case 9:
      if (!PickSlot(op.b, is_free, &e)) return;
      ExpectRejected("SwapPutEntriesDirect(free " + ToString(e) + ") (double free)", 0,
                     [&] { return sys_->SwapPutEntriesDirect(e, 1); });
      return;
    case 10: {  // a run whose second slot has no reference
      std::vector<SwapEntry> cand;
      for (const auto& [t, d] : devs_) {
        for (uint64_t o = 1; o + 1 < d.max; ++o) {
          const MSlot& n = d.slots[o + 1];
          if (d.slots[o].referenced() && !n.referenced() && n.kind != MSlot::Kind::kHib) {
            cand.push_back({t, o});
          }
        }
      }
      if (cand.empty()) return;
      e = cand[op.b % cand.size()];
      ExpectRejected("SwapPutEntriesDirect(" + ToString(e) + ", 2) over an unreferenced slot", 0,
                     [&] { return sys_->SwapPutEntriesDirect(e, 2); });
      return;
    }
    case 11: {
      const int fi = UncachedFolio(op.b);
      Folio& f = *folios_[fi].f;
      ExpectRejected("SwapCacheDelFolio(folio#" + std::to_string(fi) + " not cached)", 0, [&] {
        FolioLockGuard g(f);
        return sys_->SwapCacheDelFolio(f);
      });
      return;
    }
    case 12: {
      auto pred = (op.b & 1) ? std::function<bool(const MSlot&)>(is_free)
                             : [](const MSlot& s) { return s.kind == MSlot::Kind::kCached; };
      if (!PickSlot(op.d, pred, &e)) return;
      Folio& f = *folios_[NewFolio(0)].f;
      ExpectRejected(
          "SwapCacheAddFolio over " + std::string(KindName(SlotOf(e).kind)) + " " + ToString(e), 0,
          [&] {
            FolioLockGuard g(f);
            return sys_->SwapCacheAddFolio(f, e);
          });
      return;
    }
    case 13: {  // misaligned large swap-in over SHADOW slots
      std::vector<SwapEntry> cand;
      for (const auto& [t, d] : devs_) {
        for (uint64_t o = 1; o + 1 < d.max; o += 2) {
          if ((o + 1) % C() != 0 && is_shadow(d.slots[o]) && is_shadow(d.slots[o + 1])) {
            cand.push_back({t, o});
          }
        }
      }
      if (cand.empty()) return;
      e = cand[op.b % cand.size()];
      Folio& f = *folios_[NewFolio(1)].f;
      ExpectRejected("SwapCacheAddFolio(order 1 at odd " + ToString(e) + ")", 0, [&] {
        FolioLockGuard g(f);
        return sys_->SwapCacheAddFolio(f, e);
      });
      return;
    }
    case 16: {
      const int fi = UncachedFolio(op.b);
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioFreeSwap(folio#" + std::to_string(fi) + " not cached)", 0, [&] {
        FolioLockGuard g(f);
        return sys_->FolioFreeSwap(f) ? Status::Ok() : Status(-EINVAL, "false");
      });
      return;
    }
    case 18: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0 || !PickSlot(op.d, is_shadow, &e)) return;
      Folio& f = *folios_[fi].f;
      if (f.order() != 0) return;
      ExpectRejected("SwapCacheAddFolio(folio#" + std::to_string(fi) + " already cached)", 0, [&] {
        FolioLockGuard g(f);
        return sys_->SwapCacheAddFolio(f, e);
      });
      return;
    }
    case 19: {
      std::vector<int> cand;
      for (int fi : CachedFolios()) {
        if (SlotOf(folios_[fi].entry).count > 0) cand.push_back(fi);
      }
      if (cand.empty()) return;
      const int fi = cand[op.b % cand.size()];
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioPutSwap(folio#" + std::to_string(fi) + " unlocked)", -EINVAL,
                     [&] { return sys_->FolioPutSwap(f, 0); });
      return;
    }
    default: {  // 23
      if (!PickSlot(op.d, is_shadow, &e)) return;
      Folio& f = *folios_[NewFolio(0)].f;
      ExpectRejected("SwapCacheAddFolio(unlocked folio at " + ToString(e) + ")", -EINVAL,
                     [&] { return sys_->SwapCacheAddFolio(f, e); });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
