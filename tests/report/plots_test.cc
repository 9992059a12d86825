// SPDX-License-Identifier: MIT
// Bar charts: one bar per variant with a value, its length against the
// largest figure (ours or the seed's), the seed's mark where it reported
// one, and every label and figure text escaped; seed figures as numbers.
#include "swaplab/report/plots.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/report_test_util.h"
#include "swaplab/report/svg.h"

namespace swaplab::report {
namespace {

const double kNone = std::nan("");

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The value of `attr` in the n-th tag starting with `open`.
std::string AttrOf(const std::string& svg, const std::string& open, size_t n,
                   const std::string& attr) {
  size_t p = svg.find(open);
  for (size_t i = 0; i < n && p != std::string::npos; ++i) p = svg.find(open, p + 1);
  if (p == std::string::npos) return "";
  const std::string tag = svg.substr(p, svg.find('>', p) - p);
  const size_t a = tag.find(" " + attr + "=\"");
  if (a == std::string::npos) return "";
  const size_t v = a + attr.size() + 3;
  return tag.substr(v, tag.find('"', v) - v);
}

TEST(ParseSeedNumber, SuffixesScaleTheFigure) {
  EXPECT_EQ(ParseSeedNumber("32.8K"), 32800);
  EXPECT_EQ(ParseSeedNumber("12.7k"), 12700);
  EXPECT_EQ(ParseSeedNumber("1.30M"), 1.3e6);
  EXPECT_EQ(ParseSeedNumber("2G"), 2e9);
}

TEST(ParseSeedNumber, PercentSecondsAndRemarksAreDropped) {
  EXPECT_EQ(ParseSeedNumber("12%"), 12);
  EXPECT_EQ(ParseSeedNumber("10.60s"), 10.6);
  EXPECT_EQ(ParseSeedNumber("10.07 (-6%)"), 10.07);
  EXPECT_EQ(ParseSeedNumber("1,234"), 1234);
}

TEST(ParseSeedNumber, TextThatIsNotOneNumberIsNan) {
  EXPECT_TRUE(std::isnan(ParseSeedNumber("")));
  EXPECT_TRUE(std::isnan(ParseSeedNumber("-")));
  EXPECT_TRUE(std::isnan(ParseSeedNumber("n/a")));
  EXPECT_TRUE(std::isnan(ParseSeedNumber("12 runs")));
  EXPECT_TRUE(std::isnan(ParseSeedNumber("(5)")));
}

TEST(BarChartSvg, BarLengthsAreProportionalToTheLargestValue) {
  const std::string svg =
      BarChartSvg("runs", {{"base", 100, kNone, "100", ""}, {"alloc", 50, kNone, "50", ""}});
  EXPECT_EQ(Count(svg, "<rect class=\"bar\""), 2u);
  EXPECT_EQ(AttrOf(svg, "<rect class=\"bar\"", 0, "width"), "300");
  EXPECT_EQ(AttrOf(svg, "<rect class=\"bar\"", 1, "width"), "150");
  EXPECT_NE(svg.find("<title>base: 100</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>alloc: 50</title>"), std::string::npos);
}

TEST(BarChartSvg, ASeedFigureLargerThanOursSetsTheScale) {
  const std::string svg = BarChartSvg("runs", {{"base", 100, 200, "100", "200"}});
  EXPECT_EQ(AttrOf(svg, "<rect class=\"bar\"", 0, "width"), "150");
  EXPECT_EQ(AttrOf(svg, "<line class=\"seed\"", 0, "x1"), "460");  // 10 + 150 + 300
  EXPECT_NE(svg.find("<title>the seed reported 200</title>"), std::string::npos);
}

TEST(BarChartSvg, SeedMarksOnlyWhereTheSeedReportedAndTheLegendThen) {
  const std::string one =
      BarChartSvg("runs", {{"base", 641, 31899, "641", "31899"}, {"allocator", 1, kNone, "1", ""}});
  EXPECT_EQ(Count(one, "class=\"seed\""), 1u);
  EXPECT_NE(one.find("the seed&#39;s figure for the same cell"), std::string::npos);
  const std::string none = BarChartSvg("runs", {{"base", 641, kNone, "641", ""}});
  EXPECT_EQ(Count(none, "class=\"seed\""), 0u);
  EXPECT_EQ(none.find("the seed&#39;s figure"), std::string::npos);
}

TEST(BarChartSvg, AVariantWithoutAValueHasItsLabelButNoBar) {
  const std::string svg = BarChartSvg("runs", {{"base", kNone, kNone, "-", ""}});
  EXPECT_EQ(Count(svg, "<rect"), 0u);
  EXPECT_NE(svg.find(">base</text>"), std::string::npos);
}

TEST(BarChartSvg, TitleLabelsAndFiguresAreEscaped) {
  const std::string h(report_test::kHostile);
  const std::string svg = BarChartSvg(h, {{h, 1, 2, h, h}});
  const std::string e = XmlEscape(h);
  EXPECT_TRUE(report_test::XmlCharsSafe(svg));
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("<title>" + e + "</title>"), std::string::npos);             // chart title
  EXPECT_NE(svg.find("<title>" + e + ": " + e + "</title>"), std::string::npos);  // bar
  EXPECT_NE(svg.find("<title>the seed reported " + e + "</title>"), std::string::npos);
  EXPECT_EQ(Count(svg, ">" + e + "</text>"), 3u);  // title, label, value text
}

}  // namespace
}  // namespace swaplab::report
