// SPDX-License-Identifier: MIT
// The bad pages of a new swap area as a user lists them (`area format
// --bad`): page numbers and ranges, "5,9,100-103" → {5, 9, 100, 101, 102,
// 103}. A range holds fewer than kMaxSwapBadpages pages (mkswap's bound on
// the header's list, swap_header.h).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"

namespace swaplab::area {

Result<std::vector<uint32_t>> ParseBadPageList(const std::string& s);

}  // namespace swaplab::area
#pragma GCC visibility pop
