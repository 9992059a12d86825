// SPDX-License-Identifier: MIT
// `swaplab area format|inspect`'s result: every header field, the extent
// map, the hibernation image's summary and swapon's verdict, as "field
// value" text, field,value CSV or one JSON document (hibernation spec §1).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>

#include "swaplab/hibernate/area_image.h"

namespace swaplab::report {

// At most `max_extents` extents listed.
std::string AreaText(const hibernate::AreaWithImage& a, uint64_t max_extents);
std::string AreaCsv(const hibernate::AreaWithImage& a);
std::string AreaJson(const hibernate::AreaWithImage& a);
// What mkswap prints for a new area, and a warning when swapon would
// refuse it.
std::string AreaFormatText(const hibernate::AreaWithImage& a);

}  // namespace swaplab::report
#pragma GCC visibility pop
