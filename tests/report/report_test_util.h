// SPDX-License-Identifier: MIT
// Shared by the report tests: input text no renderer may pass through as
// it is, and checks that an output is safe for its medium (terminal text,
// CSV, SVG / HTML).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/printable.h"

namespace swaplab::report::report_test {

// A terminal escape (ESC [ and the C1 CSI), a control byte, DEL, a byte
// that is no UTF-8, markup and both quotes, a CSV comma and a newline.
inline constexpr std::string_view kHostile = "x\x1b[31m\x01\x7f\xff\xc2\x9b<b>&\"',\ny";

// `s` with a newline only where a line ends: every byte printable ASCII or
// part of a valid UTF-8 character other than a C1 control.
inline bool TerminalSafe(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == '\n' || (b >= 0x20 && b < 0x7f)) {
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s, i);
    if (b < 0x80 || n == 0) return false;
    if (b == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) return false;
    i += n;
  }
  return true;
}

// `j` dumped as its command prints it and parsed back; a dump that throws
// (a string that is not UTF-8) or text unsafe for a terminal is a failure.
inline nlohmann::json Redump(const nlohmann::ordered_json& j) {
  std::string text;
  try {
    text = j.dump();
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << e.what();
    return nullptr;
  }
  EXPECT_TRUE(TerminalSafe(text)) << text;
  return nlohmann::json::parse(text);
}

// XML character data throughout: TerminalSafe (tabs allowed too).
inline bool XmlCharsSafe(std::string_view s) {
  std::string t(s);
  for (char& c : t)
    if (c == '\t') c = ' ';
  return TerminalSafe(t);
}

// One CSV document (RFC 4180: quoted cells, "" for a quote) as rows of
// cells; a quoted cell may hold commas and newlines.
inline std::vector<std::vector<std::string>> ParseCsv(std::string_view s) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"' && cell.empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (c == ',' || c == '\n') {
      rows.back().push_back(cell);
      cell.clear();
      was_quoted = false;
      if (c == '\n') rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (!cell.empty() || !rows.back().empty()) rows.back().push_back(cell);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

// Markup whose elements nest and close, whose attribute values are quoted
// and whose every '&' starts one of XmlEscape's entities; "" when it is
// so, else what is wrong. <!DOCTYPE ...> and HTML's void <meta> pass.
inline std::string WellFormed(std::string_view s) {
  std::vector<std::string> open;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&') {
      bool entity = false;
      for (std::string_view e : {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"})
        entity |= s.substr(i, e.size()) == e;
      if (!entity) return "a bare & at " + std::to_string(i);
      continue;
    }
    if (s[i] == '>') return "a bare > at " + std::to_string(i);
    if (s[i] != '<') continue;
    size_t j = i + 1;
    bool quoted = false;
    for (; j < s.size() && (quoted || s[j] != '>'); ++j) {
      if (s[j] == '"') quoted = !quoted;
      if (!quoted && (s[j] == '<' || s[j] == '\''))
        return "a < or ' in a tag at " + std::to_string(j);
    }
    if (j == s.size()) return "a tag left open at " + std::to_string(i);
    const std::string_view tag = s.substr(i + 1, j - i - 1);
    const std::string name(tag.substr(0, tag.find_first_of(" />")));
    if (tag.starts_with("!DOCTYPE") || tag.ends_with("/") || name == "meta") {
    } else if (tag.starts_with("/")) {
      if (open.empty() || "/" + open.back() != tag)
        return "<" + std::string(tag) + "> closes nothing open";
      open.pop_back();
    } else {
      open.push_back(name);
    }
    i = j;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

}  // namespace swaplab::report::report_test
