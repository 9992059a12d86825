// SPDX-License-Identifier: MIT
// The XML writer under every SVG and HTML output: each value escaped as
// XML text or attribute, bytes that are no XML character replaced, and
// numbers for attributes without trailing zeros.
#include "swaplab/report/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

constexpr std::string_view kFffd = "\xef\xbf\xbd";

std::string Fffd(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += kFffd;
  return s;
}

TEST(XmlEscape, MarkupAndBothQuotesBecomeEntities) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST(XmlEscape, AnEntityInTheInputIsEscapedAgain) { EXPECT_EQ(XmlEscape("&lt;"), "&amp;lt;"); }

TEST(XmlEscape, TabAndNewlineStay) { EXPECT_EQ(XmlEscape("a\tb\nc"), "a\tb\nc"); }

TEST(XmlEscape, ControlBytesAndEscBecomeReplacementCharacters) {
  EXPECT_EQ(XmlEscape(std::string_view("\x00x", 2)), Fffd(1) + "x");
  EXPECT_EQ(XmlEscape("x\x01y"), "x" + Fffd(1) + "y");
  EXPECT_EQ(XmlEscape("\x1b[31mred"), Fffd(1) + "[31mred");
  EXPECT_EQ(XmlEscape("\r"), Fffd(1));
}

TEST(XmlEscape, DelAndC1ControlsBecomeReplacementCharacters) {
  EXPECT_EQ(XmlEscape("a\x7f"
                      "b"),
            "a" + Fffd(1) + "b");
  EXPECT_EQ(XmlEscape("\xc2\x9b"
                      "31m"),
            Fffd(1) + "31m");  // U+009B, a terminal's CSI
  EXPECT_EQ(XmlEscape("\xc2\x80"), Fffd(1));
  EXPECT_EQ(XmlEscape("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is text
}

TEST(XmlEscape, InvalidUtf8BecomesOneReplacementPerByte) {
  EXPECT_EQ(XmlEscape("\xff\xc3\xa9"), Fffd(1) + "\xc3\xa9");  // bad byte, then é
  EXPECT_EQ(XmlEscape("\xc0\xaf"), Fffd(2));                   // overlong '/'
  EXPECT_EQ(XmlEscape("\xed\xa0\x80"), Fffd(3));               // a surrogate
  EXPECT_EQ(XmlEscape("a\xe2\x82"), "a" + Fffd(2));            // cut short at the end
  EXPECT_EQ(XmlEscape("\xf4\x90\x80\x80"), Fffd(4));           // past U+10FFFF
}

TEST(XmlEscape, NonCharactersFffeAndFfffAreReplaced) {
  EXPECT_EQ(XmlEscape("\xef\xbf\xbe"), Fffd(3));
  EXPECT_EQ(XmlEscape("\xef\xbf\xbf"), Fffd(3));
}

TEST(XmlEscape, ValidMultibyteCharactersStay) {
  EXPECT_EQ(XmlEscape("\xe2\x80\x94 \xf0\x9f\x92\xbe"), "\xe2\x80\x94 \xf0\x9f\x92\xbe");
}

TEST(XmlEscape, HostileInputComesOutAsCharacterData) {
  const std::string e = XmlEscape(report_test::kHostile);
  EXPECT_TRUE(report_test::XmlCharsSafe(e)) << e;
  EXPECT_EQ(e.find_first_of("<>\"'"), std::string::npos) << e;
  EXPECT_NE(e.find("&lt;b&gt;&amp;&quot;&#39;,\ny"), std::string::npos) << e;
}

TEST(XmlWriter, ElementsNestAndFinishClosesThemInOrder) {
  std::string out;
  XmlWriter w(&out);
  w.Open("svg", {{"width", "10"}}).Open("g").Empty("rect", {{"x", "1"}, {"y", "2"}});
  w.Leaf("text", {}, "t").Text(" & ").Raw("<b/>");
  w.Finish();
  EXPECT_EQ(out,
            "<svg width=\"10\"><g><rect x=\"1\" y=\"2\"/><text>t</text> &amp; <b/></g>\n</svg>\n");
}

TEST(XmlWriter, CloseWithNothingOpenWritesNothing) {
  std::string out;
  XmlWriter w(&out);
  w.Close();
  w.Finish();
  EXPECT_EQ(out, "");
}

TEST(XmlWriter, AttributeValuesAreEscaped) {
  std::string out;
  XmlWriter w(&out);
  w.Empty("a", {{"href", "\"><script>x</script>"}, {"title", "it's"}});
  EXPECT_EQ(out, "<a href=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\" title=\"it&#39;s\"/>");
}

TEST(XmlWriter, LeafAndTextAreEscaped) {
  std::string out;
  XmlWriter w(&out);
  w.Open("svg", {{"id", "<x>"}}).Leaf("title", {}, "</svg><script>").Text("\x1b]0;t\x07").Finish();
  EXPECT_EQ(out, "<svg id=\"&lt;x&gt;\"><title>&lt;/svg&gt;&lt;script&gt;</title>" + Fffd(1) +
                     "]0;t" + Fffd(1) + "</svg>\n");
}

TEST(Num, TrailingZerosAndTheDotAreDropped) {
  EXPECT_EQ(Num(1.5), "1.5");
  EXPECT_EQ(Num(2.0), "2");
  EXPECT_EQ(Num(100), "100");
  EXPECT_EQ(Num(1.239), "1.24");
  EXPECT_EQ(Num(0.25, 1), "0.2");  // round half to even, as printf
}

TEST(Num, NoDecimalsKeepsTheIntegersZeros) { EXPECT_EQ(Num(100, 0), "100"); }

TEST(Num, NegativeZeroAndNonFiniteAreZero) {
  EXPECT_EQ(Num(-0.001), "0");
  EXPECT_EQ(Num(std::nan("")), "0");
  EXPECT_EQ(Num(std::numeric_limits<double>::infinity()), "0");
  EXPECT_EQ(Num(-2.5), "-2.5");
}

}  // namespace
}  // namespace swaplab::report
