#include "text.h"

#include <fmt/core.h>

namespace swaplab::tools {

std::string Printable(std::string_view s, size_t max_bytes) {
  std::string out;
  const size_t n = std::min(s.size(), max_bytes);
  for (size_t i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u == '\\') out += "\\\\";
    else if (u >= 0x20 && u < 0x7f) out += static_cast<char>(u);
    else out += fmt::format("\\x{:02x}", u);
  }
  if (s.size() > n) out += fmt::format("… ({} more bytes)", s.size() - n);
  return out;
}

}  // namespace swaplab::tools
