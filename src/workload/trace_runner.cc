// Trace semantics for one private anonymous mapping (design.md).
#include "swaplab/workload/trace_runner.h"

#include <algorithm>
#include <unordered_set>

namespace swaplab::workload {

using alloc::Folio;
using alloc::FolioLockGuard;
using alloc::SwapEntry;

TraceRunner::TraceRunner(alloc::SwapSystem& sys, size_t keep) : sys_(sys), keep_(keep) {}
TraceRunner::~TraceRunner() = default;

Folio* TraceRunner::NewFolio(int order) {
  if (order == 0 && !spare_.empty()) {  // a split page that was never used
    Folio* f = spare_.back();
    spare_.pop_back();
    return f;
  }
  if (!released_.empty()) {  // as new: out of the swap cache, mapped, clean
    Folio* f = released_.back();
    released_.pop_back();
    f->set_order(order);
    f->mapped = true;
    f->writeback = false;
    f->dirty = false;
    return f;
  }
  pool_.push_back(std::make_unique<Folio>(order));
  return pool_.back().get();
}

// Folios out of the swap cache that no page refers to any more (each folio
// belongs to one mapping's TFolio) are used again by NewFolio.
void TraceRunner::Release(Folio* f) { released_.push_back(f); }

// The distinct cache folios `pages` refer to, in page order (pages of one
// folio need not be adjacent: a page faulted back in gets a folio of its own).
void TraceRunner::CacheFolios(std::span<const Page> pages, std::vector<Folio*>* out) {
  std::vector<Folio*>& v = *out;
  v.clear();
  for (const Page& p : pages) {
    if (p.cache != nullptr && (v.empty() || v.back() != p.cache)) v.push_back(p.cache);
  }
  if (v.size() <= 1) return;
  if (v.size() <= 32) {  // a few: keep the first of each by a linear search
    size_t n = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::find(v.begin(), v.begin() + static_cast<ptrdiff_t>(n), v[i]) ==
          v.begin() + static_cast<ptrdiff_t>(n))
        v[n++] = v[i];
    }
    v.resize(n);
    return;
  }
  std::unordered_set<Folio*> seen(v.size());
  std::erase_if(v, [&](Folio* f) { return !seen.insert(f).second; });
}

namespace {

Status At(const TraceRunner::Where& where, const std::string& what, int code = -EINVAL) {
  return Status(code, *where.trace + ":" + std::to_string(where.line) + ": " + what);
}

}  // namespace

alloc::SwapEntry TraceRunner::SlotOf(uint64_t folio, uint64_t page) const {
  auto it = folios_.find(folio);
  if (it == folios_.end() || page >= it->second.pages().size()) return {};
  const Page& p = it->second.pages()[page];
  return p.refs != 0 && !p.in_memory ? p.slot : SwapEntry{};
}

// A folio whose pages hold nothing any more is forgotten (its id may be
// used again).
void TraceRunner::ForgetIfDone(uint64_t id) {
  if (auto it = folios_.find(id); it != folios_.end()) ForgetIfDone(it);
}

void TraceRunner::ForgetIfDone(FolioMap::iterator it) {
  TFolio& f = it->second;
  for (const Page& p : f.pages()) {
    if (p.refs != 0 || p.in_memory || (p.cache && p.cache->in_swap_cache())) return;
  }
  CacheFolios(f.pages(), &caches_);
  for (Folio* cf : caches_) Release(cf);
  if (f.order > 0) spare_pages_[f.order].push_back(std::move(f.many));
  folios_.erase(it);
}

