// SPDX-License-Identifier: MIT
// Scenario results as text tables, JSON and CSV: the figures as the seed
// prints them, "% vs the first column" where the scenario asks for it, the
// seed's own cells under the table, and every string from the scenario
// file (names, titles, setup, labels, rows, the seed's cells, answers)
// escaped for the terminal and for CSV.
#include "swaplab/report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

using workload::MetricKind;
using workload::Scenario;
using workload::ScenarioResult;
using workload::VariantResult;

VariantResult Variant(const std::string& label, double runs, double write_s) {
  VariantResult v;
  v.label = label;
  v.policy = "linux-6.18";
  v.order = {"runs", "write, s"};
  v.samples = {{"runs", {runs}}, {"write, s", {write_s}}};
  v.kinds = {{"runs", MetricKind::kCount}, {"write, s", MetricKind::kModelledSeconds}};
  return v;
}

// Two variants, "runs" with "% vs the first column", no seed cells.
struct Fixture {
  Scenario sc;
  ScenarioResult r;
  Fixture() {
    sc.name = "s1";
    sc.group = "g";
    sc.title = "T";
    sc.setup = {"one"};
    sc.seed = 7;
    sc.pct_rows = {"runs"};
    r.scenario = &sc;
    r.variants = {Variant("base", 100, 1.5), Variant("alloc", 50, 1.0)};
  }
  // Every string the scenario file gives set to `s`.
  void AllStrings(const std::string& s) {
    sc.name = sc.title = sc.group = sc.answers = s;
    sc.setup = {s};
    sc.rows = {s};
    sc.pct_rows = {s};
    sc.seed_reported.source = s;
    sc.seed_reported.setup = {s};
    sc.seed_reported.cells[s][s] = s;
    sc.host_cpu = workload::HostCpuCost{s, 1, 2, 3};
    for (auto& v : r.variants) {
      v.label = s;
      v.order.push_back(s);
      v.samples[s] = {1};
      v.kinds[s] = MetricKind::kCount;
    }
  }
};

TEST(FormatValue, CountsAsTheSeedPrintsThem) {
  EXPECT_EQ(FormatValue(3560, MetricKind::kCount), "3560");
  EXPECT_EQ(FormatValue(12700, MetricKind::kCount), "12.7K");
  EXPECT_EQ(FormatValue(1.3e6, MetricKind::kCount), "1.30M");
  EXPECT_EQ(FormatValue(2.5, MetricKind::kCount), "2.5");
  EXPECT_EQ(FormatValue(-2e6, MetricKind::kMeasuredRate), "-2.00M");
}

TEST(FormatValue, SecondsWithTwoDecimalsPercentWithOne) {
  EXPECT_EQ(FormatValue(10.6, MetricKind::kModelledSeconds), "10.60");
  EXPECT_EQ(FormatValue(0.125, MetricKind::kMeasuredSeconds), "0.12");
  EXPECT_EQ(FormatValue(12.34, MetricKind::kPercent), "12.3");
}

TEST(FormatValue, NanIsADash) { EXPECT_EQ(FormatValue(std::nan(""), MetricKind::kCount), "-"); }

TEST(Rows, TheScenariosRowsWhenGiven) {
  Fixture f;
  f.sc.rows = {"write, s"};
  EXPECT_EQ(Rows(f.r), std::vector<std::string>{"write, s"});
}

TEST(Rows, ElseEveryMetricFirstSeenFirst) {
  Fixture f;
  f.r.variants[1].order = {"write, s", "bios"};
  EXPECT_EQ(Rows(f.r), (std::vector<std::string>{"runs", "write, s", "bios"}));
}

TEST(HostCpuJson, PricesByName) {
  const auto j = HostCpuJson({"p", 1.5, 2, 0.25});
  EXPECT_EQ(j.dump(), R"({"label":"p","write_bio_us":1.5,"read_bio_us":2.0,"alloc_call_us":0.25})");
}

TEST(RenderText, HeaderSetupAndTableInTheSeedsShape) {
  Fixture f;
  f.r.wall_seconds = 2.25;
  const std::string t = RenderText(f.r);
  EXPECT_EQ(t.substr(0, t.find("  - base")),
            "== s1 \xe2\x80\x94 T\n\nSetup\n  - one\n"
            "  - seed 7 (repetition k uses seed 7+k), 1 repetition, 4 CPUs modelled\n");
  EXPECT_NE(t.find("  - base: policy custom:"), std::string::npos);
  EXPECT_NE(t.find("\n                       base      alloc\n"
                   "  runs                  100  50 (-50%)\n"
                   "  write, s (modelled)  1.50       1.00\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\n  (2.2 s wall)\n\n"), std::string::npos) << t;
}

TEST(RenderText, TheSeedsCellsUnderTheTable) {
  Fixture f;
  f.sc.seed_reported.source = "seed 001";
  f.sc.seed_reported.setup = {"16 CPUs"};
  f.sc.seed_reported.cells["runs"]["alloc"] = "31.9K";
  f.sc.seed_reported.cells["only seed"]["base"] = "7";
  const std::string t = RenderText(f.r);
  EXPECT_NE(t.find("\n  What seed 001 reported for the same cells:\n    16 CPUs\n"
                   "             base  alloc\n"
                   "  runs          -  31.9K\n"
                   "  only seed     7      -\n"),
            std::string::npos)
      << t;
}

