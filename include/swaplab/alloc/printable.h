// SPDX-License-Identifier: MIT
// Text that came from input — a trace token, a JSON key, a path, an area's
// label, a string inside an image — made safe for a terminal and bounded
// for a message: every layer's parser messages and the command line's
// output use this one function.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace swaplab {

// Bytes of an input token kept in a parser's error message (traces,
// scenario files); a longer token is cut.
inline constexpr size_t kMaxTokenInMessage = 64;
// PATH_MAX: bytes of a path, or of a message that names one, kept when it
// is shown (Printable(path, kPathMax)): a path is never cut.
inline constexpr size_t kPathMax = 4096;

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

// Length of the valid UTF-8 sequence at s[i]: 1-4, or 0 when the bytes
// there are not one (a lone continuation or lead byte, an overlong form, a
// surrogate, beyond U+10FFFF, or U+FFFE/U+FFFF, which are no XML
// characters). The SVG, HTML and CSV writers keep only such sequences.
inline size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (b < 0x80) return 1;
  if ((b & 0xe0) == 0xc0) {
    n = 2;
    cp = b & 0x1f;
  } else if ((b & 0xf0) == 0xe0) {
    n = 3;
    cp = b & 0x0f;
  } else if ((b & 0xf8) == 0xf0) {
    n = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  if (cp == 0xfffe || cp == 0xffff) return 0;  // not XML characters
  return n;
}

}  // namespace swaplab
#pragma GCC visibility pop
