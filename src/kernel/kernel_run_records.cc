// SPDX-License-Identifier: MIT
// `kernel run`: what each record of the trace does to the running kernel
// (swapon, alloc, free, cache, drop-cache, swapoff), and what the kernel
// did, written back into the trace.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runner.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {
namespace {

// /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr int kKpfWriteback = 8, kKpfSwapCache = 13, kKpfCompoundHead = 15, kKpfCompoundTail = 16;

Status At(const std::string& where, const std::string& msg, int code = -EINVAL) {
  return Status(code, where + ": " + msg);
}

// Whether the pages a fault gave are one folio of their number: all
// present at consecutive PFNs, a compound head and its tails (or, for one
// page, neither) in /proc/kpageflags.
bool OneFolio(const SwapOutPages& s) {
  const uint64_t n = s.before.size();
  for (uint64_t i = 0; i < n; ++i) {
    if (!s.before[i].present || s.before[i].pfn != s.before[0].pfn + i) return false;
    const bool head = (s.flags[i] >> kKpfCompoundHead) & 1,
               tail = (s.flags[i] >> kKpfCompoundTail) & 1;
    if (n == 1 ? (head || tail) : (i == 0 ? !head : !tail)) return false;
  }
  return true;
}

// Whether a page of `runs` ((first PFN, pages), sorted by PFN) is under
// writeback in /proc/kpageflags, neighbours read together
// (Worker::FlagsWindowEnd); a read that fails is passed over.
bool AnyUnderWriteback(const std::vector<std::pair<uint64_t, uint64_t>>& runs) {
  for (size_t r = 0; r < runs.size();) {
    const uint64_t lo = runs[r].first;
    uint64_t hi = 0;
    const size_t end = Worker::FlagsWindowEnd(
        r, runs.size(), [&](size_t k) { return runs[k].first; },
        [&](size_t k) { return runs[k].second; }, &hi);
    if (auto flags = Worker::PageFlags(lo, hi - lo); flags.ok()) {
      for (; r < end; ++r)
        for (uint64_t i = 0; i < runs[r].second; ++i)
          if (((*flags)[runs[r].first - lo + i] >> kKpfWriteback) & 1) return true;
    }
    r = end;
  }
  return false;
}

}  // namespace

