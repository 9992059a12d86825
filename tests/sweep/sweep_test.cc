// SPDX-License-Identifier: MIT
// Sweep specs expanded, points run and merged (include/swaplab/sweep/sweep.h).
#include "swaplab/sweep/sweep.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sweep/sweep_internal.h"

namespace swaplab::sweep {
namespace {

using nlohmann::json;

// A small image scenario (tests/sweep/data/holes.json).
json Base() {
  std::ifstream in(SWAPLAB_SOURCE_DIR "/tests/sweep/data/holes.json");
  return json::parse(in);
}

json Spec(json axes) { return {{"name", "t"}, {"base", Base()}, {"axes", std::move(axes)}}; }

std::string TempDir() {
  char t[] = "/tmp/sweep_test.XXXXXX";
  EXPECT_NE(::mkdtemp(t), nullptr);
  return t;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SweepSpec, GridOfEveryAxisKind) {
  json spec = Spec(json::parse(R"([
    {"name": "image", "path": "/measured/0/size", "values": [8, 12], "multiply": 2, "suffix": "M"},
    {"name": "count_max", "knob": "count_max", "variant": "rfc", "range": {"from": 10, "to": 30, "step": 10}},
    {"name": "seed", "seed": true, "range": {"from": 1, "to": 2, "step": 1}}
  ])"));
  auto s = ExpandSpec(spec.dump(), "spec.json", 0.5);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->points.size(), 2u * 3u * 2u);
  EXPECT_DOUBLE_EQ(s->scale, 0.5);
  // The first axis varies slowest, the last fastest.
  EXPECT_EQ(s->points[0].axes, json({{"image", 8}, {"count_max", 10}, {"seed", 1}}));
  EXPECT_EQ(s->points[1].axes, json({{"image", 8}, {"count_max", 10}, {"seed", 2}}));
  EXPECT_EQ(s->points[2].axes, json({{"image", 8}, {"count_max", 20}, {"seed", 1}}));
  EXPECT_EQ(s->points[11].axes, json({{"image", 12}, {"count_max", 30}, {"seed", 2}}));
  const json& in = s->points[11].input;
  EXPECT_EQ(in["scenario"]["measured"][0]["size"], "24M");
  EXPECT_EQ(in["scenario"]["seed"], 2);
  auto sc = PointScenario(in, "p");
  ASSERT_TRUE(sc.ok()) << sc.status().message();
  EXPECT_EQ(sc->variants[1].policy.count_max, 30);  // the named variant only
  EXPECT_NE(sc->variants[0].policy.count_max, 30);
  EXPECT_EQ(sc->seed, 2u);
  std::set<std::string> ids;
  for (const auto& p : s->points) {
    EXPECT_EQ(p.id.size(), 16u);
    ids.insert(p.id);
  }
  EXPECT_EQ(ids.size(), s->points.size());
}

TEST(SweepSpec, IdsDependOnThePointNotItsIndex) {
  auto a = ExpandSpec(
      Spec(json::parse(R"([{"name": "seed", "seed": true, "values": [1, 2, 3]}])")).dump(), "a", 1);
  auto b = ExpandSpec(
      Spec(json::parse(R"([{"name": "seed", "seed": true, "values": [3]}])")).dump(), "b", 1);
  auto c = ExpandSpec(
      Spec(json::parse(R"([{"name": "seed", "seed": true, "values": [3]}])")).dump(), "b", 0.5);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->points[2].id, b->points[0].id);
  EXPECT_NE(b->points[0].id, c->points[0].id);  // another scale is another run
}

TEST(SweepSpec, ListZipsAxes) {
  json spec = Spec(json::parse(R"([
    {"name": "hole", "path": "/aging/0/hole", "values": ["16K", "64K"]},
    {"name": "seed", "seed": true, "values": [5, 6]}
  ])"));
  spec["combine"] = "list";
  auto s = ExpandSpec(spec.dump(), "spec.json", 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->points.size(), 2u);
  EXPECT_EQ(s->points[1].axes, json({{"hole", "64K"}, {"seed", 6}}));
  spec["axes"][1]["values"] = {5, 6, 7};
  auto bad = ExpandSpec(spec.dump(), "spec.json", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("equal length"), std::string::npos);
}

