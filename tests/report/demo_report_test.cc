// SPDX-License-Identifier: MIT
// `swaplab demo`'s result: one row per policy as a text table and one
// JSON document, and whether every run's invariants held.
#include "swaplab/report/demo_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;

// One run: 30 4 kB swap-outs, 3 of 64 kB and 1 fallback.
workload::DemoResult Demo(const std::string& invariants = "ok") {
  workload::DemoResult r;
  r.options.size_mib = 64;
  r.options.ops = 100;
  r.options.seed = 5;
  workload::DemoRun run;
  run.policy = "linux-6.18";
  run.counters.swpout[0] = 30;
  run.counters.swpout[4] = 3;
  run.counters.swpout_fallback[4] = 1;
  run.dev.free_clusters = 2;
  run.invariants = invariants;
  r.runs.push_back(run);
  return r;
}

TEST(DemoInvariantsHold, OnlyWhenEveryRunSaysOk) {
  EXPECT_TRUE(DemoInvariantsHold(Demo()));
  auto r = Demo();
  r.runs.push_back(Demo("count 3 != 4").runs[0]);
  EXPECT_FALSE(DemoInvariantsHold(r));
}

TEST(DemoText, OneRowPerPolicyWithTheFallbackRate) {
  const std::string t = DemoText(Demo());
  EXPECT_EQ(t.substr(0, t.find('\n') + 1),
            "swaplab demo: 64 MiB SSD block device (no discard), 2 CPUs, 100 swap-outs (1 in 4 "
            "is 64 KiB), random 4 KiB frees keep ~70% used; seed 5\n");
  EXPECT_THAT(t, HasSubstr("\nlinux-6.18           30          3            1     25.0% "));
  EXPECT_THAT(t, HasSubstr("invariants after each run: all hold\n"));
}

TEST(DemoText, AViolatedRunIsNamed) {
  const std::string t = DemoText(Demo("count 3 != 4"));
  EXPECT_THAT(t, HasSubstr("invariants after each run: VIOLATED\n  linux-6.18: count 3 != 4\n"));
}

TEST(DemoJson, OneDocumentWithEachRun) {
  const auto j = nlohmann::json::parse(DemoJson(Demo()))["demo"];
  EXPECT_EQ(j["device_mib"], 64);
  EXPECT_EQ(j["seed"], 5);
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["policy"], "linux-6.18");
  EXPECT_EQ(j["runs"][0]["swpout_64kB"], 3);
  EXPECT_EQ(j["runs"][0]["swpout_fallback_64kB"], 1);
  EXPECT_EQ(j["runs"][0]["invariants"], "ok");
  EXPECT_TRUE(j["runs"][0]["knobs"].is_object());
}

}  // namespace
}  // namespace swaplab::report
