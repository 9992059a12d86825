// SPDX-License-Identifier: MIT
// A small XML writer for SVG and XHTML output: elements, attributes and
// text, every value escaped; bytes that are not valid UTF-8 or not allowed
// in XML 1.0 are replaced, so whatever came from input (scenario names,
// labels, file names) cannot break the document or add markup.
#pragma once
#pragma GCC visibility push(default)

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swaplab::report {

// `s` as XML character data or attribute value: & < > " ' escaped, invalid
// UTF-8 and control characters other than tab and newline as U+FFFD.
std::string XmlEscape(std::string_view s);

using XmlAttrs = std::initializer_list<std::pair<std::string_view, std::string_view>>;

class XmlWriter {
 public:
  explicit XmlWriter(std::string* out) : out_(out) {}
  // <tag a="v" ...>, closed by Close().
  XmlWriter& Open(std::string_view tag, XmlAttrs attrs = {});
  // <tag a="v" .../>
  XmlWriter& Empty(std::string_view tag, XmlAttrs attrs = {});
  // <tag a="v" ...>text</tag>
  XmlWriter& Leaf(std::string_view tag, XmlAttrs attrs, std::string_view text);
  XmlWriter& Text(std::string_view text);
  // Markup made by another XmlWriter (never input).
  XmlWriter& Raw(std::string_view markup);
  XmlWriter& Close();
  // Closes every open element.
  void Finish();

 private:
  void Start(std::string_view tag, XmlAttrs attrs);
  std::string* out_;
  std::vector<std::string> open_;
};

// A number for an attribute: at most `decimals` decimals, no trailing zeros.
std::string Num(double v, int decimals = 2);

}  // namespace swaplab::report
#pragma GCC visibility pop
