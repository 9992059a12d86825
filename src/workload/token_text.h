// Untrusted text (a trace token, a JSON key or string) as it may appear in
// an error message: cut to a bounded length and with every byte that is not
// printable ASCII written as \xNN, so that a 10 MB token or a terminal
// escape sequence in a file never reaches the terminal whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace swaplab::workload {

// Bytes of a token kept in messages; a longer token ends in "…".
inline constexpr size_t kMaxTokenInMessage = 64;

inline std::string TokenText(std::string_view s, size_t max = kMaxTokenInMessage) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  const size_t n = s.size() < max ? s.size() : max;
  out.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x20 && u < 0x7f && u != '\\') {
      out += static_cast<char>(u);
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  if (s.size() > max) out += "…";
  return out;
}

}  // namespace swaplab::workload