TEST(SweepSpec, BadInputNamesWhere) {
  struct Case {
    const char* axes;
    const char* want;
  } cases[] = {
      {R"([{"name": "x", "path": "/measured/3/size", "values": [1]}])",
       "/measured/3/size': no such place"},
      {R"([{"name": "x", "path": "measured", "values": [1]}])", "not a JSON pointer"},
      {R"([{"name": "x", "path": "/measured/0/bogus", "values": [1]}])", "bogus"},
      {R"([{"name": "x", "knob": "count_max", "values": [300]}])", "count_max"},
      {R"([{"name": "x", "knob": "no_such_knob", "values": [1]}])", "no_such_knob"},
      {R"([{"name": "x", "knob": "count_max", "variant": "nope", "values": [20]}])", "nope"},
      {R"([{"name": "x", "seed": true, "values": [-1]}])", "non-negative"},
      {R"([{"name": "x", "seed": true, "range": {"from": 0, "to": 1e12, "step": 1}}])",
       "at most 10000"},
      {R"([{"name": "x", "seed": true, "values": [1, 1]}])", "listed twice"},
  };
  for (const auto& c : cases) {
    auto s = ExpandSpec(Spec(json::parse(c.axes)).dump(), "spec.json", 1);
    ASSERT_FALSE(s.ok()) << c.axes;
    EXPECT_EQ(s.status().code(), -EINVAL);
    EXPECT_NE(s.status().message().find(c.want), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().rfind("spec.json", 0), 0u) << s.status().message();
  }
}

TEST(SweepSpec, HugeGridRefusedBeforeExpansion) {
  json axes = json::array();
  for (int a = 0; a < 9; ++a)  // 10^9 points
    axes.push_back({{"name", "a" + std::to_string(a)},
                    {"path", "/seed"},
                    {"range", {{"from", 0}, {"to", 9}, {"step", 1}}}});
  auto s = ExpandSpec(Spec(axes).dump(), "spec.json", 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("more than 100000 points"), std::string::npos)
      << s.status().message();
  json big = Spec(json::parse(
      R"([{"name": "seed", "seed": true, "range": {"from": 1, "to": 101, "step": 1}}])"));
  big["heatmaps"] = json::parse(R"([{"name": "m", "x": "seed", "y": "seed", "value": "v"}])");
  s = ExpandSpec(big.dump(), "spec.json", 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("$.heatmaps[0]: 10201 cells, at most 10000"),
            std::string::npos)
      << s.status().message();
}

