// The two device states of the RFC's results tables (seed 001, "Results"),
// built with direct allocator calls and scaled to any device size:
//   shuffled — "6G swap, 5.4G of 2M tmpfs files swapped out, then all
//              removed in random order": 90% of the device swapped out as
//              2 MiB files of order-0 pages, then the files freed in a
//              seeded random order, so the free list is in free order;
//   holes    — "12G swap, one 4G file swapped out, every other 64K of it
//              freed": a third of the device swapped out as order-0 pages,
//              then every other 16-page (64 KiB) piece of the file freed.
// Small on purpose: the workload layer has the general generators.
#pragma once

#include <cstdint>
#include <string_view>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::hibernate {

enum class RfcLayout { kFresh, kShuffled, kHoles };
Result<RfcLayout> ParseRfcLayout(std::string_view s);  // "fresh" | "shuffled" | "holes"
const char* Name(RfcLayout l);

struct LayoutReport {
  uint64_t pages_swapped_out = 0;  // order-0 pages allocated
  uint64_t pages_left = 0;         // still allocated at the end
};

// Applies `layout` to device `type` (fresh: nothing). Pages are swapped out
// as reclaim does (folio_alloc_swap, one swap-count reference as the page
// table's, the folio dropped from the swap cache) from `cpu`; freeing zaps
// the references. -ENOSPC if the device cannot hold the layout.
Result<LayoutReport> ApplyRfcLayout(alloc::SwapSystem& sys, int type, RfcLayout layout, uint64_t seed = 1,
                                    alloc::CpuId cpu = 0);

}  // namespace swaplab::hibernate
