// SPDX-License-Identifier: MIT
// Text the report layer shows that came from outside (paths, names,
// titles, a guest's console, error messages): escaped once, the same way,
// by every report file (internal to src/report/).
#pragma once

#include <string>
#include <vector>

#include "swaplab/alloc/printable.h"

namespace swaplab::report {

// `s` escaped for a terminal and kept valid UTF-8 for JSON, never cut
// below PATH_MAX (Printable(s, kPathMax)): a path or a message naming one.
inline std::string PrintablePath(const std::string& s) { return Printable(s, kPathMax); }

// Each of `v` as PrintablePath.
inline std::vector<std::string> PrintablePaths(std::vector<std::string> v) {
  for (auto& s : v) s = PrintablePath(s);
  return v;
}

}  // namespace swaplab::report
