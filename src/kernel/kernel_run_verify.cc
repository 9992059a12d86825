// SPDX-License-Identifier: MIT
// `kernel run`'s checks of the kernel against the trace: every live page
// compared with pagemap (after each drop-cache and at the end), and the
// final accounting (swap-outs counted, slots in use that no page of the
// trace holds).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runner.h"
#include "swaplab/kernel/host.h"

namespace swaplab::kernel {
namespace {

// Most pages one read of the worker's pagemap covers (512 KiB of it), and
// the most pages between two live folios it reads through: each folio is
// a mapping of its own, freed ones stay, and the kernel walks every
// mapping a read crosses.
constexpr uint64_t kMaxPagemapRead = uint64_t{1} << 16, kMaxPagemapGap = 16;

}  // namespace

Status Runner::ForEachLiveFolio(
    const std::function<void(uint64_t, LiveFolio&, std::span<const PageState>)>& fn,
    bool unsettled_only) {
  std::vector<std::pair<uint64_t, uint64_t>> by_addr;  // (address, folio id)
  by_addr.reserve(live_.size());
  if (unsettled_only) {
    for (uint64_t id : std::exchange(unsettled_, {}))
      if (auto it = live_.find(id); it != live_.end() && !it->second.settled)
        by_addr.emplace_back(it->second.addr, id);
  } else {
    for (const auto& [id, f] : live_) by_addr.emplace_back(f.addr, id);
  }
  std::sort(by_addr.begin(), by_addr.end());
  by_addr.erase(std::unique(by_addr.begin(), by_addr.end()), by_addr.end());
  for (size_t i = 0; i < by_addr.size();) {
    const uint64_t lo = by_addr[i].first;
    uint64_t hi = lo;
    size_t j = i;
    for (; j < by_addr.size(); ++j) {
      const LiveFolio& f = live_.at(by_addr[j].second);
      const uint64_t end = f.addr + f.pages.size() * kPage;
      if (j > i && ((end - lo) / kPage > kMaxPagemapRead || (f.addr - hi) / kPage > kMaxPagemapGap))
        break;
      hi = end;
    }
    auto pages = s_.worker->Pages(lo, (hi - lo) / kPage);
    if (!pages.ok()) return pages.status();
    for (size_t k = i; k < j; ++k) {
      LiveFolio& f = live_.at(by_addr[k].second);
      fn(by_addr[k].second, f,
         std::span<const PageState>(*pages).subspan((f.addr - lo) / kPage, f.pages.size()));
    }
    i = j;
  }
  return Status::Ok();
}

// Why a settled folio need not be read again (LiveFolio::settled): each
// folio is a mapping of its own, and only this run's worker touches it. A
// PTE holding a swap entry, or none, changes only by the process's own
// fault, madvise, munmap or exit, or by swapoff of the area, all of which
// the run does itself and which unsettle the folios they touch (reclaim
// leaves a swapped page's PTE alone: it only takes the folio out of the
// swap cache; khugepaged cannot collapse a mapping smaller than 2 MiB).
// A present page can be swapped out by a drop-cache's reclaim unless it is
// mlocked (try_to_unmap fails on VM_LOCKED). A folio that had a note is
// read again, so a repeated note is still written at every drop-cache.
Status Runner::Verify(uint64_t line, bool all) {
  return ForEachLiveFolio(
      [&](uint64_t id, LiveFolio& f, std::span<const PageState> pages) {
        const uint64_t notes_before = rep_.anomalies_total;
        bool reclaimable = false;  // a present page reclaim may still swap out
        for (size_t i = 0; i < f.pages.size(); ++i) {
          reclaimable |= pages[i].present && !f.pages[i].locked;
          VerifyPage(line, id, i, pages[i], f.pages[i]);
        }
        f.settled = !reclaimable && rep_.anomalies_total == notes_before;
        if (!f.settled) unsettled_.push_back(id);
      },
      !all);
}

void Runner::VerifyPage(uint64_t line, uint64_t id, size_t i, const PageState& p,
                        const LivePage& lp) {
  if (lp.swapped && (!p.swapped || p.swap_type != lp.type || p.swap_offset != lp.offset)) {
    Note(line, id, "page " + std::to_string(i) + " left its slot on its own");
  } else if (!lp.swapped && p.swapped) {
    Note(line, id,
         "page " + std::to_string(i) + " was swapped out by the kernel on its own (type " +
             std::to_string(p.swap_type) + " offset " + std::to_string(p.swap_offset) + ")");
  }
}

// The end: everything the kernel did on its own shows up now.
Status Runner::FinishRecords(const Baseline& base) {
  WaitWriteback(0);
  (void)WaitForWriteback(o_.writeback_timeout_ms);
  Status st = Verify(0, true);
  CountSwapouts(base);
  // Slots in use that no page of the trace holds (after dropping the
  // clean swap cache): the kernel swapped something else to our areas.
  if (st.ok() && !s_.cgroup.empty()) (void)s_.DropCache();
  CountUnexplainedSlots();
  return st;
}

void Runner::CountSwapouts(const Baseline& base) {
  const auto after = ReadMthpStats();
  for (const auto& [k, v] : after.swpout) {
    const uint64_t d = v - base.mthp.swpout.at(k),
                   fb = after.swpout_fallback.at(k) - base.mthp.swpout_fallback.at(k);
    if (d || fb) {
      rep_.swpout[k] = d;
      rep_.swpout_fallback[k] = fb;
    }
  }
  if (auto p1 = ReadVmstat("pswpout"); p1.ok() && base.pswpout.ok())
    rep_.pswpout = *p1 - *base.pswpout;
  if (auto d1 = ReadVmstat("pgdeactivate"); d1.ok() && base.pgdeactivate.ok())
    rep_.lru_deactivated = *d1 - *base.pgdeactivate;
}

void Runner::CountUnexplainedSlots() {
  uint64_t held = 0;
  (void)ForEachLiveFolio([&](uint64_t, LiveFolio& f, std::span<const PageState> pages) {
    for (size_t i = 0; i < f.pages.size(); ++i) held += pages[i].swapped || f.pages[i].in_memory;
  });
  const uint64_t used = s_.UsedSlots();
  std::string first;
  if (used > held) rep_.worker_pages_swapped = WorkerOwnSwapped(&first);
  if (rep_.worker_pages_swapped)
    Note(0, 0,
         std::to_string(rep_.worker_pages_swapped) +
             " of the worker's own pages were swapped out by the final "
             "cgroup reclaim (first: " +
             first + ")");
  held += rep_.worker_pages_swapped;
  // Slots the watch accounts to someone else: `foreign` slots still held,
  // and interference it could not place.
  if (watch_) held += watch_->model().runner().foreign_slots();
  if (auto model_used = ModelUsedAfterFinalReclaim()) held = std::max(held, *model_used);
  for (const auto& [dev, n] : unaccounted_) held += n > 0 ? static_cast<uint64_t>(n) : 0;
  rep_.unexplained_slots = used > held ? used - held : 0;
  if (rep_.unexplained_slots)
    Note(0, 0,
         std::to_string(rep_.unexplained_slots) + " slots in use that no page of the trace holds");
}

// Swapped pages of the worker outside the trace's folios (its own memory:
// stack, heap, sanitizer shadow), and the first such mapping.
uint64_t Runner::WorkerOwnSwapped(std::string* first) const {
  std::ifstream maps("/proc/" + std::to_string(s_.worker->pid()) + "/maps");
  std::string line;
  uint64_t count = 0;
  while (std::getline(maps, line)) {
    uint64_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || hi <= lo) continue;
    if (lo >= s_.worker->base() && hi <= cursor_ + kPage) continue;  // trace folios
    if (hi - lo > (uint64_t{1} << 30)) {  // sanitizer shadow and allocator regions: too big to walk
      count += SmapsSwapPages(lo);        // the kernel's own count of the mapping's swapped pages
      continue;
    }
    for (uint64_t a = lo; a < hi; a += 512 * kPage) {
      const uint64_t n = std::min<uint64_t>(512, (hi - a) / kPage);
      auto pages = s_.worker->Pages(a, n);
      if (!pages.ok()) break;
      for (uint64_t i = 0; i < n; ++i) {
        if (!(*pages)[i].swapped || !type_to_dev_.count((*pages)[i].swap_type)) continue;
        if (count++ == 0) *first = fmt_hex(a + i * kPage) + " in " + line;
      }
    }
  }
  return count;
}

