// SPDX-License-Identifier: MIT
// Sizes as a user writes them, on the command line (--size, --swap, ...)
// and in scenario files ("6G", "5530M", "7.5G"): one parser for both.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string_view>

#include "swaplab/alloc/status.h"

namespace swaplab::workload {

// Bytes from a number and a unit. The number: decimal digits, optionally
// with a fraction ("7.5"). The unit, any case: none or "B" (bytes), "K",
// "M", "G" or "T" (2^10 .. 2^40), each alone or followed by "B" or "iB"
// ("64k", "2MiB", "1GB" are 2^16, 2^21, 2^30 bytes). A fractional size is
// rounded to whole 4 KiB pages; a whole one is taken as written.
// -EINVAL naming what is wrong: no number, an unknown unit, or too large
// (above 2^64 − 1 bytes; 2^63 with a point).
Result<uint64_t> ParseSize(std::string_view s);
// Pages: a plain number is a count of pages ("1000"), a number with a unit
// is bytes and must be a whole number of 4 KiB pages ("64M").
Result<uint64_t> ParseSizeOrPages(std::string_view s);

}  // namespace swaplab::workload
#pragma GCC visibility pop
