// SPDX-License-Identifier: MIT
// The HTML report: one self-contained page with each scenario's setup,
// its table (the seed's figure beside ours), bar charts of the rows an mm
// developer compares; well-formed whatever the scenario file holds, every
// string from it (and the command line) escaped as text or attribute.
#include "swaplab/report/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "report/report_test_util.h"
#include "swaplab/report/svg.h"

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using workload::MetricKind;

workload::VariantResult Variant(const std::string& label, double runs, double cpus) {
  workload::VariantResult v;
  v.label = label;
  v.order = {"runs", "cpus seen"};
  v.samples = {{"runs", {runs}}, {"cpus seen", {cpus}}};
  v.kinds = {{"runs", MetricKind::kCount}, {"cpus seen", MetricKind::kCount}};
  return v;
}

struct Fixture {
  workload::Scenario sc;
  workload::ScenarioResult r;
  HtmlOptions o;
  Fixture() {
    sc.name = "s1";
    sc.title = "T";
    sc.setup = {"one"};
    r.scenario = &sc;
    r.variants = {Variant("base", 100, 4), Variant("alloc", 50, 4)};
    o.command = "reproduce s1";
  }
  std::string Html() const { return RenderHtml({r}, nullptr, o); }
};

TEST(OpenHtmlPage, DoctypeHeadWithTitleAndStyleThenBody) {
  std::string out;
  XmlWriter w(&out);
  OpenHtmlPage(w, "a<b");
  const std::string head =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>a&lt;b</title>"
      "<style>";
  EXPECT_EQ(out.substr(0, head.size()), head);
  EXPECT_EQ(out.substr(out.size() - 14), "</head>\n<body>");
  w.Finish();
  EXPECT_EQ(report_test::WellFormed(out), "");
}

TEST(InlineSvg, DropsTheSvgNamespace) {
  EXPECT_EQ(InlineSvg("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\"><g/></svg>"),
            "<svg width=\"1\"><g/></svg>");
}

TEST(RenderHtml, HeaderTocAndOneSectionPerScenario) {
  Fixture f;
  const std::string h = f.Html();
  EXPECT_EQ(report_test::WellFormed(h), "");
  EXPECT_THAT(h, HasSubstr("<h1>swaplab: reproduce s1</h1>"));
  EXPECT_THAT(h, HasSubstr("<li><a href=\"#s1\">s1</a></li>"));
  EXPECT_THAT(h, HasSubstr("<section id=\"s1\"><h2>s1 \xe2\x80\x94 T</h2>"));
  EXPECT_THAT(h, HasSubstr("<li>one</li>"));
  EXPECT_THAT(h, Not(HasSubstr("http://")));  // nothing loaded from anywhere
}

TEST(RenderHtml, TableCellsHoldTheFigureAndTheJsonValue) {
  Fixture f;
  f.r.variants[0].samples["runs"] = {12345};
  const std::string h = f.Html();
  EXPECT_THAT(h, HasSubstr("<tr><th></th><th>base</th><th>alloc</th></tr>"));
  EXPECT_THAT(h, HasSubstr("<tr><td>runs</td><td class=\"v\" data-v=\"12345\">12.3K</td>"
                           "<td class=\"v\" data-v=\"50\">50</td></tr>"));
  EXPECT_THAT(h, Not(HasSubstr("class=\"seed\"")));
}

TEST(RenderHtml, TheSeedsFigureBesideEachOfOurs) {
  Fixture f;
  f.sc.seed_reported.source = "seed 001";
  f.sc.seed_reported.cells["runs"]["alloc"] = "31.9K";
  const std::string h = f.Html();
  EXPECT_THAT(h, HasSubstr("<th>base</th><th class=\"seed\">seed</th><th>alloc</th>"));
  EXPECT_THAT(h, HasSubstr("<td class=\"v\" data-v=\"50\">50</td><td class=\"seed\">31.9K</td>"));
  EXPECT_THAT(h, HasSubstr("<p class=\"note\">seed: what seed 001 reported for the same cell</p>"));
}

TEST(RenderHtml, ChartsOnlyForTheComparedRows) {
  Fixture f;
  const std::string h = f.Html();
  EXPECT_THAT(h, HasSubstr("<svg class=\"plot\""));
  EXPECT_THAT(h, HasSubstr("<title>runs</title>"));
  EXPECT_THAT(h, Not(HasSubstr("<title>cpus seen</title>")));
}

TEST(RenderHtml, EveryStringFromTheScenarioAndCommandIsEscaped) {
  Fixture f;
  const std::string s(report_test::kHostile);
  f.o.command = s;
  f.sc.name = f.sc.title = f.sc.answers = f.sc.seed_reported.source = s;
  f.sc.setup = f.sc.seed_reported.setup = {s};
  f.sc.rows = {"runs", s};
  f.sc.seed_reported.cells["runs"][s] = s;
  for (auto& v : f.r.variants) v.label = s;
  f.r.variants[0].samples[s] = {1};
  const std::string h = f.Html();
  EXPECT_EQ(report_test::WellFormed(h), "");
  EXPECT_TRUE(report_test::XmlCharsSafe(h));
  EXPECT_THAT(h, Not(HasSubstr("<b>")));
  const std::string e = XmlEscape(s);
  EXPECT_THAT(h, HasSubstr("<title>swaplab: " + e + "</title>"));
  EXPECT_THAT(h, HasSubstr("<a href=\"#" + e + "\">" + e + "</a>"));
  EXPECT_THAT(h, HasSubstr("<section id=\"" + e + "\">"));
  EXPECT_THAT(h, HasSubstr("<td>" + e + "</td>"));
  EXPECT_THAT(h, HasSubstr("<td class=\"seed\">" + e + "</td>"));
  EXPECT_THAT(h, HasSubstr("<p>" + e + "</p>"));
}

}  // namespace
}  // namespace swaplab::report