// Waits until the write-out of every folio paged out since the last wait
// has finished: a folio under writeback cannot leave the swap cache
// (folio_swapcache_freeable), so a `free` right after would keep its slots.
// Precise per folio: the writeback bit of its pages in /proc/kpageflags
// (the PFNs were read before the page-out; the folio keeps them in the
// swap cache), neighbours read together (AnyUnderWriteback). The global nr_writeback is only a
// fallback: its per-CPU deltas can hide pages in flight, and other writers keep it busy.
void Runner::WaitWriteback(uint64_t line) {
  if (pending_pfns_.empty()) return;
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.writeback_timeout_ms);
  std::sort(pending_pfns_.begin(), pending_pfns_.end());
  for (;;) {
    if (!AnyUnderWriteback(pending_pfns_)) break;
    if (std::chrono::steady_clock::now() > until) {
      Note(line, 0,
           "a paged-out folio was still under writeback after " +
               std::to_string(o_.writeback_timeout_ms) + " ms");
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  pending_pfns_.clear();
  // The end of a write-out rotated each folio into a per-CPU batch, which
  // holds a reference to it (folio_rotate_reclaimable): drained, so that a
  // `free` that takes a folio out of the swap cache frees it at once.
  // Otherwise, on whichever CPU completed the I/O and has not drained
  // since, the folio lives on on the LRU out of the swap cache, and the
  // next drop-cache's reclaim gives it a slot (docs/fidelity.md).
  if (Status st = s_.worker->DrainLru(); !st.ok()) Note(line, 0, st.ToString());
}

Status Runner::DoSwapon(const TraceRecord& r, const std::string& where) {
  if (dev_to_area_.count(r.dev))
    return At(where, "dev " + std::to_string(r.dev) + " is already on");
  AreaSpec spec;
  spec.kind = o_.device;
  spec.pages = o_.size_pages.value_or(r.pages);
  spec.prio = r.prio.value_or(o_.prio);
  spec.index = static_cast<int>(s_.areas.size());
  auto a = KernelArea::Create(spec);
  if (!a.ok()) return At(where, a.status().ToString(), a.status().code());
  std::unique_ptr<KernelArea> area = std::move(a).value();
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return swaps.status();
  int type = -1;
  uint64_t kernel_pages = 0;  // the usable pages the kernel counts (no header)
  for (const auto& sw : *swaps)
    if (sw.filename == area->swap_path()) {
      type = sw.index;
      kernel_pages = sw.size_kb / (kPage / 1024);
    }
  if (type < 0) return At(where, area->swap_path() + " is not in /proc/swaps after swapon");
  // A swap file whose blocks on disk do not all start on a page (a
  // filesystem block smaller than a page) loses the pages that straddle
  // them: the kernel packs the rest (iomap_swapfile_add_extent()), so its
  // area is that much shorter, and the model's must be too.
  uint64_t pages = spec.pages;
  if (kernel_pages > 0 && kernel_pages + 1 < spec.pages) {
    pages = kernel_pages + 1;
    rep_.warnings.push_back(
        area->swap_path() + ": the kernel uses " + std::to_string(kernel_pages) + " of its " +
        std::to_string(spec.pages - 1) +
        " pages (the file's blocks on disk are not all page-aligned: a filesystem block "
        "smaller than a page); the written trace gives the model an area of " +
        std::to_string(pages) + " pages, and slots are probed at the wrong file offsets");
  }
  type_to_dev_[type] = r.dev;
  dev_to_area_[r.dev] = s_.areas.size();
  rep_.areas.push_back({r.dev, area->swap_path(), spec.kind, spec.pages, spec.prio, area->ssd(),
                        area->blkdev(), type, area->note()});
  TraceRecord w = r;
  w.pages = pages;
  w.ssd = area->ssd();
  w.blkdev = area->blkdev();
  w.discard = false;
  w.prio = spec.prio;
  Emit(w);
  s_.areas.push_back(std::move(area));
  return Status::Ok();
}

// Whether the order-0 swap-outs of `pages` pages may share one
// MADV_PAGEOUT. Asked for slots in the same order either way (one VMA
// each), they differ only in when their writes start: with one call they
// are all still in the plug while the later ones are placed. The
// allocator looks at a folio's write-out only when it reclaims a slot
// that only the swap cache holds, which it does once the swap areas are
// half full (vm_swap_full(): scan_swap_map_slots() in 6.1,
// cluster_reclaim_range() and swap_reclaim_full_clusters() in 6.12-6.18).
// So: only while all areas together stay under half full with these
// pages and every CPU's slot cache refilled (64 slots each,
// SWAP_SLOTS_CACHE_SIZE of 6.1-6.12) on top.
bool Runner::PageoutTogether(uint64_t pages) const {
  if (!o_.pageout_runs) return false;
  auto swaps = ReadProcSwaps();
  if (!swaps.ok()) return false;
  uint64_t total = 0, used = 0;
  for (const auto& sw : *swaps) {
    total += sw.size_kb / (kPage / 1024);
    used += sw.used_kb / (kPage / 1024);
  }
  return 2 * (used + pages + 64 * online_cpus_) < total;
}

Status Runner::DoAllocs(std::span<const TraceRecord> recs) {
  Worker& w = *s_.worker;
  std::vector<std::pair<const TraceRecord*, LiveFolio>> sent;
  uint64_t order0 = 0;
  for (const TraceRecord& r : recs) {
    if (r.op != TraceOp::kAlloc) continue;
    if (live_.count(*r.folio))
      return At(Where(r), "folio " + std::to_string(*r.folio) + " is still live");
    const uint64_t pages = uint64_t{1} << r.order, bytes = pages * kPage;
    LiveFolio f;
    f.order = r.order;
    f.cpu = r.cpu;
    f.addr = (cursor_ + bytes - 1) / bytes * bytes;
    cursor_ = f.addr + bytes + kPage;  // a PROT_NONE page after it: no VMA merge
    f.pages.resize(pages);
    order0 += r.order == 0;
    sent.emplace_back(&r, std::move(f));
  }
  if (Status st = SendAllocs(sent, order0 > 1 && PageoutTogether(order0)); !st.ok()) return st;
  for (auto& [r, f] : sent) {
    auto s = w.ReceiveSwapOut();
    if (!s.ok()) return At(Where(*r), s.status().ToString(), s.status().code());
    if (s->before.size() != f.pages.size())
      return At(Where(*r), "the worker swapped out " + std::to_string(s->before.size()) +
                               " pages, not " + std::to_string(f.pages.size()));
    if (Status st = FinishAlloc(*r, std::move(f), *s); !st.ok()) return st;
  }
  return Status::Ok();
}

// The swap-outs of `sent` to the worker: with `together`, each run of
// order-0 folios of one CPU in one command (SendSwapOutRun: one
// MADV_PAGEOUT), the rest one command each.
Status Runner::SendAllocs(const std::vector<std::pair<const TraceRecord*, LiveFolio>>& sent,
                          bool together) {
  Worker& w = *s_.worker;
  constexpr uint64_t kStride = 2 * kPage;  // an order-0 folio and its guard page
  for (size_t i = 0; i < sent.size();) {
    const auto& [r, f] = sent[i];
    size_t n = 1;
    while (together && r->order == 0 && i + n < sent.size() && sent[i + n].first->order == 0 &&
           sent[i + n].first->cpu == r->cpu && sent[i + n].second.addr == f.addr + n * kStride)
      ++n;
    const Status st = n > 1 ? w.SendSwapOutRun(r->cpu, f.addr, kPage, kStride, n)
                            : w.SendSwapOut(r->cpu, f.addr, f.pages.size() * kPage);
    if (!st.ok()) return At(Where(*r), st.ToString(), st.code());
    ++rep_.pageout_calls;
    i += n;
  }
  return Status::Ok();
}

Status Runner::FinishAlloc(const TraceRecord& r, LiveFolio f, const SwapOutPages& s) {
  const uint64_t id = *r.folio, n = f.pages.size();
  if (!OneFolio(s))
    Note(r.line, id, "the fault did not give one folio of order " + std::to_string(r.order));
  for (const PageState& p : s.before) {
    if (!p.present) continue;
    if (!pending_pfns_.empty() &&
        pending_pfns_.back().first + pending_pfns_.back().second == p.pfn) {
      ++pending_pfns_.back().second;
    } else {
      pending_pfns_.emplace_back(p.pfn, 1);
    }
  }
  Emit(r);
  uint64_t not_swapped = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const PageState& p = s.after[i];
    LivePage& lp = f.pages[i];
    if (!p.swapped) {
      lp.in_memory = p.present;
      ++not_swapped;
      continue;
    }
    auto dev = type_to_dev_.find(p.swap_type);
    if (dev == type_to_dev_.end()) {
      Note(r.line, id,
           "page " + std::to_string(i) + " went to swap type " + std::to_string(p.swap_type) +
               ", not an area of this run");
      continue;
    }
    lp.swapped = true;
    lp.type = p.swap_type;
    lp.offset = p.swap_offset;
    ++rep_.pages_swapped;
    TraceRecord e;
    e.op = TraceOp::kExpect;
    e.folio = id;
    e.page = i;
    e.dev = dev->second;
    e.offset = p.swap_offset;
    Emit(e);
    ++rep_.expect_lines;
  }
  // Did the folio stay in the swap cache after its write-out? A synchronous
  // device (zram) completes the write inside MADV_PAGEOUT, and
  // shrink_folio_list then frees the clean folio at once ("a synchronous
  // write - probably a ramdisk"): the kernel dropped it from the cache on its
  // own, which the trace records as `drop-cache folio=F`.
  if (n - not_swapped > 0) {
    uint64_t cached = 0, swapped = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!f.pages[i].swapped) continue;
      ++swapped;
      cached += s.resident[i] & 1;
    }
    if (cached == 0) {
      TraceRecord d;
      d.op = TraceOp::kDropCache;
      d.folio = id;
      Emit(d);
      ++rep_.uncached_at_pageout;
    } else if (cached != swapped) {
      Note(r.line, id,
           std::to_string(swapped - cached) + " of " + std::to_string(swapped) +
               " swapped pages left the swap cache at write-out, the others stayed");
    }
  }
  // Pages MADV_PAGEOUT left in memory (no slot: the device is full) are
  // compared with the model's unplaced pages, not counted as anomalies.
  rep_.pages_not_swapped += not_swapped;
  ++rep_.folios;
  ++rep_.folios_by_order[r.order];
  live_[id] = std::move(f);
  unsettled_.push_back(id);  // not settled until a Verify read it
  return Status::Ok();
}

