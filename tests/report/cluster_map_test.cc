// SPDX-License-Identifier: MIT
// Cluster maps: the SVG holds one cell per cluster (or the aggregation its
// legend states), each coloured as the legend colours the allocator's list
// of that cluster, and every input string escaped.
#include "swaplab/report/cluster_map.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

#include "alloc/test_util.h"
#include "report/report_test_util.h"
#include "swaplab/report/svg.h"

namespace swaplab::report {
namespace {

using alloc::ClusterFlag;

struct Cell {
  std::string fill, title;
};

// The value of attribute `name` in the tag text `tag`, "" if absent.
std::string Attr(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  const size_t p = tag.find(key);
  if (p == std::string_view::npos) return "";
  const size_t v = p + key.size();
  return std::string(tag.substr(v, tag.find('"', v) - v));
}

// Each tag that starts with `open`, the text of the element right after it
// (`<next ...>TEXT</next>` or `<next>TEXT</next>`), by f(tag, text). No
// <regex>: GCC 12's warns inside its own headers at -O1 with sanitizers.
template <typename F>
void ForEachTagAndText(const std::string& svg, const std::string& open, const std::string& next,
                       F f) {
  for (size_t p = svg.find(open); p != std::string::npos; p = svg.find(open, p + 1)) {
    const size_t gt = svg.find('>', p);
    if (gt == std::string::npos) return;
    const std::string_view tag(svg.data() + p, gt - p);
    const std::string_view rest(svg.data() + gt + 1, svg.size() - gt - 1);
    if (rest.substr(0, next.size() + 1) != "<" + next) continue;
    const size_t text = rest.find('>');
    const size_t close = rest.find("</" + next + ">");
    if (text == std::string_view::npos || close == std::string_view::npos || close < text) continue;
    f(tag, std::string(rest.substr(text + 1, close - text - 1)));
  }
}

// The map cells (rect class "c" with their <title>) and the legend (fill of
// each list name), read from the SVG text.
std::vector<Cell> Cells(const std::string& svg) {
  std::vector<Cell> out;
  ForEachTagAndText(svg, "<rect class=\"c\" ", "title", [&](std::string_view tag, std::string t) {
    out.push_back({Attr(tag, "fill"), std::move(t)});
  });
  return out;
}
std::map<std::string, std::string> Legend(const std::string& svg) {
  std::map<std::string, std::string> out;
  ForEachTagAndText(svg, "<rect class=\"key\" ", "text",
                    [&](std::string_view tag, std::string t) { out[t] = Attr(tag, "fill"); });
  return out;
}

// The list name the legend must use for a cluster flag: the allocator's
// own name (allocator spec §1.7); a cluster on no list is "off-list".
std::string ListName(ClusterFlag f) {
  const std::string n(alloc::Name(f));
  return n == "none" ? "off-list" : n;
}

TEST(ClusterMap, CellsMatchTheAllocatorsLists) {
  // 16-slot clusters, 8 of them: cluster 0 nonfull (a bad page), one full,
  // one nonfull by a free, one frag (a new order-2 cluster), the rest free.
  alloc::test::Harness h(alloc::test::Options(4, 1));
  alloc::SwaponOptions o = alloc::test::Dev("a", 128);
  o.bad_pages = {3};
  const int t = h.On(o);
  std::vector<alloc::SwapEntry> e;
  for (int i = 0; i < 3; ++i) e.push_back(h.SwapOut(0, 3));  // 8 + 8 + 8 slots
  ASSERT_TRUE(h.PutDirect(e[2], 2).ok());
  EXPECT_GT(h.Off(0, 2), 0u);  // a new order-2 cluster, left on frag[2]
  auto m = SnapshotClusters(h.sys, t);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->cells.size(), h.Dv(t).nr_clusters);
  const std::string svg = ClusterMapSvg("known layout", {{"dev a", &*m}});
  const auto cells = Cells(svg);
  const auto legend = Legend(svg);
  ASSERT_EQ(cells.size(), h.Dv(t).nr_clusters);
  std::map<std::string, int> seen;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto info = h.Cl(t, i);
    const std::string list = ListName(info.flag);
    ASSERT_TRUE(legend.count(list)) << list << " missing from the legend";
    EXPECT_EQ(cells[i].fill, legend.at(list)) << "cluster " << i;
    EXPECT_EQ(cells[i].title.rfind("cluster " + std::to_string(i) + ": " + list + ", order " +
                                       std::to_string(info.order) + ", " +
                                       std::to_string(info.count) + "/16 slots",
                                   0),
              0u)
        << cells[i].title;
    ++seen[list];
  }
  // The layout holds four lists; the test shows each of them.
  for (const char* l : {"free", "nonfull", "frag", "full"}) EXPECT_GT(seen[l], 0) << l;
  EXPECT_NE(svg.find("one cell per cluster"), std::string::npos);
}

