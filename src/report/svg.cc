// SPDX-License-Identifier: MIT
// The XML writer (svg.h).
#include "swaplab/report/svg.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>

#include "swaplab/alloc/printable.h"

namespace swaplab::report {

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