// Consecutive `free` records (Step: live folios, each once, pages inside
// them): after one wait for the write-outs before them, every free goes to
// the worker before the first reply is read. The kernel is asked the same
// in the same order on the same CPUs, without a round trip between.
Status Runner::DoFrees(std::span<const TraceRecord> recs) {
  WaitWriteback(recs.front().line);
  std::vector<std::pair<const TraceRecord*, int>> sent;  // and the CPU it ran on
  Status st;
  for (const TraceRecord& r : recs) {
    if (r.op != TraceOp::kFree) continue;
    auto it = live_.find(*r.folio);
    uint64_t first = 0, count = 0;
    if (it == live_.end() ||
        !workload::RecordPageRange(r, it->second.pages.size(), &first, &count)) {
      st = At(Where(r), "not a free of a live folio's pages");  // Step let it in
      break;
    }
    Unsettle(it->first, it->second);
    const int cpu = it->second.cpu;
    if (st = SendFree(r, it, first, count); !st.ok()) break;
    sent.emplace_back(&r, cpu);
  }
  // Every reply of what was sent, even after an error.
  for (const auto& [r, cpu] : sent) {
    Status done = FinishFree(*r, cpu);
    if (st.ok()) st = done;
  }
  return st;
}

// A free's command to the worker, and the folio's pages forgotten (the
// folio too when none is left).
Status Runner::SendFree(const TraceRecord& r, std::unordered_map<uint64_t, LiveFolio>::iterator it,
                        uint64_t first, uint64_t count) {
  LiveFolio& f = it->second;
  if (Status st = s_.worker->SendFree(f.cpu, f.addr + first * kPage, count * kPage); !st.ok())
    return At(Where(r), st.ToString(), st.code());
  for (uint64_t i = first; i < first + count; ++i) f.pages[i] = LivePage{};
  if (std::none_of(f.pages.begin(), f.pages.end(),
                   [](const LivePage& p) { return p.swapped || p.in_memory; }))
    live_.erase(it);
  return Status::Ok();
}