TEST(ClusterMap, ImageByDeltaAndItsRuns) {
  ClusterMap before, after;
  before.cluster_size = after.cluster_size = 16;
  before.cells.resize(6);
  after.cells.resize(6);
  after.cells[1].count = 16;
  after.cells[2].count = 4;
  after.cells[4].count = 3;
  before.cells[4].count = 3;  // not the image's
  after.cells[5].count = 9;
  MarkImageByDelta(after, before);
  EXPECT_EQ(after.cells[1].kind, CellKind::kImage);
  EXPECT_EQ(after.cells[2].image_slots, 4u);
  EXPECT_EQ(after.cells[4].kind, CellKind::kFree);
  EXPECT_EQ(after.run_starts, (std::vector<uint64_t>{1, 5}));
  const std::string svg = ClusterMapSvg("img", {{"after", &after}});
  EXPECT_NE(svg.find(">1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">2</text>"), std::string::npos);
  EXPECT_EQ(Legend(svg).at("image"), Colour(CellKind::kImage));
}

TEST(ClusterMap, AggregatesAMillionClustersAndSaysSo) {
  ClusterMap m;
  m.cells.resize(1000000);
  for (size_t i = 0; i < m.cells.size(); i += 3) {
    m.cells[i].kind = m.cells[i].list = CellKind::kFull;
    m.cells[i].count = 512;
  }
  MapSvgOptions o;
  o.max_cells = 10000;
  const std::string svg = ClusterMapSvg("big", {{"dev", &m}}, o);
  const auto cells = Cells(svg);
  EXPECT_EQ(cells.size(), 10000u);  // 100 clusters each
  EXPECT_NE(svg.find("each cell is 100 clusters"), std::string::npos);
  EXPECT_EQ(cells[0].title.rfind("clusters 0-99: 66 free, 34 full", 0), 0u) << cells[0].title;
  EXPECT_EQ(cells[0].fill, Colour(CellKind::kFree));
}

TEST(ClusterMap, TitleCaptionsRunsNoteAndNotesAreEscaped) {
  const std::string h(report_test::kHostile);
  ClusterMap m;
  m.cells.resize(4);
  m.cells[1].kind = CellKind::kImage;
  m.cells[1].image_slots = 3;
  m.run_starts = {1};
  m.runs_note = h;
  m.notes = {h};
  const std::string svg = ClusterMapSvg(h, {{h, &m}});
  EXPECT_EQ(report_test::WellFormed(svg), "");
  EXPECT_TRUE(report_test::XmlCharsSafe(svg));
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  const std::string e = XmlEscape(h);
  EXPECT_NE(svg.find("<title>" + e + "</title>"), std::string::npos);
  EXPECT_NE(svg.find(">" + e + " (4 clusters of 512 slots)</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(e + ": " + e + " (1 runs)"), std::string::npos) << svg;
  EXPECT_NE(svg.find(e + ": " + e + "</text>"), std::string::npos) << svg;
}

}  // namespace
}  // namespace swaplab::report
