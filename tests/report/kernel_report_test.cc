// SPDX-License-Identifier: MIT
// `swaplab kernel run|cleanup`'s results: the kernel's placements and
// counters beside the model's as text and JSON, and every string that
// came from outside (the trace's path, the device's name, the areas'
// paths, the kernel's release in a warning, error messages) escaped for
// the terminal and kept a valid JSON string.
#include "swaplab/report/kernel_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

// One area, one 64 kB folio the kernel placed and one that fell back, one
// disagreement, one anomaly, one accounted interference.
kernel::KernelComparison Comparison(const std::string& s = "x") {
  kernel::KernelComparison k;
  k.trace = s + ".trace";
  k.device = s;
  k.out = s + ".out";
  auto& r = k.kernel;
  kernel::AreaReport a;
  a.dev = 0;
  a.path = "/tmp/" + s;
  a.kind = kernel::DeviceKind::kZram;
  a.pages = 1024;
  a.prio = -2;
  a.ssd = true;
  a.blkdev = true;
  a.swap_type = 1;
  a.note = s;
  r.areas.push_back(a);
  r.records = 9;
  r.folios = 3;
  r.pages_swapped = 20;
  r.pswpout = 20;
  r.folios_by_order = {{0, 1}, {4, 2}};
  r.swpout = {{4, 1}};
  r.swpout_fallback = {{4, 1}};
  r.anomalies.push_back({5, 2, s});
  r.anomalies_total = 1;
  kernel::Interference i;
  i.line = 3;
  i.slots = 2;
  i.accounted = true;
  i.runs = {{100, 2}};
  i.how = s;
  r.interference.push_back(i);
  r.interference_total = 1;
  r.foreign_slots = 2;
  r.warnings = {s};
  r.rerun_reasons = {s};
  r.watch_policy = "linux-6.18";
  r.seconds = 1.5;
  k.model.summary.expected = 20;
  k.model.summary.agree = 19;
  k.model.summary.disagreements.push_back({6, 2, 3, 0, 17, "dev 0 offset 18"});
  k.model.swpout = {{4, 2}};
  k.model.pswpout = 20;
  return k;
}

TEST(KernelRunText, AreasCountersFallbackAndDisagreements) {
  const std::string t = KernelRunText(Comparison());
  EXPECT_EQ(t.substr(0, t.find('\n') + 1),
            "kernel run x.trace on x (9 records, 3 folios, 1.50 s)\n");
  EXPECT_NE(t.find("  dev 0: /tmp/x (" + std::string(kernel::Name(kernel::DeviceKind::kZram)) +
                   ", 1024 pages, prio -2, ssd, blkdev) = swap type 1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\nwarning: x\n"), std::string::npos);
  EXPECT_NE(t.find("\nmade again: x\n"), std::string::npos);
  EXPECT_NE(t.find("  after line 3: dev 0 +2 slots at 100+2: x\n"), std::string::npos) << t;
  EXPECT_NE(t.find("pages swapped 20  kept in memory 0  pswpout kernel 20 model 20\n"),
            std::string::npos);
  EXPECT_NE(t.find("placement agreement with custom: 19/20 (95.00%)\n"), std::string::npos);
  EXPECT_NE(t.find("  64kB fallback: kernel 50.00% (1/2)  model 0.00%\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  line 6: folio 2 page 3: kernel dev 0 offset 17, model dev 0 offset 18\n"),
            std::string::npos);
  EXPECT_NE(t.find("the kernel on its own (1):\n  line 5: folio 2: x\n"), std::string::npos);
}

TEST(KernelRunText, EveryStringFromOutsideIsEscaped) {
  const std::string t = KernelRunText(Comparison(std::string(report_test::kHostile)));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_NE(t.find("kernel run " + Printable(report_test::kHostile, 4096) + ".trace on "),
            std::string::npos);
}

TEST(KernelRunJson, FieldsByName) {
  const auto j = nlohmann::json::parse(KernelRunJson(Comparison()).dump());
  EXPECT_EQ(j["trace"], "x.trace");
  EXPECT_EQ(j["device"], "x");
  EXPECT_EQ(j["out"], "x.out");
  EXPECT_EQ(j["areas"][0]["path"], "/tmp/x");
  EXPECT_EQ(j["areas"][0]["swap_type"], 1);
  EXPECT_EQ(j["agreement"], 0.95);
  EXPECT_EQ(j["fallback"]["64kB"]["kernel_rate"], 0.5);
  EXPECT_EQ(j["fallback"]["64kB"]["model_swpout"], 2);
  EXPECT_FALSE(j["fallback"].contains("4kB"));  // order 0 has no mTHP stats
  EXPECT_EQ(j["disagreements"][0]["kernel_offset"], 17);
  EXPECT_EQ(j["kernel_on_its_own"][0]["what"], "x");
  EXPECT_EQ(j["interference"][0]["runs"][0]["offset"], 100);
  EXPECT_EQ(j["warnings"][0], "x");
}

TEST(KernelRunJson, NoOutKeyWithoutOut) {
  auto k = Comparison();
  k.out.clear();
  EXPECT_FALSE(KernelRunJson(k).contains("out"));
}

TEST(KernelRunJson, StringsThatAreNoUtf8StillMakeJsonStrings) {
  const auto j = report_test::Redump(KernelRunJson(Comparison(std::string(report_test::kHostile))));
  const std::string p = Printable(report_test::kHostile, 4096);
  EXPECT_EQ(j["device"], p);
  EXPECT_EQ(j["areas"][0]["path"], "/tmp/" + p);
  EXPECT_EQ(j["warnings"][0], p);
}

TEST(CleanupText, OneActionALineOrNothing) {
  EXPECT_EQ(CleanupText({"removed a", "restored b"}), "removed a\nrestored b\n");
  EXPECT_EQ(CleanupText({}), "nothing to clean up\n");
}

TEST(CleanupText, ActionsAreEscaped) {
  const std::string t = CleanupText({"removed " + std::string(report_test::kHostile)});
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
}

TEST(CleanupJson, ActionsAndTheError) {
  EXPECT_EQ(CleanupJson({"a"}, Status::Ok()).dump(), R"({"actions":["a"],"ok":true})");
  const auto j = CleanupJson({}, Status(-EBUSY, "busy"));
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_NE(j["error"].get<std::string>().find("busy"), std::string::npos);
}

TEST(CleanupJson, ActionsThatAreNoUtf8StillMakeJsonStrings) {
  const std::string h(report_test::kHostile);
  const auto j = report_test::Redump(CleanupJson({h}, Status(-EIO, h)));
  EXPECT_EQ(j["actions"][0], Printable(h, 4096));
}

}  // namespace
}  // namespace swaplab::report