// A free's reply; the record written once the worker has done it.
Status Runner::FinishFree(const TraceRecord& r, int cpu) {
  if (Status st = s_.worker->ReceiveFree(cpu); !st.ok())
    return At(Where(r), st.ToString(), st.code());
  Emit(r);
  return Status::Ok();
}

Status Runner::DoDropCache(const TraceRecord& r, const std::string& where) {
  WaitWriteback(r.line);
  if (r.folio) ++rep_.drop_cache_global;  // the kernel side can only drop all
  if (Status st = s_.DropCache(); !st.ok())
    return At(where, "drop-cache: " + st.ToString(), st.code());
  TraceRecord w = r;
  w.folio.reset();
  Emit(w);
  return Verify(r.line, false);
}

// cache: a read fault on each page. What the kernel did is written back:
// the pages that came in (a large folio may be swapped in whole: more than
// asked), and whether the swap-in kept the swap cache (slots still in use)
// or bypassed it (SWP_SYNCHRONOUS_IO: the slots were freed at once), which the
// trace records as a `drop-cache folio=F` after the `cache`.
Status Runner::DoCache(const TraceRecord& r, LiveFolio& f, uint64_t first, uint64_t count,
                       const std::string& where) {
  const uint64_t used_before = s_.UsedSlots();
  if (Status st = s_.worker->ReadIn(f.cpu, f.addr + first * kPage, count * kPage); !st.ok())
    return At(where, st.ToString(), st.code());
  auto pages = s_.worker->Pages(f.addr, f.pages.size());
  if (!pages.ok()) return pages.status();
  uint64_t came_in = 0, came_in_cached = 0;
  std::vector<std::pair<uint64_t, uint64_t>>
      runs;  // [first, n) of pages now present that were swapped
  for (uint64_t i = 0; i < f.pages.size(); ++i) {
    LivePage& lp = f.pages[i];
    if (!lp.swapped || !(*pages)[i].present) continue;
    lp = LivePage{false, true, true, -1, 0};  // locked below, with its run
    ++came_in;
    auto flags = Worker::PageFlags((*pages)[i].pfn);
    if (!flags.ok()) return At(where, flags.status().ToString(), flags.status().code());
    came_in_cached += (*flags >> kKpfSwapCache) & 1;
    if (!runs.empty() && runs.back().first + runs.back().second == i) {
      ++runs.back().second;
    } else {
      runs.emplace_back(i, 1);
    }
    if (i < first || i >= first + count) ++rep_.swapin_extra_pages;  // a large folio came in whole
  }
  for (const auto& [p0, n] : runs) {
    // A large folio swapped in whole brings pages that were not asked for:
    // they are locked too, or the next drop-cache would swap them out again.
    if (Status st = s_.worker->Lock(f.addr + p0 * kPage, n * kPage); !st.ok())
      return At(where, st.ToString(), st.code());
    TraceRecord c = r;
    c.page = p0;
    c.n = n;
    Emit(c);
  }
  // Whether the swap-in kept the swap cache is read from the pages
  // (KPF_SWAPCACHE), not from /proc/swaps: slots freed by the fault may wait
  // in 6.12's per-CPU return buffer (still counted), and one free may empty
  // that buffer (64 slots counted at once).
  const uint64_t used_after = s_.UsedSlots();
  const uint64_t freed = used_before > used_after ? used_before - used_after : 0;
  if (came_in > 0 && came_in_cached == 0) {
    // Bypassed: possible to express only if no other page of the folio is
    // in the swap cache (drop-cache folio=F drops all of them).
    bool others_cached = false;
    auto mc = s_.worker->Mincore(f.addr, f.pages.size() * kPage);
    if (!mc.ok()) return mc.status();
    for (uint64_t i = 0; i < f.pages.size(); ++i)
      others_cached |= f.pages[i].swapped && ((*mc)[i] & 1);
    if (others_cached) {
      Note(r.line, *r.folio,
           "the swap-in bypassed the swap cache while other pages of the folio are cached");
    } else {
      TraceRecord d;
      d.op = TraceOp::kDropCache;
      d.folio = r.folio;
      Emit(d);
      ++rep_.swapin_bypassed_cache;
    }
  } else if (came_in_cached != came_in) {
    Note(r.line, *r.folio,
         std::to_string(came_in - came_in_cached) + " of " + std::to_string(came_in) +
             " pages swapped in left the swap cache, the others stayed (" + std::to_string(freed) +
             " slots freed)");
  }
  return Status::Ok();
}

