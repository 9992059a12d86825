// SPDX-License-Identifier: MIT
// `vm hibernate` and `vm run` reports: kernel and model side by side as
// text and JSON, and what came from the guest (its release, accel note,
// console lines, warnings) or the command line (trace, device) escaped
// for the terminal and kept valid JSON.
#include "swaplab/report/vm_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/report_test_util.h"

namespace swaplab::report {
namespace {

using ::testing::HasSubstr;

vm::HibernateReport Hibernate(const std::string& s = "6.12.0") {
  vm::HibernateReport r;
  r.swap_pages = 1024;
  r.kernel.stream_pages = 10;
  r.model.stream_pages = 11;
  r.kernel.write_s = 0.5;
  r.kinfo.release = s;
  r.kinfo.accel = "kvm";
  r.kinfo.accel_why = s;
  r.kinfo.origin = s;
  r.kinfo.pm_lines = {"PM: " + s};
  r.minfo.policy = "linux-6.12";
  r.minfo.expected = 4;
  r.minfo.agree = 3;
  return r;
}

vm::VmRunResult GuestRun(const std::string& s = "6.12.0") {
  vm::VmRunResult r;
  r.release = s;
  r.accel = "kvm";
  r.policy = "linux-6.12";
  r.kernel_json = nlohmann::json{{"records", 9}, {"warnings", {"w " + s}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);  // as the guest prints it
  return r;
}

vm::VmRunOptions RunOptions(const std::string& s = "t") {
  vm::VmRunOptions o;
  o.trace = s + ".trace";
  o.device = s;
  o.out = s + ".out";
  o.vm.smp = 2;
  o.vm.mem_mib = 384;
  return o;
}

TEST(VmHibernateText, KernelAndModelSideBySide) {
  const std::string t = VmHibernateText(Hibernate());
  EXPECT_THAT(t, HasSubstr("kernel: Linux 6.12.0 in qemu, accel 6.12.0,"));
  EXPECT_THAT(t, HasSubstr("model: linux-6.12 (slot source"));
  EXPECT_THAT(t, HasSubstr("placement agreement 3/4 (75.00%)\n"));
  EXPECT_THAT(t, HasSubstr("\nstream pages                       10             11\n"));
  EXPECT_THAT(t, HasSubstr("\nwrite, s                        0.500              -\n"));
  EXPECT_THAT(t, HasSubstr("\n  PM: 6.12.0\n"));
}

TEST(VmHibernateText, WhatCameFromTheGuestIsEscaped) {
  const std::string t = VmHibernateText(Hibernate(std::string(report_test::kHostile)));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr("  PM: " + Printable(report_test::kHostile, 4096) + "\n"));
}

TEST(VmHibernateJson, KernelAndModelObjectsWithTheSameMetricNames) {
  const auto j = nlohmann::json::parse(VmHibernateJson(Hibernate()));
  EXPECT_EQ(j["kernel"]["stream_pages"], 10);
  EXPECT_EQ(j["model"]["stream_pages"], 11);
  EXPECT_EQ(j["kernel"]["release"], "6.12.0");
  EXPECT_EQ(j["kernel"]["write_s"], 0.5);
  EXPECT_TRUE(j["model"]["write_s"].is_null());
  EXPECT_EQ(j["model"]["agreement"], 0.75);
  EXPECT_EQ(j["kernel"]["pm_lines"][0], "PM: 6.12.0");
}

TEST(VmHibernateJson, GuestLinesThatAreNoUtf8StillMakeJsonStrings) {
  std::string text;
  ASSERT_NO_THROW(text = VmHibernateJson(Hibernate(std::string(report_test::kHostile))));
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(j["kernel"]["pm_lines"][0].get<std::string>().substr(0, 6), "PM: x\x1b");
}

TEST(VmRunText, WhereItRanAndTheGuestsWarnings) {
  const std::string t = VmRunText(RunOptions(), GuestRun());
  EXPECT_EQ(
      t.substr(0, t.find('\n') + 1),
      "vm run t.trace on Linux 6.12.0 (kvm, 2 CPUs, 384 MiB), device t: 9 records in 0.0 s in "
      "the guest, 0.0 s with boot\n");
  EXPECT_THAT(t, HasSubstr("\nwarning (in the guest): w 6.12.0\n"));
}

TEST(VmRunText, TraceDeviceReleaseAndWarningsAreEscaped) {
  const std::string h(report_test::kHostile);
  const std::string t = VmRunText(RunOptions(h), GuestRun(h));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_THAT(t, HasSubstr("vm run " + Printable(h, 4096) + ".trace on Linux "));
}

TEST(VmRunJson, TheGuestsKernelRunKeptWhole) {
  const auto j = nlohmann::json::parse(VmRunJson(RunOptions(), GuestRun()));
  EXPECT_EQ(j["trace"], "t.trace");
  EXPECT_EQ(j["device"], "t");
  EXPECT_EQ(j["out"], "t.out");
  EXPECT_EQ(j["vm"]["release"], "6.12.0");
  EXPECT_EQ(j["kernel_run"], nlohmann::json::parse(GuestRun().kernel_json));
}

TEST(VmRunJson, PathsAndReleaseThatAreNoUtf8StillMakeJsonStrings) {
  const std::string h(report_test::kHostile);
  std::string text;
  ASSERT_NO_THROW(text = VmRunJson(RunOptions(h), GuestRun(h)));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_TRUE(nlohmann::json::accept(text));
}

}  // namespace
}  // namespace swaplab::report
