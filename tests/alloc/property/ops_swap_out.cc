// SPDX-License-Identifier: MIT
// SwapOutFolio (src/alloc/swap_out.cc, allocator spec §2.10): a folio
// placed whole, or split and placed page by page, with the counters of
// each outcome.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

void Harness::OpSwapOut(const OpSpec& op) {
  int k = op.a % 3 == 0 ? 0 : 1 + static_cast<int>((op.a / 3) % cfg_.cluster_shift);
  if (k != 0 && !policy_.mthp_swap) k = cfg_.cluster_shift;  // 6.1: no mTHP folios
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

}  // namespace swaplab::alloc::model
