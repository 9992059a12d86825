// SPDX-License-Identifier: MIT
// A policy's knobs in the JSON reports: every knob by name in the table's
// order, bools and ints as JSON values, the search order as its steps.
#include "swaplab/report/policy_json.h"

#include <gtest/gtest.h>

#include <string>

namespace swaplab::report {
namespace {

TEST(KnobsJson, EveryKnobInTheTablesOrder) {
  const alloc::Policy p;
  const auto j = KnobsJson(p);
  const auto& knobs = alloc::Policy::Knobs();
  ASSERT_EQ(j.size(), knobs.size());
  size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) EXPECT_EQ(it.key(), knobs[i].name);
}

TEST(KnobsJson, BoolsAndIntsAreJsonValues) {
  alloc::Policy p;
  p.count_max = 63;
  p.mthp_swap = false;
  const auto j = KnobsJson(p);
  ASSERT_TRUE(j["count_max"].is_number_integer());
  EXPECT_EQ(j["count_max"].get<int>(), 63);
  ASSERT_TRUE(j["mthp_swap"].is_boolean());
  EXPECT_FALSE(j["mthp_swap"].get<bool>());
  EXPECT_TRUE(j["scan_reclaim_direct"].get<bool>());
}

TEST(KnobsJson, TheSearchOrderIsItsSteps) {
  alloc::Policy p;
  p.search = {alloc::SearchStep::kNonfull, alloc::SearchStep::kFragOne};
  const auto j = KnobsJson(p);
  ASSERT_TRUE(j["search"].is_array());
  ASSERT_EQ(j["search"].size(), 2u);
  EXPECT_EQ(j["search"][0].get<std::string>(), alloc::Name(alloc::SearchStep::kNonfull));
  EXPECT_EQ(j["search"][1].get<std::string>(), alloc::Name(alloc::SearchStep::kFragOne));
}

TEST(KnobsJson, APresetsValuesRoundTripThroughSet) {
  auto preset = alloc::Policy::Preset(alloc::kDefaultPreset);
  ASSERT_TRUE(preset.ok());
  const auto j = KnobsJson(*preset);
  alloc::Policy q;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string v;
    if (it.value().is_array()) {
      for (const auto& s : it.value()) v += (v.empty() ? "" : ",") + s.get<std::string>();
    } else {
      v = it.value().dump();
    }
    ASSERT_TRUE(q.Set(it.key(), v).ok()) << it.key() << "=" << v;
  }
  EXPECT_EQ(q.KnobValues(), preset->KnobValues());
}

}  // namespace
}  // namespace swaplab::report
