// SPDX-License-Identifier: MIT
// A sweep directory's files as untrusted input (src/sweep/files.cc): each
// schema error names the file and the JSON path; nothing throws.
#include <gtest/gtest.h>

#include <fstream>

#include "swaplab/sweep/sweep.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {
namespace {

using nlohmann::json;

json Base() {
  std::ifstream in(SWAPLAB_SOURCE_DIR "/tests/sweep/data/holes.json");
  return json::parse(in);
}

json Spec() {
  return {{"name", "t"},
          {"base", Base()},
          {"axes", json::parse(R"([{"name": "seed", "seed": true, "values": [1, 2]}])")}};
}

// A sweep.json as Prepare writes it for Spec().
json SweepDoc() {
  auto s = ExpandSpec(Spec().dump(), "spec.json", 1.0);
  EXPECT_TRUE(s.ok()) << s.status().message();
  json points = json::array();
  for (const Point& p : s->points) points.push_back({{"id", p.id}, {"axes", p.axes}});
  return {{"name", "t"},      {"scale", 1.0},    {"structural", true},
          {"axes", {"seed"}}, {"spec", s->spec}, {"points", points}};
}

std::string Message(const Status& st) { return st.message(); }

TEST(SweepFiles, ASweepAsWrittenIsAccepted) {
  EXPECT_TRUE(CheckSweepDoc(SweepDoc(), "d/sweep.json").ok());
}

TEST(SweepFiles, SpecTitleMustBeAString) {
  json spec = Spec();
  spec["title"] = 5;
  auto s = ExpandSpec(spec.dump(), "spec.json", 1.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Message(s.status()), "spec.json: $.title: expected a string");
}

// Found by fuzz_sweep_spec: json::contains() threw (abort) on a token that
// is no array index.
TEST(SweepFiles, SpecPathWithAnEmptyArrayTokenIsRefused) {
  json spec = Spec();
  spec["axes"] = json::parse(R"([{"name": "h", "path": "/aging//0x", "values": ["4K"]}])");
  auto s = ExpandSpec(spec.dump(), "spec.json", 1.0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(Message(s.status()).find("no such place in the base scenario"), std::string::npos)
      << Message(s.status());
}

TEST(SweepFiles, SpecSyntaxErrorHasLineAndColumn) {
  auto s = ExpandSpec("{\n \"name\": \"t\",\n \"axes\": [,]\n}", "spec.json", 1.0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(Message(s.status()).rfind("spec.json:3:", 0), 0u) << Message(s.status());
}

TEST(SweepFiles, PointIdThatIsNotHexIsRefused) {
  json doc = SweepDoc();
  doc["points"][1]["id"] = "x; touch PWNED #";
  const Status st = CheckSweepDoc(doc, "d/sweep.json");
  EXPECT_EQ(st.code(), -EINVAL);
  EXPECT_EQ(Message(st).rfind("d/sweep.json: $.points[1].id: ", 0), 0u) << Message(st);
}

TEST(SweepFiles, HeatmapNameThatIsAPathIsRefused) {
  json doc = SweepDoc();
  doc["spec"]["heatmaps"] = {
      {{"name", "x/../../ESCAPED"}, {"x", "seed"}, {"y", "seed"}, {"value", "base/bios"}}};
  EXPECT_EQ(CheckSweepDoc(doc, "d/sweep.json").code(), -EINVAL);
  doc["spec"]["heatmaps"][0]["name"] = std::string(65, 'a');
  EXPECT_EQ(CheckSweepDoc(doc, "d/sweep.json").code(), -EINVAL);
  doc["spec"]["heatmaps"][0]["name"] = std::string(64, 'a');
  EXPECT_TRUE(CheckSweepDoc(doc, "d/sweep.json").ok());
}

TEST(SweepFiles, WrongTypesAndMissingKeysAreRefused) {
  for (const char* edit : {"/scale", "/structural", "/axes", "/spec", "/points", "/name"}) {
    json doc = SweepDoc();
    doc.erase(std::string(edit).substr(1));
    EXPECT_EQ(CheckSweepDoc(doc, "f").code(), -EINVAL) << "without " << edit;
    doc = SweepDoc();
    doc[json::json_pointer(edit)] = json::array({json::object()});
    EXPECT_EQ(CheckSweepDoc(doc, "f").code(), -EINVAL) << "a list of objects at " << edit;
  }
}

json Input() {
  auto s = ExpandSpec(Spec().dump(), "spec.json", 1.0);
  return s->points[0].input;
}

TEST(SweepFiles, PointInputScaleOutOfRangeIsRefused) {
  const json in = Input();
  const std::string id = in["id"];
  EXPECT_TRUE(CheckPointInput(in, "in.json", id).ok());
  for (const json& bad : {json(0), json(-1), json(1e300), json("2"), json(nullptr)}) {
    json j = in;
    j["scale"] = bad;
    const Status st = CheckPointInput(j, "in.json", id);
    EXPECT_EQ(st.code(), -EINVAL) << bad;
    EXPECT_EQ(Message(st).rfind("in.json: $.scale: ", 0), 0u) << Message(st);
  }
}

TEST(SweepFiles, PointInputOfAnotherIdIsRefused) {
  const json in = Input();
  EXPECT_EQ(CheckPointInput(in, "in.json", "0123456789abcdef").code(), -EINVAL);
}

TEST(SweepFiles, PointResultTypesChecked) {
  const json ok = {{"id", "0123456789abcdef"},
                   {"metrics", {{"base/bios", 3}, {"rfc/bios", nullptr}}},
                   {"cpu_seconds", 1.5},
                   {"wall_seconds", 2}};
  EXPECT_TRUE(CheckPointResult(ok, "r.json", "0123456789abcdef").ok());
  json j = ok;
  j["cpu_seconds"] = "1";
  EXPECT_EQ(
      Message(CheckPointResult(j, "r.json", "0123456789abcdef")).rfind("r.json: $.cpu_seconds", 0),
      0u);
  j = ok;
  j["metrics"]["base/bios"] = "many";
  EXPECT_EQ(CheckPointResult(j, "r.json", "0123456789abcdef").code(), -EINVAL);
  j = ok;
  j.erase("wall_seconds");  // absent: 0
  EXPECT_TRUE(CheckPointResult(j, "r.json", "0123456789abcdef").ok());
  j["wall_seconds"] = -1;
  EXPECT_EQ(CheckPointResult(j, "r.json", "0123456789abcdef").code(), -EINVAL);
}

}  // namespace
}  // namespace swaplab::sweep