TEST(SweepRun, PointRunsOnceAndMergeReadsIt) {
  json spec = Spec(json::parse(R"([{"name": "seed", "seed": true, "values": [1, 2, 3]}])"));
  spec["derived"] = json::parse(R"([{"name": "gain", "ratio": ["rfc/bios", "base/bios"]},
                                    {"name": "d", "minus": ["rfc/runs", "base/runs"]}])");
  spec["heatmaps"] = json::parse(R"([{"name": "g", "x": "seed", "y": "seed", "value": "gain"}])");
  auto s = ExpandSpec(spec.dump(), "spec.json", 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const std::string dir = TempDir();
  ASSERT_TRUE(Prepare(*s, dir).ok());
  EXPECT_EQ(Slurp(dir + "/jobs.txt"),
            s->points[0].id + "\n" + s->points[1].id + "\n" + s->points[2].id + "\n");
  // The same sweep again is fine; another is refused.
  EXPECT_TRUE(Prepare(*s, dir).ok());
  auto other = ExpandSpec(spec.dump(), "spec.json", 0.5);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Prepare(*other, dir).code(), -EEXIST);
  json retitled = spec;
  retitled["title"] = "the same points";
  auto same = ExpandSpec(retitled.dump(), "spec.json", 1);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(Prepare(*same, dir).ok());
  EXPECT_EQ(ReadSweep(dir)->at("spec")["title"], "the same points");

  bool ran = false;
  ASSERT_TRUE(RunPoint(dir, s->points[0].id, &ran).ok());
  EXPECT_TRUE(ran);
  const json r = json::parse(Slurp(dir + "/points/" + s->points[0].id + ".json"));
  EXPECT_GT(r["metrics"]["base/bios"].get<double>(), r["metrics"]["rfc/bios"].get<double>());
  ASSERT_TRUE(RunPoint(dir, s->points[0].id, &ran).ok());
  EXPECT_FALSE(ran);
  EXPECT_FALSE(RunPoint(dir, "../../etc/passwd", &ran).ok());

  // A known result for point 2, none for point 1.
  const json known = {{"id", s->points[2].id},
                      {"axes", s->points[2].axes},
                      {"metrics",
                       {{"base/bios", 100},
                        {"rfc/bios", 25},
                        {"base/runs", 7},
                        {"rfc/runs", 2},
                        {"rfc/extra", 1.5}}},
                      {"cpu_seconds", 2.0}};
  ASSERT_TRUE(WriteAtomic(dir + "/points/" + s->points[2].id + ".json", known.dump()).ok());
  auto t = Merge(dir);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->points, 3u);
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].id, s->points[0].id);  // expansion order
  EXPECT_EQ(t->rows[1].id, s->points[2].id);
  EXPECT_EQ(t->axes, std::vector<std::string>{"seed"});
  EXPECT_EQ(t->derived, (std::vector<std::string>{"gain", "d"}));
  EXPECT_EQ(t->metrics.front(), "base/allocator calls");  // sorted union
  EXPECT_NE(std::find(t->metrics.begin(), t->metrics.end(), "rfc/extra"), t->metrics.end());
  EXPECT_DOUBLE_EQ(t->rows[1].values[0], 0.25);
  EXPECT_DOUBLE_EQ(t->rows[1].values[1], -5);
  const std::string csv = TableCsv(*t);
  EXPECT_EQ(csv.substr(0, csv.find('\n')).rfind("id,seed,gain,d,base/allocator calls,", 0), 0u);
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  EXPECT_EQ(last.rfind(s->points[2].id + ",3,0.25,-5,", 0), 0u) << last;
  EXPECT_EQ(TableJson(*t)["rows"][1]["values"]["rfc/extra"], 1.5);
  auto maps = Heatmaps(*ReadSweep(dir), *t);
  ASSERT_TRUE(maps.ok()) << maps.status().message();
  ASSERT_EQ(maps->size(), 1u);
  size_t cells = 0;
  for (size_t at = 0; (at = (*maps)[0].second.find("class=\"c\"", at)) != std::string::npos; ++at)
    ++cells;
  EXPECT_EQ(cells, 9u);  // 3 × 3, two with values
  EXPECT_NE((*maps)[0].second.find("gain mean 0.25"), std::string::npos);

  auto slurm = Emit(dir, "slurm", "/bin/swaplab");
  ASSERT_TRUE(slurm.ok());
  EXPECT_NE(Slurp(*slurm).find("#SBATCH --array=0-2\n"), std::string::npos);
  auto par = Emit(dir, "parallel", "/bin/swaplab");
  ASSERT_TRUE(par.ok());
  EXPECT_EQ(Slurp(*par).substr(0, Slurp(*par).find('\n')),
            "'/bin/swaplab' sweep point '" + dir + "' '" + s->points[0].id + "'");
  std::system(("rm -rf " + dir).c_str());
}

TEST(SweepMerge, CsvEscapesWhatCameFromTheSpec) {
  Table t;
  t.axes = {"label, \"quoted\""};
  t.metrics = {"m"};
  t.points = 1;
  t.rows.push_back({"0123456789abcdef", {{"label, \"quoted\"", "red\x1b[31m÷"}}, {1.5}, 0, 0});
  EXPECT_EQ(TableCsv(t),
            "id,\"label, \"\"quoted\"\"\",m,cpu_seconds\n0123456789abcdef,red\\x1b[31m÷,1.5,0\n");
}

}  // namespace
}  // namespace swaplab::sweep
