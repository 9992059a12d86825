// SPDX-License-Identifier: MIT
// `swaplab image write|read`'s results: the batch's bios, the write's and
// the read's figures as JSON and "key  value" lines, and what came from
// outside (the area's path, the dump file, swsusp_info's strings and the
// kernel banner read from the image) escaped in both.
#include "swaplab/report/image_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

workload::ImageWriteResult Write(const std::string& area = "/tmp/a") {
  workload::ImageWriteResult r;
  r.options.area = area;
  r.options.batch_name = "per-page";
  r.max_pages = 1;
  r.report.stream_pages = 3;
  r.report.batch.bios = 3;
  r.report.batch.pages = 3;
  r.report.batch.bio_sizes = {{1, 3}};
  return r;
}

// A read of a kernel image without an architecture header: its utsname
// strings and banner are bytes from the image.
workload::ImageReadResult Read(const std::string& s = "x") {
  workload::ImageReadResult r;
  r.options.area = "/tmp/" + s;
  r.options.dump = s + ".dump";
  hibernate::ReadReport rep;
  rep.info.origin = hibernate::ImageOrigin::kKernelGeneric;
  rep.info.sysname = "Linux";
  rep.info.release = s;
  rep.info.machine = s;
  rep.kernel_banner = "Linux version " + s;
  rep.banner_page = 9;
  rep.stream_pages = 4;
  rep.batch.bio_sizes = {{2, 1}, {1, 2}};
  r.read = rep;
  return r;
}

TEST(BatchJson, CountsAndSizesByPages) {
  hibernate::BatchStats b;
  b.bios = 3;
  b.pages = 5;
  b.bio_sizes = {{1, 1}, {4, 1}};
  EXPECT_EQ(BatchJson(b).dump(), R"({"bios":3,"sync_ios":0,"pages":5,"drains":0,)"
                                 R"("partial_waits":0,"bio_sizes":{"1":1,"4":1}})");
}

TEST(ImageWriteJson, FiguresAndNoCompressionFieldsUncompressed) {
  const auto j = ImageWriteJson(Write());
  EXPECT_EQ(j["area"], "/tmp/a");
  EXPECT_EQ(j["batch"], "per-page");
  EXPECT_EQ(j["stream_pages"], 3);
  EXPECT_EQ(j["bytes"], 3 * 4096);
  EXPECT_EQ(j["bio_sizes"]["1"], 3);
  EXPECT_FALSE(j.contains("crc32"));
}

TEST(ImageWriteJson, CompressionFieldsWhenCompressed) {
  auto r = Write();
  r.options.compress = hibernate::Compressor::kLzo;
  r.report.crc32 = 7;
  EXPECT_EQ(ImageWriteJson(r)["crc32"], 7);
}

TEST(ImageWriteText, OneKeyValueLinePerMember) {
  const std::string t = ImageWriteText(Write());
  EXPECT_EQ(t.substr(0, t.find('\n', t.find('\n') + 1) + 1),
            "area                     /tmp/a\nbatch                    per-page\n");
  EXPECT_THAT(t, HasSubstr("\nbio_sizes                {\"1\":3}\n"));
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'),
            static_cast<long>(ImageWriteJson(Write()).size()));
}

TEST(ImageWriteText, TheAreaIsEscaped) {
  const auto r = Write(std::string(report_test::kHostile));
  const std::string t = ImageWriteText(r);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr(Printable(report_test::kHostile, 4096)));
  EXPECT_NO_THROW((void)ImageWriteJson(r).dump());
}

TEST(ImageReadJson, TheReadsChecksInfoAndBanner) {
  const auto j = ImageReadJson(Read());
  EXPECT_EQ(j["origin"], hibernate::Name(hibernate::ImageOrigin::kKernelGeneric));
  EXPECT_EQ(j["crc"], "none");
  EXPECT_EQ(j["swsusp_info"]["uts"]["sysname"], "Linux");
  EXPECT_EQ(j["swsusp_info"]["uts"]["release"], "x");
  EXPECT_EQ(j["kernel_banner"], "Linux version x");
  EXPECT_EQ(j["kernel_banner_page"], 9);
  EXPECT_EQ(j["io"], "pipelined");
  EXPECT_EQ(j["dump"], "x.dump");
  EXPECT_FALSE(j.contains("units"));  // uncompressed
}

TEST(ImageReadJson, StringsFromTheImageAndTheCommandLineAreEscaped) {
  const auto j = report_test::Redump(ImageReadJson(Read(std::string(report_test::kHostile))));
  const std::string p = Printable(report_test::kHostile, 4096);
  EXPECT_EQ(j["area"], "/tmp/" + p);
  EXPECT_EQ(j["dump"], p + ".dump");
  EXPECT_EQ(j["swsusp_info"]["uts"]["release"], p);
  EXPECT_EQ(j["kernel_banner"], "Linux version " + p);
}

TEST(ImageReadText, NestedKeysJoinedWithDotsAndBioSizesOnOneLine) {
  const std::string t = ImageReadText(Read());
  EXPECT_THAT(t, HasSubstr("\nswsusp_info.uts.release      x\n"));
  EXPECT_THAT(t, HasSubstr("\nheader.flags                 0\n"));
  EXPECT_THAT(t, HasSubstr("\nbio_sizes                    {\"1\":2,\"2\":1}\n"));
  EXPECT_THAT(t, Not(HasSubstr("bio_sizes.")));
}

TEST(ImageReadText, StringsFromTheImageAreEscaped) {
  const std::string t = ImageReadText(Read(std::string(report_test::kHostile)));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr("kernel_banner                Linux version " +
                           Printable(report_test::kHostile, 4096) + "\n"));
}

}  // namespace
}  // namespace swaplab::report
