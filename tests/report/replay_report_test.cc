// SPDX-License-Identifier: MIT
// `swaplab replay`'s result as text, JSON and CSV: the summary, the
// kernel's counter names grouped per mTHP size, each device's lists, the
// disagreements with the trace's expect lines, and the trace's name
// escaped in each medium.
#include "swaplab/report/replay_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;

// 4 folios (one 64 kB, one of them falling back), 8 pages placed, 6 of 8
// where the trace expects them, one device.
workload::ReplayResult Result(const std::string& trace = "t.trace") {
  workload::ReplayResult r;
  r.options.trace = trace;
  r.options.cpus = 2;
  r.cluster_size = 512;
  auto& s = r.summary;
  s.records = 10;
  s.folios = 4;
  s.pages_placed = 8;
  s.folio_runs = 6;
  s.expected = 8;
  s.agree = 6;
  s.disagreements.push_back({7, 2, 1, 0, 40, "dev 0 offset 5"});
  r.counters.pswpout = 8;
  r.counters.swpout[0] = 3;
  r.counters.swpout[4] = 1;
  r.counters.swpout_fallback[4] = 1;
  alloc::DeviceInfo d;
  d.pages = 1024;
  d.inuse = 8;
  d.prio = -2;
  d.free_clusters = 1;
  d.nonfull_clusters = 1;
  r.devices.push_back({0, 0, d});
  r.invariants = "ok";
  return r;
}

TEST(ReplayCsv, HeaderAndOneRow) {
  EXPECT_EQ(ReplayCsv(Result()),
            "records,folios,pages_placed,pages_unplaced,runs_per_folio,expected,agree,pswpout\n"
            "10,4,8,0,1.500,8,6,8\n");
}

TEST(ReplayText, SummaryCountersDevicesAndDisagreements) {
  const std::string t = ReplayText(Result());
  EXPECT_EQ(t.substr(0, t.find('\n') + 1), "replay t.trace: 2 CPUs, 512 slots per cluster\n");
  EXPECT_THAT(t, HasSubstr("\nrecords 10  folios 4  pages placed 8  unplaced 0  runs/folio 1.500\n"
                           "pswpout 8\n"));
  EXPECT_THAT(t, HasSubstr("\nhugepages-4kB/stats: swpout 3 swpout_fallback 0\n"
                           "hugepages-64kB/stats: swpout 1 swpout_fallback 1\n"));
  EXPECT_EQ(t.find("hugepages-8kB"), std::string::npos);  // an order all 0 is left out
  EXPECT_THAT(
      t, HasSubstr(" dev   prio      pages     inuse   free  nonfull   frag   full  discard\n"
                   "   0     -2       1024         8      1        1      0      0        0\n"));
  EXPECT_THAT(
      t, HasSubstr("placement agreement: 6/8 (75.00%)\n"
                   "  t.trace:7: folio 2 page 1: expected dev 0 offset 40, got dev 0 offset 5\n"));
  EXPECT_EQ(t.substr(t.size() - 15), "invariants: ok\n");
}

TEST(ReplayText, ForeignSlotsOnlyWhenTheTraceHasThem) {
  auto r = Result();
  EXPECT_EQ(ReplayText(r).find("foreign"), std::string::npos);
  r.summary.foreign_expected = 3;
  r.summary.foreign_agree = 2;
  EXPECT_NE(ReplayText(r).find("foreign slots (taken outside the trace) 3: the model put 2 "
                               "where the reference did; 0 given back\n"),
            std::string::npos);
}

TEST(ReplayText, TheTraceNameIsEscapedInTheHeaderAndEachDisagreement) {
  const std::string t = ReplayText(Result(std::string(report_test::kHostile)));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  const std::string p = Printable(report_test::kHostile, 4096);
  EXPECT_NE(t.find("replay " + p + ": "), std::string::npos);
  EXPECT_NE(t.find("  " + p + ":7: folio 2"), std::string::npos);
}

TEST(ReplayJson, FieldsAndCountersByTheKernelsNames) {
  const auto j = nlohmann::json::parse(ReplayJson(Result()).dump());
  EXPECT_EQ(j["trace"], "t.trace");
  EXPECT_EQ(j["cpus"], 2);
  EXPECT_EQ(j["records"], 10);
  EXPECT_EQ(j["runs_per_folio"], 1.5);
  EXPECT_EQ(j["agreement"], 0.75);
  EXPECT_EQ(j["disagreements"][0]["expected_offset"], 40);
  EXPECT_EQ(j["disagreements"][0]["got"], "dev 0 offset 5");
  EXPECT_FALSE(j.contains("foreign"));
  EXPECT_EQ(j["counters"]["pswpout"], 8);
  EXPECT_EQ(j["counters"]["hugepages-64kB"]["swpout_fallback"], 1);
  EXPECT_FALSE(j["counters"].contains("hugepages-8kB"));
  EXPECT_EQ(j["devices"][0]["prio"], -2);
  EXPECT_EQ(j["devices"][0]["nonfull_clusters"], 1);
  EXPECT_EQ(j["invariants"], "ok");
  EXPECT_TRUE(j["knobs"].is_object());
}

TEST(ReplayJson, ATraceNameThatIsNoUtf8StillMakesAJsonString) {
  const auto j = report_test::Redump(ReplayJson(Result(std::string(report_test::kHostile))));
  EXPECT_EQ(j["trace"], Printable(report_test::kHostile, 4096));
}

}  // namespace
}  // namespace swaplab::report