Status TraceRunner::Apply(const TraceRecord& r, const std::string& trace_name) {
  const Where where{&trace_name, r.line};  // made into text only for an error
  ++sum_.records;
  switch (r.op) {
    case TraceOp::kSwapon: {
      if (devs_.count(r.dev)) return At(where, "dev " + std::to_string(r.dev) + " is already on");
      alloc::SwaponOptions o;
      o.name = "trace-dev" + std::to_string(r.dev);
      o.pages = r.pages;
      o.ssd = r.ssd;
      o.blkdev = r.blkdev;
      o.discard = r.discard ? alloc::DiscardMode::kBoth : alloc::DiscardMode::kNone;
      o.prio = r.prio;
      auto t = sys_.Swapon(o);
      if (!t.ok()) return At(where, t.status().ToString(), t.status().code());
      devs_[r.dev] = *t;
      return Status::Ok();
    }
    case TraceOp::kSwapoff:
      return DoSwapoff(r, where);
    case TraceOp::kAlloc:
      return DoAlloc(r, where);
    case TraceOp::kSuspendStorage:
      sys_.SetStorageSuspended(true);
      return Status::Ok();
    case TraceOp::kResumeStorage:
      sys_.SetStorageSuspended(false);
      return Status::Ok();
    case TraceOp::kDropCache: {
      if (r.folio) {
        auto it = folios_.find(*r.folio);
        if (it == folios_.end()) return At(where, "unknown folio " + std::to_string(*r.folio));
        Status st = DoDropCache(it->second, where, /*keep_mapped=*/false);
        ForgetIfDone(it);
        return st;
      }
      drop_.clear();
      for (auto f = folios_.begin(); f != folios_.end(); ++f) {
        if (Status st = DoDropCache(f->second, where, /*keep_mapped=*/true); !st.ok()) return st;
        drop_.push_back(f);
      }
      for (FolioMap::iterator f : drop_) ForgetIfDone(f);
      return Status::Ok();
    }
    default:
      break;
  }
  auto it = folios_.find(*r.folio);
  if (it == folios_.end()) {
    if (r.op == TraceOp::kExpect) {
      ++sum_.expected;
      if (sum_.disagreements.size() < keep_)
        sum_.disagreements.push_back({r.line, *r.folio, r.page, r.dev, r.offset, "unknown folio"});
      return Status::Ok();
    }
    return At(where, "unknown folio " + std::to_string(*r.folio) + " (no alloc before it)");
  }
  TFolio& f = it->second;
  switch (r.op) {
    case TraceOp::kFree: {
      Status st = DoFree(r, f, where);
      ForgetIfDone(it);
      return st;
    }
    case TraceOp::kCache:
      return DoCache(r, f, where);
    case TraceOp::kDup:
      for (Page& p : f.pages()) {
        if (p.refs == 0 || p.in_memory) continue;  // only swapped-out pages
        if (Status st = sys_.SwapDupEntryDirect(p.slot); !st.ok())
          return At(where, st.ToString(), st.code());
        ++p.refs;
      }
      return Status::Ok();
    case TraceOp::kExpect: {
      if (r.page >= f.pages().size())
        return At(where, "page " + std::to_string(r.page) + " is outside folio " +
                             std::to_string(*r.folio));
      ++sum_.expected;
      const Page& p = f.pages()[r.page];
      auto dev = devs_.find(r.dev);
      const bool ok = p.slot.valid() && dev != devs_.end() && dev->second == p.slot.type &&
                      p.slot.offset == r.offset;
      if (ok) {
        ++sum_.agree;
      } else if (sum_.disagreements.size() < keep_) {
        std::string got = "not in swap";
        if (p.slot.valid()) {
          got = "offset " + std::to_string(p.slot.offset) + " on device type " +
                std::to_string(p.slot.type);
          for (auto& [id, t] : devs_) {
            if (t == p.slot.type)
              got = "dev " + std::to_string(id) + " offset " + std::to_string(p.slot.offset);
          }
        }
        sum_.disagreements.push_back({r.line, *r.folio, r.page, r.dev, r.offset, got});
      }
      return Status::Ok();
    }
    default:
      return Status::Ok();
  }
}

