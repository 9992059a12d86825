// SPDX-License-Identifier: MIT
// The reclaim caller's side of a swap-out (allocator spec §2.10; kernel:
// mm/vmscan.c shrink_folio_list): allocate, or split and place each page.
#include <span>
#include <string>

#include "alloc/system_state.h"

namespace swaplab::alloc {

Result<SwapOutResult> SwapSystem::SwapOutFolio(CpuId cpu, Folio& folio,
                                               std::span<Folio* const> split_pages) {
  State& s = *s_;
  const int k = folio.order();
  if (k > 0 && split_pages.size() != static_cast<size_t>(1) << k && k <= s.pmd_order)
    return Status(-EINVAL, "swap out: an order-" + std::to_string(k) + " folio needs " +
                               std::to_string(1 << k) + " split pages, got " +
                               std::to_string(split_pages.size()));
  // Validate and lock the split pages in one pass: a page listed twice is
  // met already locked by this pass, so no sorted copy is needed. On an
  // error the pages this pass locked are unlocked again: bad input changes
  // nothing. split_folio_to_list() hands the new folios back locked and
  // reclaim keeps them locked until each is written, so no placement of
  // this call can reclaim a page placed earlier in it (TryReclaim only
  // trylocks); here they are locked from the start, which changes nothing
  // while the folio is placed whole (split pages are not in the swap cache,
  // so no reclaim looks at them).
  struct SplitLocks {
    std::span<Folio* const> pages;
    size_t n = 0;
    ~SplitLocks() {
      for (size_t i = 0; i < n; ++i) pages[i]->Unlock();
    }
  } locks{split_pages};
  for (Folio* p : split_pages) {
    if (p == nullptr || p->order() != 0 || p->in_swap_cache() || !p->TryLock()) {
      if (p != nullptr &&
          std::find(split_pages.begin(), split_pages.begin() + static_cast<std::ptrdiff_t>(locks.n),
                    p) != split_pages.begin() + static_cast<std::ptrdiff_t>(locks.n))
        return Status(-EINVAL, "swap out: the same folio is listed twice among the split pages");
      return Status(-EINVAL,
                    "swap out: split pages must be unlocked order-0 folios out of the "
                    "swap cache");
    }
    ++locks.n;
  }
  Status st = FolioAllocSwap(cpu, folio);
  if (st.ok()) {
    s.swpout[k].fetch_add(1, std::memory_order_relaxed);
    s.pswpout.fetch_add(folio.nr_pages(), std::memory_order_relaxed);
    if (k == s.pmd_order && k > 0) s.thp_swpout.fetch_add(1, std::memory_order_relaxed);
    return SwapOutResult{false, folio.nr_pages()};
  }
  if (st.code() != -ENOMEM || k == 0) {
    if (st.code() == -ENOMEM) return SwapOutResult{false, 0};
    return st;
  }
  // Mirrors shrink_folio_list(): split, count the fallback, retry at order 0.
  if (k == s.pmd_order) s.thp_swpout_fallback.fetch_add(1, std::memory_order_relaxed);
  s.swpout_fallback[k].fetch_add(1, std::memory_order_relaxed);
  SwapOutResult res{true, 0};
  // Page 0 first, then the tails in the order reclaim meets them (policy
  // split_tails_last_first, §2.10).
  const size_t n = split_pages.size();
  auto page_at = [&](size_t i) -> Folio& {
    if (i == 0 || !s.policy.split_tails_last_first) return *split_pages[i];
    return *split_pages[n - i];
  };
  for (size_t i = 0; i < n; ++i) {
    Folio* p = &page_at(i);
    if (FolioAllocSwap(cpu, *p).ok()) {
      s.swpout[0].fetch_add(1, std::memory_order_relaxed);
      s.pswpout.fetch_add(1, std::memory_order_relaxed);
      ++res.pages_placed;
    }
  }
  return res;  // `locks` unlocks the split pages
}

}  // namespace swaplab::alloc