TEST(RenderText, EveryStringFromTheScenarioIsEscaped) {
  Fixture f;
  f.AllStrings(std::string(report_test::kHostile));
  const std::string t = RenderText(f.r);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_NE(t.find(Printable(report_test::kHostile, 4096)), std::string::npos);
}

TEST(RenderText, RowLabelsAreEscaped) {
  Fixture f;
  f.sc.rows = {"runs\x1b[2J"};
  EXPECT_TRUE(report_test::TerminalSafe(RenderText(f.r)));
}

TEST(RenderText, AnswersAreEscaped) {
  Fixture f;
  f.sc.answers = "ok\x1b]0;title\x07";
  EXPECT_TRUE(report_test::TerminalSafe(RenderText(f.r)));
}

TEST(RenderText, HostCpuLabelIsEscaped) {
  Fixture f;
  f.sc.host_cpu = workload::HostCpuCost{"p\x1b[2J", 1, 2, 3};
  EXPECT_TRUE(report_test::TerminalSafe(RenderText(f.r)));
}

TEST(RenderJson, FiguresKindsAndPctVsFirst) {
  Fixture f;
  f.sc.seed_reported.cells["runs"]["alloc"] = "31.9K";
  const auto j = nlohmann::json::parse(RenderJson(f.r).dump());
  EXPECT_EQ(j["name"], "s1");
  EXPECT_EQ(j["seed"], 7);
  ASSERT_EQ(j["variants"].size(), 2u);
  const auto& runs = j["variants"][1]["metrics"]["runs"];
  EXPECT_EQ(runs["value"], 50.0);
  EXPECT_EQ(runs["kind"], workload::Name(MetricKind::kCount));
  EXPECT_EQ(runs["samples"], nlohmann::json::array({50.0}));
  EXPECT_EQ(runs["pct_vs_first"], -50.0);
  EXPECT_FALSE(j["variants"][0]["metrics"]["runs"].contains("pct_vs_first"));
  EXPECT_FALSE(j["variants"][1]["metrics"]["write, s"].contains("pct_vs_first"));
  EXPECT_EQ(j["seed_reported"]["cells"]["runs"]["alloc"], "31.9K");
  EXPECT_TRUE(j["variants"][0]["knobs"].is_object());
}

TEST(RenderJson, StringsComeBackAsTheyWereAndControlBytesAreEscaped) {
  Fixture f;
  const std::string s = "x\x1b[31m\x01<b>&\"',\n\xc3\xa9";  // valid UTF-8: a scenario file's
  f.AllStrings(s);
  const std::string text = RenderJson(f.r).dump();
  EXPECT_TRUE(report_test::TerminalSafe(text)) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["name"], s);
  EXPECT_EQ(j["setup"][0], s);
  EXPECT_EQ(j["variants"][0]["label"], s);
  EXPECT_EQ(j["seed_reported"]["cells"][s][s], s);
  EXPECT_EQ(j["host_cpu"]["label"], s);
}

TEST(RenderCsv, HeaderThenOneLinePerRowAndVariant) {
  Fixture f;
  f.sc.seed_reported.cells["runs"]["alloc"] = "31.9K";
  EXPECT_EQ(CsvHeader(),
            "scenario,row,variant,value,kind,pct_vs_first,seed_reported,repetitions\n");
  const std::string count(workload::Name(MetricKind::kCount));
  const std::string secs(workload::Name(MetricKind::kModelledSeconds));
  EXPECT_EQ(RenderCsv(f.r), "\"s1\",\"runs\",\"base\",100," + count + ",,\"\",1\n" +
                                "\"s1\",\"runs\",\"alloc\",50," + count + ",-50.00,\"31.9K\",1\n" +
                                "\"s1\",\"write, s\",\"base\",1.5," + secs + ",,\"\",1\n" +
                                "\"s1\",\"write, s\",\"alloc\",1," + secs + ",,\"\",1\n");
}

TEST(RenderCsv, EveryStringIsOneEscapedCell) {
  Fixture f;
  f.AllStrings(std::string(report_test::kHostile));
  const std::string csv = CsvHeader() + RenderCsv(f.r);
  const auto rows = report_test::ParseCsv(csv);
  ASSERT_EQ(rows.size(), 1 + 2u);  // the header, the scenario's one row per variant
  const std::string p = Printable(report_test::kHostile, 4096);
  for (const auto& row : rows) ASSERT_EQ(row.size(), 8u) << csv;
  EXPECT_EQ(rows[1][0], p);
  EXPECT_EQ(rows[1][1], p);
  EXPECT_EQ(rows[1][2], p);
  EXPECT_EQ(rows[1][6], p);
  EXPECT_TRUE(report_test::TerminalSafe(csv));
}

TEST(RenderBatch, OneJsonDocumentTheCsvHeaderOnceAndATotalLine) {
  Fixture a, b;
  b.sc.name = "s2";
  const auto batch = RenderBatch({a.r, b.r}, 0.5, 3.25);
  const auto j = nlohmann::json::parse(batch.json);
  EXPECT_EQ(j["scale"], 0.5);
  EXPECT_EQ(j["wall_seconds"], 3.25);
  ASSERT_EQ(j["scenarios"].size(), 2u);
  EXPECT_EQ(j["scenarios"][1]["name"], "s2");
  EXPECT_EQ(batch.csv, CsvHeader() + RenderCsv(a.r) + RenderCsv(b.r));
  EXPECT_EQ(batch.text, RenderText(a.r) + RenderText(b.r) + "total: 2 scenario(s), 3.2 s wall\n");
}

}  // namespace
}  // namespace swaplab::report