// "Swap:" of the worker's mapping that starts at `lo`, in pages
// (/proc/PID/smaps): for mappings of terabytes (ASan's allocator) a page
// walk is out of the question. Counts swap on any device: only ours is
// written during a run but a host's own swap could be too.
uint64_t Runner::SmapsSwapPages(uint64_t lo) const {
  std::ifstream smaps("/proc/" + std::to_string(s_.worker->pid()) + "/smaps");
  std::string line;
  bool in = false;
  while (std::getline(smaps, line)) {
    uint64_t a = 0, b = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 && line.find(' ') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      in = a == lo;
      continue;
    }
    unsigned long kb = 0;
    if (in && std::sscanf(line.c_str(), "Swap: %lu kB", &kb) == 1) return kb / (kPage / 1024);
  }
  return 0;
}

// What the model holds besides the trace's pages after the same reclaim:
// slots a slot cache took ahead (<= 6.14), or waiting in its return buffer.
std::optional<uint64_t> Runner::ModelUsedAfterFinalReclaim() {
  if (!watch_) return std::nullopt;
  workload::TraceRecord drop;
  drop.op = TraceOp::kDropCache;
  if (!watch_->model().runner().Apply(drop, "the final reclaim").ok()) return std::nullopt;
  uint64_t model_used = 0;
  for (const auto& [dev, i] : dev_to_area_) model_used += watch_->model().InUse(dev);
  return model_used;
}

}  // namespace swaplab::kernel