// alloc: swap out a folio of 2^order pages on `cpu` (allocator spec §2.10);
// each placed page then holds one swap reference (its page-table entry),
// the folio stays in the swap cache, clean and unmapped.
Status TraceRunner::DoAlloc(const TraceRecord& r, const Where& where) {
  // The reader checks this; a record built by a caller may not be.
  if (r.order < 0 || r.order >= static_cast<int>(std::size(spare_pages_)))
    return At(where, "order " + std::to_string(r.order) + " is outside 0.." +
                         std::to_string(std::size(spare_pages_) - 1));
  if (folios_.count(*r.folio))
    return At(where, "folio " + std::to_string(*r.folio) +
                         " is still live (allocated at an earlier line)");
  if (r.cpu >= sys_.options().nr_cpus)
    return At(where, "cpu " + std::to_string(r.cpu) + " but the model has " +
                         std::to_string(sys_.options().nr_cpus) + " CPUs (--cpus)");
  Folio* f = NewFolio(r.order);
  std::vector<Folio*>& split = split_;
  split.clear();
  if (r.order > 0) {
    for (int i = 0; i < (1 << r.order); ++i) split.push_back(NewFolio(0));
  }
  alloc::SwapOutResult res;
  {
    FolioLockGuard g(*f);
    auto out = sys_.SwapOutFolio(r.cpu, *f, split);
    if (!out.ok()) return At(where, out.status().ToString(), out.status().code());
    res = *out;
  }
  // The split pages were only needed if the folio fell back: keep them for
  // the next alloc (a 2 MiB swap-out would otherwise leave 512 behind).
  if (!res.split) spare_.insert(spare_.end(), split.begin(), split.end());
  // A folio that did not enter the swap cache is referred to by no page.
  if (!f->in_swap_cache()) Release(f);
  if (res.split) {
    for (Folio* p : split)
      if (!p->in_swap_cache()) Release(p);
  }
  TFolio& tf = folios_[*r.folio];
  tf.order = r.order;
  if (r.order > 0) {
    std::vector<std::vector<Page>>& spare = spare_pages_[r.order];
    if (!spare.empty()) {
      tf.many = std::move(spare.back());
      spare.pop_back();
    }
    tf.many.assign(size_t{1} << r.order, Page{});
  } else {
    tf.one = Page{};
  }
  const std::span<Page> pages = tf.pages();
  auto unmap = [&](Folio& cf) {
    FolioLockGuard g(cf);
    (void)sys_.FolioDupSwap(cf);
    cf.mapped = false;
  };
  if (f->in_swap_cache()) {
    unmap(*f);
    for (size_t i = 0; i < pages.size(); ++i)
      pages[i] = Page{SwapEntry{f->swap().type, f->swap().offset + i}, f, 1, false};
  } else if (res.split) {
    for (size_t i = 0; i < pages.size(); ++i) {
      Folio* p = split[i];
      if (!p->in_swap_cache()) {
        pages[i].in_memory = true;
        continue;
      }
      unmap(*p);
      pages[i] = Page{p->swap(), p, 1, false};
    }
  } else {
    for (Page& p : pages) p.in_memory = true;
  }
  uint64_t runs = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    const Page& p = pages[i];
    if (!p.slot.valid()) {
      ++sum_.pages_unplaced;
      continue;
    }
    ++sum_.pages_placed;
    const bool continues = i > 0 && pages[i - 1].slot.valid() &&
                           pages[i - 1].slot.type == p.slot.type &&
                           pages[i - 1].slot.offset + 1 == p.slot.offset;
    if (!continues) ++runs;
  }
  ++sum_.folios;
  sum_.folio_runs += runs;
  return Status::Ok();
}

// free: the mapping drops those pages (zap / MADV_DONTNEED).
Status TraceRunner::DoFree(const TraceRecord& r, TFolio& f, const Where& where) {
  const std::span<Page> pages = f.pages();
  uint64_t first, count;
  if (!RecordPageRange(r, pages.size(), &first, &count))
    return At(where, "pages [" + std::to_string(r.page) + ", +" + std::to_string(count) +
                         ") are outside a folio of " + std::to_string(pages.size()) + " pages");
  std::vector<Folio*>& touched_in_memory = touched_;  // in page order, as the zap walks them
  touched_in_memory.clear();
  for (uint64_t i = first; i < first + count;) {
    Page& p = pages[i];
    if (p.in_memory) {  // a present page: unmapped; its swap cache may go
      p.in_memory = false;
      if (p.cache && p.cache->in_swap_cache() &&
          std::find(touched_in_memory.begin(), touched_in_memory.end(), p.cache) ==
              touched_in_memory.end())
        touched_in_memory.push_back(p.cache);
      ++i;
      continue;
    }
    if (p.refs == 0) {
      ++i;
      continue;
    }
    // Batch consecutive swapped-out pages with consecutive slots.
    uint64_t j = i + 1;
    while (j < first + count && !pages[j].in_memory && pages[j].refs > 0 &&
           pages[j].slot.type == p.slot.type &&
           pages[j].slot.offset == pages[j - 1].slot.offset + 1 &&
           (pages[j].slot.offset >> sys_.options().cluster_shift) ==
               (p.slot.offset >> sys_.options().cluster_shift))
      ++j;
    if (Status st = sys_.SwapPutEntriesDirect(p.slot, j - i); !st.ok())
      return At(where, st.ToString(), st.code());
    for (uint64_t k = i; k < j; ++k) --pages[k].refs;
    i = j;
  }
  // free_swap_cache(): a cached folio no longer mapped loses its swap.
  for (Folio* cf : touched_in_memory) {
    bool mapped = false;
    for (const Page& p : pages) mapped |= p.cache == cf && p.in_memory;
    FolioLockGuard g(*cf);
    cf->mapped = mapped;
    if (!mapped && cf->in_swap_cache()) (void)sys_.FolioFreeSwap(*cf);
  }
  return Status::Ok();
}

