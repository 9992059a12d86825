// SPDX-License-Identifier: MIT
// Strings from a sweep's spec and points (axis values, metric names, the
// title) reach the CSV, the SVG maps and the HTML page without C0 or C1
// control characters (U+009B is a terminal's CSI).
#include <gtest/gtest.h>

#include "swaplab/alloc/printable.h"
#include "swaplab/sweep/sweep.h"

namespace swaplab::sweep {
namespace {

using nlohmann::json;

const std::string kCsi = "\xc2\x9b";  // U+009B
const std::string kEsc = "\x1b";

bool Clean(const std::string& s) {
  return s.find(kCsi) == std::string::npos && s.find(kEsc) == std::string::npos &&
         s.find("\xc2\x85") == std::string::npos;
}

Table HostileTable() {
  Table t;
  t.axes = {"hole" + kCsi + "2J"};
  t.metrics = {"base/bios" + kEsc + "[2J", "m\xc2\x85"};
  Table::Row r;
  r.id = "0123456789abcdef";
  r.axes = {{t.axes[0], "16K" + kCsi + "31m"}};
  r.values = {1, 2};
  t.rows.push_back(r);
  t.points = 1;
  return t;
}

TEST(SweepEscape, CsvHasNoC0OrC1Controls) {
  const std::string csv = TableCsv(HostileTable());
  EXPECT_TRUE(Clean(csv)) << csv;
  EXPECT_NE(csv.find("\\u009b"), std::string::npos) << csv;
}

// Bytes that are not valid UTF-8 (a lone 0x9b is an 8-bit terminal's CSI;
// a cut sequence, 0xff) as \xNN; valid UTF-8 kept: the CSV is valid UTF-8.
TEST(SweepEscape, CsvEscapesBytesThatAreNotUtf8) {
  Table t;
  t.axes = {"a"};
  t.metrics = {"m"};
  Table::Row r;
  r.id = "0123456789abcdef";
  r.axes = {{"a", std::string("x\x9by\xffz\xe2\x82") + "\xc3\xa9\xe2\x82\xac"}};
  r.values = {1};
  t.rows.push_back(r);
  t.points = 1;
  const std::string csv = TableCsv(t);
  EXPECT_NE(csv.find("x\\x9by\\xffz\\xe2\\x82\xc3\xa9\xe2\x82\xac"), std::string::npos) << csv;
  for (size_t i = 0; i < csv.size();) {
    const size_t n = Utf8Length(csv, i);
    ASSERT_NE(n, 0u) << "byte " << i << " of the CSV is not UTF-8: " << csv;
    i += n;
  }
}

TEST(SweepEscape, SvgAndHtmlHaveNoC0OrC1Controls) {
  const Table t = HostileTable();
  const json sweep = {
      {"name", "n" + kCsi},
      {"scale", 1},
      {"points", {{{"id", t.rows[0].id}, {"axes", t.rows[0].axes}}}},
      {"spec",
       {{"title", "t" + kCsi + kEsc},
        {"axes", json::array()},
        {"heatmaps",
         {{{"name", "m"}, {"x", t.axes[0]}, {"y", t.axes[0]}, {"value", t.metrics[0]}}}}}}};
  auto maps = Heatmaps(sweep, t);
  ASSERT_TRUE(maps.ok()) << maps.status().message();
  ASSERT_EQ(maps->size(), 1u);
  EXPECT_TRUE(Clean((*maps)[0].second));
  EXPECT_TRUE(Clean(SweepHtml(sweep, t, *maps)));
}

}  // namespace
}  // namespace swaplab::sweep
