// Text that came from input — a trace token, a JSON key, a path, an area's
// label, a string inside an image — made safe for a terminal and bounded
// for a message: every layer's parser messages and the command line's
// output use this one function.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <string>
#include <string_view>

namespace swaplab {

// Bytes of an input token kept in a parser's error message (traces,
// scenario files); a longer token is cut.
inline constexpr size_t kMaxTokenInMessage = 64;

// Printable ASCII as it is, a backslash doubled, every other byte (control
// characters and terminal escapes, NUL, bytes >= 0x80) as \xNN; at most
// max_bytes of `s`, a longer one cut and ended with "… (N more bytes)", so
// that a 10 MB token stays a line.
inline std::string Printable(std::string_view s, size_t max_bytes = 256) {
  static constexpr char kHex[] = "0123456789abcdef";
  const size_t n = s.size() < max_bytes ? s.size() : max_bytes;
  std::string out;
  out.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u == '\\') {
      out += "\\\\";
    } else if (u >= 0x20 && u < 0x7f) {
      out += static_cast<char>(u);
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  if (s.size() > n) out += "… (" + std::to_string(s.size() - n) + " more bytes)";
  return out;
}

}  // namespace swaplab
#pragma GCC visibility pop
