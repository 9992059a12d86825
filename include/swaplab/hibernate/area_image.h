// SPDX-License-Identifier: MIT
// A swap area as `area inspect` shows it: its header and extent map
// (area::InspectArea), whether swapon would take it (area::ValidateArea),
// and, when page 0 says a hibernation image is there, the image's
// swsusp_info and map chain read-only (InspectImage).
#pragma once
#pragma GCC visibility push(default)

#include <optional>
#include <string>

#include "swaplab/alloc/status.h"
#include "swaplab/area/swap_area.h"
#include "swaplab/hibernate/image_chain.h"

namespace swaplab::hibernate {

struct AreaWithImage {
  area::AreaInfo area;
  Status swapon;  // ValidateArea's verdict
  // Set when page 0 holds a swsusp signature; an unreadable image is its
  // error here, not an error of the inspection.
  std::optional<Result<ImageInspection>> image;
};

Result<AreaWithImage> InspectAreaWithImage(const std::string& path);

}  // namespace swaplab::hibernate
#pragma GCC visibility pop
