// Helpers shared by the swap-area sources (not part of the contract).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/area/io_engine.h"
#include "swaplab/area/swap_area.h"

namespace swaplab::area::internal {

// Counts extents, the largest one and whether the pages [0, pages) are not
// all covered.
ExtentSummary Summarize(const std::vector<alloc::SwapExtent>& extents, uint64_t pages);

// The first page in [0, pages) no extent covers, or `pages` when none.
uint64_t FirstHole(const std::vector<alloc::SwapExtent>& extents, uint64_t pages);

// read / write the whole buffer at `off`, retrying short transfers and
// EINTR; errors say what failed where.
Status PreadAll(int fd, void* buf, size_t n, uint64_t off, const std::string& what);
Status PwriteAll(int fd, const void* buf, size_t n, uint64_t off, const std::string& what);

// −errno with "<what>: <strerror>".
Status Errno(int err, const std::string& what);

}  // namespace swaplab::area::internal
