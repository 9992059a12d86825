// SPDX-License-Identifier: MIT
// `area format --bad`'s list (bad_pages.h).
#include "swaplab/area/bad_pages.h"

#include "swaplab/area/swap_header.h"

namespace swaplab::area {

Result<std::vector<uint32_t>> ParseBadPageList(const std::string& s) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(pos, end - pos);
    const size_t dash = item.find('-');
    auto num = [&](const std::string& t) -> Result<uint32_t> {
      if (t.empty() || t.size() > 10 || t.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(t) > UINT32_MAX)
        return Status(-EINVAL, "--bad: \"" + item + "\" is not a page number or a range A-B");
      return static_cast<uint32_t>(std::stoull(t));
    };
    auto a = num(item.substr(0, dash));
    if (!a.ok()) return a.status();
    uint32_t b = *a;
    if (dash != std::string::npos) {
      auto r = num(item.substr(dash + 1));
      if (!r.ok()) return r.status();
      b = *r;
      if (b < *a || b - *a >= kMaxSwapBadpages)
        return Status(-EINVAL, "--bad: range \"" + item + "\" is empty or too long");
    }
    for (uint64_t p = *a; p <= b; ++p) out.push_back(static_cast<uint32_t>(p));
    pos = end + 1;
  }
  return out;
}

}  // namespace swaplab::area
