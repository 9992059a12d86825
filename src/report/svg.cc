// The XML writer (svg.h).
#include "swaplab/report/svg.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>

namespace swaplab::report {

namespace {

// Length of the valid UTF-8 sequence at s[i] (0 if invalid).
size_t Utf8Length(std::string_view s, size_t i) {
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

}  // namespace

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 && c != '\t' && c != '\n') {
          out += "\xef\xbf\xbd";
          break;
        }
        const size_t n = Utf8Length(s, i);
        // C1 controls (U+0080..U+009F; U+009B is a terminal's CSI) and DEL
        // are no text either.
        const bool c1 = n == 2 && b == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
        if (c1 || b == 0x7f) {
          out += "\xef\xbf\xbd";
          i += n == 0 ? 1 : n;
          continue;
        }
        if (n == 0) {
          out += "\xef\xbf\xbd";
          break;
        }
        out.append(s.substr(i, n));
        i += n;
        continue;
      }
    }
    ++i;
  }
  return out;
}

void XmlWriter::Start(std::string_view tag, XmlAttrs attrs) {
  *out_ += '<';
  out_->append(tag);
  for (const auto& [k, v] : attrs) {
    *out_ += ' ';
    out_->append(k);
    *out_ += "=\"";
    *out_ += XmlEscape(v);
    *out_ += '"';
  }
}

XmlWriter& XmlWriter::Open(std::string_view tag, XmlAttrs attrs) {
  Start(tag, attrs);
  *out_ += ">";
  open_.emplace_back(tag);
  return *this;
}

XmlWriter& XmlWriter::Empty(std::string_view tag, XmlAttrs attrs) {
  Start(tag, attrs);
  *out_ += "/>";
  return *this;
}

XmlWriter& XmlWriter::Leaf(std::string_view tag, XmlAttrs attrs, std::string_view text) {
  Start(tag, attrs);
  *out_ += '>';
  *out_ += XmlEscape(text);
  *out_ += "</";
  out_->append(tag);
  *out_ += '>';
  return *this;
}

XmlWriter& XmlWriter::Text(std::string_view text) {
  *out_ += XmlEscape(text);
  return *this;
}

XmlWriter& XmlWriter::Raw(std::string_view markup) {
  out_->append(markup);
  return *this;
}

XmlWriter& XmlWriter::Close() {
  if (open_.empty()) return *this;
  *out_ += "</" + open_.back() + ">\n";
  open_.pop_back();
  return *this;
}

void XmlWriter::Finish() {
  while (!open_.empty()) Close();
}

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace swaplab::report
