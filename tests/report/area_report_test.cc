// SPDX-License-Identifier: MIT
// `swaplab area format|inspect`'s result: every header field as "field
// value" text, field,value CSV and one JSON document; what came from the
// disk or the command line (the path, the label, the raw signatures,
// error messages) escaped for the terminal, kept in one CSV cell and a
// valid JSON string.
#include "swaplab/report/area_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;

// A 256-page SWAPSPACE2 file with label `label`, no image.
hibernate::AreaWithImage Area(const std::string& path = "/tmp/a",
                              const std::string& label = "lab") {
  hibernate::AreaWithImage a;
  a.area.path = path;
  a.area.size_bytes = 256 * 4096;
  auto& h = a.area.header;
  h.signature = area::Signature::kSwapSpace2;
  h.magic = area::kSwapSpace2Sig;
  h.v1.last_page = 255;
  h.v1.bad_pages = {7, 9};
  h.nr_badpages = 2;
  h.v1.label = label;
  a.swapon = Status::Ok();
  return a;
}

// Path, label and swapon's refusal all `h`.
hibernate::AreaWithImage Refused(const std::string& h) {
  auto a = Area(h, h);
  a.swapon = Status(-EINVAL, h);
  return a;
}

TEST(AreaText, OneFieldALine) {
  const std::string t = AreaText(Area(), 10);
  EXPECT_EQ(t.substr(0, t.find("bdev")),
            "path             /tmp/a\ntype             regular file\n");
  EXPECT_THAT(t, HasSubstr("\nsize             1048576 bytes (256 pages)\n"));
  EXPECT_THAT(
      t, HasSubstr("\nsignature        " + std::string(area::Name(area::Signature::kSwapSpace2)) +
                   " (\"SWAPSPACE2\")\n"));
  EXPECT_THAT(t, HasSubstr("\nlast_page        255 (256 pages, header included)\n"));
  EXPECT_THAT(t, HasSubstr("\nbadpages         7,9\n"));
  EXPECT_THAT(t, HasSubstr("\nlabel            lab\n"));
  EXPECT_THAT(t, HasSubstr("\nhibernation      no image\nswapon           accepted\n"));
}

TEST(AreaText, ExtentsPastTheLimitAreCounted) {
  auto a = Area();
  a.area.extents = {{0, 10, 100}, {10, 5, 300}, {15, 1, 400}};
  const std::string t = AreaText(a, 1);
  EXPECT_THAT(t, HasSubstr("\nextent[0]        pages 0..9 -> blocks 100..109\n"
                           "extent[...]      2 more\n"));
}

TEST(AreaText, PathLabelAndSwaponsMessageAreEscaped) {
  const std::string h(report_test::kHostile);
  const auto a = Refused(h);
  const std::string t = AreaText(a, 10);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  const std::string p = Printable(h, 4096);
  EXPECT_THAT(t, HasSubstr("path             " + p + "\n"));
  EXPECT_THAT(t, HasSubstr("swapon           refused: " + p + "\n"));
}

TEST(AreaText, ARawSignatureIsEscaped) {
  auto a = Area();
  a.area.header.signature = area::Signature::kUnknown;
  a.area.header.magic = {'\x1b', '[', '2', 'J', '\0', 'a', 'b', 'c', 'd', '\xff'};
  const std::string t = AreaText(a, 10);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr("(\"\\x1b[2J\\x00abcd\\xff\")\n"));
}

TEST(AreaCsv, HeaderThenOneFieldARow) {
  const auto rows = report_test::ParseCsv(AreaCsv(Area()));
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"field", "value"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"path", "/tmp/a"}));
  EXPECT_THAT(AreaCsv(Area()), HasSubstr("\nbadpages,\"7,9\"\n"));
}

TEST(AreaCsv, EveryValueIsOneCell) {
  const std::string h(report_test::kHostile);
  const auto a = Refused(h);
  const std::string csv = AreaCsv(a);
  EXPECT_TRUE(report_test::TerminalSafe(csv)) << csv;
  const auto rows = report_test::ParseCsv(csv);
  for (const auto& r : rows) ASSERT_EQ(r.size(), 2u) << csv;
  EXPECT_EQ(rows[1][1], Printable(h, 4096));
}

TEST(AreaJson, FieldsByName) {
  const auto j = nlohmann::json::parse(AreaJson(Area()));
  EXPECT_EQ(j["path"], "/tmp/a");
  EXPECT_EQ(j["size_pages"], 256);
  EXPECT_EQ(j["magic"], "SWAPSPACE2");
  EXPECT_EQ(j["badpages"], nlohmann::json::array({7, 9}));
  EXPECT_EQ(j["label"], "lab");
  EXPECT_TRUE(j["hibernation"].is_null());
  EXPECT_TRUE(j["resume_offset"].is_null());
  EXPECT_EQ(j["swapon"]["accepted"], true);
}

TEST(AreaJson, BytesThatAreNoUtf8AreReplacedAndControlsEscaped) {
  const std::string h = "a\x1b[2J\xff\"\n";
  const auto a = Refused(h);
  std::string text;
  ASSERT_NO_THROW(text = AreaJson(a));
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["path"], "a\x1b[2J\xef\xbf\xbd\"\n");
  EXPECT_EQ(j["label"], "a\x1b[2J\xef\xbf\xbd\"\n");
  EXPECT_EQ(j["swapon"]["message"], "a\x1b[2J\xef\xbf\xbd\"\n");
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(AreaFormatText, WhatMkswapPrints) {
  EXPECT_EQ(AreaFormatText(Area()),
            "Set up swap space version 1 on /tmp/a: 256 pages (1012 KiB usable), LABEL=lab, "
            "UUID=" +
                area::UuidToString({}) + "\n");
}

TEST(AreaFormatText, PathLabelAndSwaponsRefusalAreEscaped) {
  const std::string h(report_test::kHostile);
  const auto a = Refused(h);
  const std::string t = AreaFormatText(a);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr("warning: swapon would refuse it: " + Printable(h, 1024) + "\n"));
}

}  // namespace
}  // namespace swaplab::report
