// Harness operations that must be rejected: each returns an error (or the
// "nothing done" value) and leaves every observable fact unchanged
// (conventions: "bad input never corrupts state: validate first, then
// mutate"). Included by property_harness.h only.
#pragma once

#include <rapidcheck.h>

#include <string>

#include "alloc/property_harness.h"

namespace swaplab::alloc::model {

inline void Harness::ExpectRejected(const std::string& what, int code,
                                    const std::function<Status()>& call) {
  desc_ += " " + what;
  const auto before = Observe(*sys_, folios_);
  const Status st = call();
  desc_ += " -> " + (st.ok() ? std::string("ok") : st.ToString());
  HARNESS_CHECK(!st.ok(), what + " succeeded but must be rejected");
  if (code != 0) {
    HARNESS_CHECK(st.code() == code,
                  what + " returned " + st.ToString() + ", want " + ErrnoName(code));
  }
  ExpectUnchanged(before, "rejected " + what);
}

inline void Harness::OpBadSwapon(const OpSpec& op) {
  SwaponOptions o = MakeSwapon(op);
  int code = -EINVAL;
  std::string what;
  switch (op.b % 8) {
    case 0:
      if (!devs_.empty()) {
        o.name = devs_.begin()->second.opts.name;
        code = -EBUSY;
        what = "swapon of an active name";
        break;
      }
      [[fallthrough]];
    case 1:
      o.bad_pages.push_back(0);
      what = "swapon with bad page 0";
      break;
    case 2:
      o.bad_pages.push_back(o.pages);
      what = "swapon with a bad page past the end";
      break;
    case 3: {
      const uint64_t b = 1 + op.d % (o.pages - 1);
      o.bad_pages = {b, b};
      what = "swapon with a duplicated bad page";
      break;
    }
    case 4:
      o.pages = 3;
      o.bad_pages = {1, 2};
      what = "swapon without a usable page";
      break;
    case 5:
      o.prio = 32768;
      what = "swapon with prio 32768";
      break;
    case 6:
      if (op.d & 1) {
        o.blkdev = false;
        o.bad_pages = {1 + op.d % (o.pages - 1)};
        what = "swapon of a swap file listing a bad page";
        break;
      }
      o.prio = -5;
      what = "swapon with prio -5";
      break;
    default:
      o.pages = op.d & 1;
      o.bad_pages.clear();
      what = "swapon of " + std::to_string(o.pages) + " pages";
      break;
  }
  ExpectRejected(what, code, [&] { return sys_->Swapon(o).status(); });
}

inline void Harness::OpError(const OpSpec& op) {
  const int cpu = PickCpu(op.c);
  auto inactive_type = [this] {
    int t = 0;
    while (devs_.count(t)) ++t;
    return t;
  };
  auto uncached_folio = [this](uint32_t x) {
    std::vector<int> idle;
    for (size_t i = 0; i < folios_.size(); ++i) {
      if (!folios_[i].cached) idle.push_back(static_cast<int>(i));
    }
    return idle.empty() ? NewFolio(0) : idle[x % idle.size()];
  };
  auto pick_slot = [this](uint32_t x, const std::function<bool(const MSlot&)>& pred,
                          SwapEntry* out) {
    auto cand = SlotsWhere(pred);
    if (cand.empty()) return false;
    *out = cand[x % cand.size()];
    return true;
  };
  auto is_free = [](const MSlot& s) { return s.kind == MSlot::Kind::kFree; };
  auto is_shadow = [](const MSlot& s) { return s.kind == MSlot::Kind::kShadow; };
  SwapEntry e;
  switch (op.a % 24) {
    case 0:
      OpBadSwapon(op);
      return;
    case 1: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0) return;
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioAllocSwap(folio#" + std::to_string(fi) + " already cached)", -EINVAL,
                     [&] {
                       FolioLockGuard g(f);
                       return sys_->FolioAllocSwap(cpu, f);
                     });
      return;
    }
    case 2: {
      Folio& f = *folios_[NewFolio(cfg_.cluster_shift + 1)].f;
      ExpectRejected("FolioAllocSwap(order > cluster order)", -EINVAL, [&] {
        FolioLockGuard g(f);
        return sys_->FolioAllocSwap(cpu, f);
      });
      return;
    }
    case 3: {
      Folio& f = *folios_[NewFolio(0)].f;
      ExpectRejected("FolioAllocSwap(unlocked folio)", -EINVAL,
                     [&] { return sys_->FolioAllocSwap(cpu, f); });
      return;
    }
    case 4: {
      const int fi = uncached_folio(op.b);
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
          if (!pick_slot(op.d, is_free, &e)) return;
          // A free slot held by a per-CPU slot cache is CACHED count 0, which
          // §3.2 lets dup: only a really EMPTY slot must be refused.
          if (sys_->Slot(e)->kind != SlotKind::kEmpty) return;
          ExpectRejected("SwapDupEntryDirect(free " + ToString(e) + ")", -ENOENT,
                         [&] { return sys_->SwapDupEntryDirect(e); });
          return;
        case 1:
          if (!pick_slot(
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
          e = {inactive_type(), 1};
          ExpectRejected("SwapDupEntryDirect(inactive " + ToString(e) + ")", 0,
                         [&] { return sys_->SwapDupEntryDirect(e); });
          return;
      }
    case 9:
      if (!pick_slot(op.b, is_free, &e)) return;
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
      const int fi = uncached_folio(op.b);
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
      if (!pick_slot(op.d, pred, &e)) return;
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
    case 14: {
      // Without HIB entries a hibernation slot is SHADOW count 1 (§6, U2),
      // indistinguishable from a swapped-out page with one reference: only
      // other counts can be rejected then.
      const bool hib_entry = policy_.hibernation_hib_entry;
      auto pred =
          (op.b & 1) ? std::function<bool(const MSlot&)>(is_free) : [hib_entry](const MSlot& s) {
            return s.kind == MSlot::Kind::kShadow && (hib_entry || s.count != 1);
          };
      if (!pick_slot(op.d, pred, &e)) return;
      ExpectRejected(
          "FreeHibernationSlot(" + std::string(KindName(SlotOf(e).kind)) + " " + ToString(e) + ")",
          0, [&] { return sys_->FreeHibernationSlot(e); });
      return;
    }
    case 15: {
      const int t = (op.b & 1) ? inactive_type() : kMaxSwapfiles + 3;
      ExpectRejected("Swapoff(inactive type " + std::to_string(t) + ")", -EINVAL,
                     [&] { return sys_->Swapoff(t, {}); });
      return;
    }
    case 16: {
      const int fi = uncached_folio(op.b);
      Folio& f = *folios_[fi].f;
      ExpectRejected("FolioFreeSwap(folio#" + std::to_string(fi) + " not cached)", 0, [&] {
        FolioLockGuard g(f);
        return sys_->FolioFreeSwap(f) ? Status::Ok() : Status(-EINVAL, "false");
      });
      return;
    }
    case 17: {
      if (op.b & 1) {
        e = {inactive_type(), 1};
      } else if (!pick_slot(
                     op.d,
                     [](const MSlot& s) {
                       return s.kind == MSlot::Kind::kFree || s.kind == MSlot::Kind::kBad;
                     },
                     &e)) {
        return;
      }
      ExpectRejected("TryToReclaimSwap(" + ToString(e) + " without folio)", 0, [&] {
        const int r = sys_->TryToReclaimSwap(e, kReclaimAnyway);
        return r == 0 ? Status(-ENOENT, "0") : Status::Ok();
      });
      return;
    }
    case 18: {
      const int fi = PickCachedFolio(op.b);
      if (fi < 0 || !pick_slot(op.d, is_shadow, &e)) return;
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
    case 20: {
      const int t = inactive_type();
      ExpectRejected("read-only queries on inactive / out-of-range ids", 0, [&] {
        bool any_ok = sys_->Device(t).ok() || sys_->Cluster(t, 0).ok() ||
                      sys_->List(t, ListId::kFree).ok() || sys_->Slot({t, 1}).ok();
        for (const auto& [dt, d] : devs_) {
          any_ok |= sys_->Cluster(dt, d.slots.size() / C()).ok();
          any_ok |= sys_->Slot({dt, d.slots.size() + 5}).ok();
        }
        return any_ok ? Status::Ok() : Status(-EINVAL, "all rejected");
      });
      return;
    }
    case 21: {
      const int t = inactive_type();
      ExpectRejected("ReclaimFullClusters(inactive type " + std::to_string(t) + ")", 0,
                     [&] { return sys_->ReclaimFullClusters(t, op.b & 1); });
      return;
    }
    case 22: {
      const int t = inactive_type();
      ExpectRejected("AllocHibernationSlot(inactive type " + std::to_string(t) + ")", 0, [&] {
        const SwapEntry h = sys_->AllocHibernationSlot(cpu, t);
        return h.valid() ? Status::Ok() : Status(-ENODEV, "none");
      });
      return;
    }
    default: {
      if (!pick_slot(op.d, is_shadow, &e)) return;
      Folio& f = *folios_[NewFolio(0)].f;
      ExpectRejected("SwapCacheAddFolio(unlocked folio at " + ToString(e) + ")", -EINVAL,
                     [&] { return sys_->SwapCacheAddFolio(f, e); });
      return;
    }
  }
}

}  // namespace swaplab::alloc::model