Status Runner::Apply(const TraceRecord& r) {
  const std::string where = o_.trace + ":" + std::to_string(r.line);
  switch (r.op) {
    case TraceOp::kSwapon:
      return DoSwapon(r, where);
    case TraceOp::kAlloc:
      return DoAllocs({&r, 1});
    case TraceOp::kDropCache:
      return DoDropCache(r, where);
    case TraceOp::kExpect:
    case TraceOp::kForeign:
    case TraceOp::kForeignFree:
    case TraceOp::kScanBase:
    case TraceOp::kCpus:
      return Status::Ok();  // NothingToDo
    case TraceOp::kSwapoff: {
      auto a = dev_to_area_.find(r.dev);
      if (a == dev_to_area_.end()) return At(where, "dev " + std::to_string(r.dev) + " is not on");
      WaitWriteback(r.line);
      if (Status st = s_.areas[a->second]->Swapoff(); !st.ok())
        return At(where, st.ToString(), st.code());
      int type = -1;
      for (auto& [t, d] : type_to_dev_)
        if (d == r.dev) type = t;
      for (auto& [id, f] : live_) {
        Unsettle(id, f);
        for (auto& p : f.pages)
          if (p.swapped && p.type == type) p = LivePage{false, true, false, -1, 0};
      }
      type_to_dev_.erase(type);
      dev_to_area_.erase(a);
      Emit(r);
      return Status::Ok();
    }
    case TraceOp::kFree:
    case TraceOp::kCache: {
      auto it = live_.find(*r.folio);
      if (it == live_.end()) return At(where, "folio " + std::to_string(*r.folio) + " is not live");
      LiveFolio& f = it->second;
      uint64_t first, count;
      if (!workload::RecordPageRange(r, f.pages.size(), &first, &count))
        return At(where, "pages outside a folio of " + std::to_string(f.pages.size()) + " pages");
      Unsettle(it->first, f);
      // A folio under writeback cannot leave the swap cache.
      WaitWriteback(r.line);
      if (r.op == TraceOp::kCache) return DoCache(r, f, first, count, where);
      const int cpu = f.cpu;
      if (Status st = SendFree(r, it, first, count); !st.ok()) return st;
      return FinishFree(r, cpu);
    }
    default:
      return At(where,
                std::string("'") + workload::Name(r.op) + "' is not supported by `kernel run`");
  }
}

}  // namespace swaplab::kernel