// cache: pages swapped back in (fault) and kept in the swap cache.
Status TraceRunner::DoCache(const TraceRecord& r, TFolio& f, const Where& where) {
  const std::span<Page> pages = f.pages();
  uint64_t first, count;
  if (!RecordPageRange(r, pages.size(), &first, &count))
    return At(where, "pages are outside a folio of " + std::to_string(pages.size()) + " pages");
  for (uint64_t i = first; i < first + count; ++i) {
    Page& p = pages[i];
    if (p.in_memory || p.refs == 0) continue;
    Folio* cf = p.cache;
    if (cf == nullptr || !cf->in_swap_cache()) {
      cf = NewFolio(0);
      FolioLockGuard g(*cf);
      if (Status st = sys_.SwapCacheAddFolio(*cf, p.slot); !st.ok())
        return At(where, st.ToString(), st.code());
      p.cache = cf;
    }
    FolioLockGuard g(*cf);
    const int page_in_folio = static_cast<int>(p.slot.offset - cf->swap().offset);
    if (Status st = sys_.FolioPutSwap(*cf, page_in_folio); !st.ok())
      return At(where, st.ToString(), st.code());
    cf->mapped = true;
    --p.refs;
    p.in_memory = true;
  }
  return Status::Ok();
}

// drop-cache: reclaim removes the folio's swap-cache folios; slots with
// count 0 are freed. Refused (and counted) while storage is suspended.
Status TraceRunner::DoDropCache(TFolio& f, const Where& where, bool keep_mapped) {
  std::vector<Folio*>& caches = caches_;
  CacheFolios(f.pages(), &caches);
  for (Folio* cf : caches) {
    FolioLockGuard g(*cf);
    if (!cf->in_swap_cache()) continue;
    // A global drop is reclaim: it removes a folio from the swap cache only
    // once it is unmapped (shrink_folio_list: try_to_unmap, then
    // __remove_mapping), so a folio with a page still mapped in memory keeps
    // its slots (measured on 6.18: docs/fidelity.md "Agreement with the
    // running kernel"). `drop-cache folio=F` is folio_free_swap(): the folio
    // leaves the cache even when mapped (a swap-in that bypasses or frees
    // the swap cache, do_swap_page).
    if (keep_mapped && cf->mapped) continue;
    Status st = sys_.SwapCacheDelFolio(*cf);
    if (st.code() == -EBUSY) {
      ++sum_.skipped_cache_drops;
      continue;
    }
    if (!st.ok()) return At(where, st.ToString(), st.code());
  }
  for (Page& p : f.pages()) {
    if (p.cache && !p.cache->in_swap_cache()) {
      p.cache = nullptr;
      if (p.refs == 0) p.slot = SwapEntry{};
    }
  }
  for (Folio* cf : caches) {
    if (!cf->in_swap_cache()) Release(cf);
  }
  return Status::Ok();
}

// swapoff: every page still on the device is brought back into memory.
Status TraceRunner::DoSwapoff(const TraceRecord& r, const Where& where) {
  auto d = devs_.find(r.dev);
  if (d == devs_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
  const int type = d->second;
  for (auto& [id, f] : folios_) {
    std::vector<Folio*> caches;  // in page order
    for (Page& p : f.pages()) {
      if (!p.slot.valid() || p.slot.type != type) continue;
      // try_to_unuse: every reference (this mapping's and forked ones) is
      // turned into a present page.
      while (p.refs > 0) {
        if (Status st = sys_.SwapPutEntriesDirect(p.slot, 1); !st.ok())
          return At(where, st.ToString(), st.code());
        --p.refs;
      }
      if (p.cache && std::find(caches.begin(), caches.end(), p.cache) == caches.end())
        caches.push_back(p.cache);
    }
    for (Folio* cf : caches) {
      FolioLockGuard g(*cf);
      if (cf->in_swap_cache()) (void)sys_.SwapCacheDelFolio(*cf);
    }
    for (Page& p : f.pages()) {
      if (p.slot.valid() && p.slot.type == type) {
        p.slot = SwapEntry{};
        p.cache = nullptr;
        p.in_memory = true;
      }
    }
  }
  if (Status st = sys_.Swapoff(type); !st.ok()) return At(where, st.ToString(), st.code());
  devs_.erase(d);
  return Status::Ok();
}

}  // namespace swaplab::workload
