// Runs trace records against a SwapSystem with the caller behaviour of one
// private anonymous mapping (design.md "Semantics"; allocator spec §2.10,
// §3): swap-out with the reclaim fallback, zap, swap-in, cache drop, fork.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/trace.h"

namespace swaplab::workload {

struct Disagreement {
  uint64_t line = 0;
  uint64_t folio = 0, page = 0;
  uint64_t expected_dev = 0, expected_offset = 0;
  std::string got;  // "dev 0 offset 1234", or "not in swap"
};

struct ReplaySummary {
  uint64_t records = 0;
  uint64_t folios = 0;          // alloc records
  uint64_t pages_placed = 0;    // pages that got a slot at swap-out
  uint64_t pages_unplaced = 0;  // pages that stayed in memory (no slot)
  uint64_t folio_runs = 0;      // Σ contiguous slot runs per allocated folio
  uint64_t expected = 0, agree = 0;
  std::vector<Disagreement> disagreements;  // the first ones
  uint64_t skipped_cache_drops = 0;         // refused while storage suspended
};

class TraceRunner {
 public:
  // `dev` ids of the trace map to device types in swapon order.
  explicit TraceRunner(alloc::SwapSystem& sys, size_t keep_disagreements = 20);
  ~TraceRunner();
  // Applies one record; errors name the trace line (FILE:LINE: ...).
  Status Apply(const TraceRecord& r, const std::string& trace_name = "trace");
  const ReplaySummary& summary() const { return sum_; }
  // The slot of page `page` of a live folio; invalid (offset 0) when the
  // folio is unknown or the page is not in swap.
  alloc::SwapEntry SlotOf(uint64_t folio, uint64_t page) const;
  // Whether folio `id` is live (allocated and not yet forgotten).
  bool Live(uint64_t id) const { return folios_.count(id) != 0; }
  // Trace device id → device type.
  const std::map<uint64_t, int>& devices() const { return devs_; }

  // A record's place, FILE:LINE in messages.
  struct Where {
    const std::string* trace;
    uint64_t line;
  };

 private:
  struct Page {
    alloc::SwapEntry slot{};
    alloc::Folio* cache = nullptr;  // the swap-cache folio holding the slot
    uint32_t refs = 0;              // swap references the mapping holds
    bool in_memory = false;         // mapped in memory
  };
  // A folio of the mapping: one page held inline (order 0), or a page
  // array of 2^order used again for later folios of that order.
  struct TFolio {
    int order = 0;
    Page one;
    std::vector<Page> many;
    std::span<Page> pages() {
      return order == 0 ? std::span<Page>(&one, 1) : std::span<Page>(many);
    }
    std::span<const Page> pages() const {
      return order == 0 ? std::span<const Page>(&one, 1) : std::span<const Page>(many);
    }
  };
  Status DoAlloc(const TraceRecord& r, const Where& where);
  Status DoFree(const TraceRecord& r, TFolio& f, const Where& where);
  Status DoCache(const TraceRecord& r, TFolio& f, const Where& where);
  // keep_mapped: reclaim (a global drop) leaves mapped folios in the cache.
  Status DoDropCache(TFolio& f, const Where& where, bool keep_mapped);
  Status DoSwapoff(const TraceRecord& r, const Where& where);
  alloc::Folio* NewFolio(int order);
  void Release(alloc::Folio* f);
  // The distinct cache folios `pages` refer to, in page order, into *out.
  void CacheFolios(std::span<const Page> pages, std::vector<alloc::Folio*>* out);
  // The iteration order of this map decides the order of a global
  // drop-cache and of swapoff, and so placements: keep its type.
  using FolioMap = std::unordered_map<uint64_t, TFolio>;
  void ForgetIfDone(uint64_t id);
  void ForgetIfDone(FolioMap::iterator it);

  alloc::SwapSystem& sys_;
  size_t keep_;
  ReplaySummary sum_;
  std::map<uint64_t, int> devs_;
  FolioMap folios_;
  std::vector<std::unique_ptr<alloc::Folio>> pool_;  // cache folios, kept alive
  std::vector<alloc::Folio*> spare_;     // order-0 folios of pool_ never put in the swap cache
  std::vector<alloc::Folio*> released_;  // folios of pool_ no page refers to any more
  std::vector<std::vector<Page>> spare_pages_[16];  // page arrays of forgotten folios, by order
  // Scratch lists kept from record to record (no allocation per record).
  std::vector<alloc::Folio*> caches_, split_, touched_;
  std::vector<FolioMap::iterator> drop_;
};

}  // namespace swaplab::workload
#pragma GCC visibility pop
