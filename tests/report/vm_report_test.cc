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
using ::testing::Not;

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

TEST(VmRunText, BootsMadeAgainAreNotedByWhy) {
  vm::VmRunResult r = GuestRun();
  EXPECT_THAT(VmRunText(RunOptions(), r), Not(HasSubstr("made again")));
  r.retries.kernel_failure = 1;
  std::string t = VmRunText(RunOptions(), r);
  EXPECT_THAT(t,
              HasSubstr("\nnote: the guest kernel failed before its init (1 boot made again)\n"));
  EXPECT_THAT(t, Not(HasSubstr("block I/O")));
  r.retries.hang = 2;
  t = VmRunText(RunOptions(), r);
  EXPECT_THAT(t, HasSubstr("\nnote: the guest's block I/O hung (2 boots made again)\n"));
  const auto j = nlohmann::json::parse(VmRunJson(RunOptions(), r));
  EXPECT_EQ(j["vm"]["hang_retries"], 2);
  EXPECT_EQ(j["vm"]["kernel_failure_retries"], 1);
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

// Seed 001's table on the guest kernel: each layout's hibernation beside
// the model's, as `reproduce --vm` prints it.
vm::SeedTableReport SeedTable(const std::string& release = "6.12.0") {
  vm::SeedTableReport t;
  t.options.scale = 1.0 / 64;
  for (auto layout : {workload::RfcLayout::kShuffled, workload::RfcLayout::kHoles}) {
    vm::HibernateReport r = Hibernate(release);
    r.options.layout = layout;
    r.options.swap_bytes = layout == workload::RfcLayout::kShuffled ? 128ull << 20 : 192ull << 20;
    r.options.image_bytes = 80ull << 20;
    r.kernel.bios_per_page = 20480;
    r.model.bios_per_page = 20480;
    r.model.alloc_calls = 20480;
    r.model.write_s = 2.0;
    r.minfo.model_wall_s = 0.5;
    r.kinfo.boot_wall_s = 20;  // the VM's boots: 40x the model's answer
    t.layouts.push_back(r);
  }
  t.layouts[1].kernel.stream_pages = 12;
  return t;
}

workload::HostCpuCost Prices() {
  workload::HostCpuCost c;
  c.label = "test prices";
  c.write_bio_us = 100;  // 20480 bios: +2.048 s
  c.alloc_call_us = 50;  // 20480 calls: +1.024 s
  return c;
}

TEST(VmSeedTableText, BothLayoutsKernelBesideModel) {
  const std::string t = VmSeedTableText(SeedTable(), nullptr);
  EXPECT_THAT(t, HasSubstr("seed 001 on a real kernel: Linux 6.12.0 in qemu, accel 6.12.0,"));
  EXPECT_THAT(t, HasSubstr(" shuffled swap 128 MiB, image ~80 MiB; holes swap 192 MiB, image"));
  EXPECT_THAT(t, HasSubstr("\nstream pages                       10         11         12         "
                           "11\n"));
  EXPECT_THAT(t, HasSubstr("\nwrite, s                        0.500      2.000      0.500      "
                           "2.000\n"));
  EXPECT_THAT(t, HasSubstr("placement agreement 3/4\n"));
  EXPECT_THAT(t, Not(HasSubstr("host CPU")));
}

TEST(VmSeedTableText, HostCpuRowsAddThePricedWork) {
  const workload::HostCpuCost c = Prices();
  const std::string t = VmSeedTableText(SeedTable(), &c);
  EXPECT_THAT(t, HasSubstr("host CPU prices: test prices\n"));
  // 2.000 modelled + 2.048 for the bios + 1.024 for the allocator calls
  EXPECT_THAT(t, HasSubstr("\nwrite + host CPU, s                 -      5.072          -      "
                           "5.072\n"));
}

TEST(VmSeedTableText, WhatCameFromTheGuestIsEscaped) {
  const std::string t = VmSeedTableText(SeedTable(std::string(report_test::kHostile)), nullptr);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
  EXPECT_EQ(VmSeedTableText(vm::SeedTableReport{}, nullptr), "reproduce --vm: no layout ran\n");
}

TEST(VmSeedTableJson, OneDocumentPerLayoutAndTheWallRatio) {
  const workload::HostCpuCost c = Prices();
  const auto j = nlohmann::json::parse(VmSeedTableJson(SeedTable(), &c));
  EXPECT_EQ(j["policy"], "linux-6.12");
  EXPECT_EQ(j["host_cpu"]["label"], "test prices");
  ASSERT_TRUE(j["layouts"].contains("shuffled"));
  ASSERT_TRUE(j["layouts"].contains("holes"));
  EXPECT_EQ(j["layouts"]["holes"]["kernel"]["stream_pages"], 12);
  EXPECT_NEAR(j["layouts"]["shuffled"]["model"]["write_host_cpu_s"].get<double>(), 5.072, 1e-9);
  EXPECT_EQ(j["layouts"]["shuffled"]["vm_over_model_wall"], 40.0);
  EXPECT_FALSE(
      nlohmann::json::parse(VmSeedTableJson(SeedTable(), nullptr))["layouts"]["holes"]["model"]
          .contains("write_host_cpu_s"));
}

// Seed 001's columns on the patched kernel: each cell a few runs, shown as
// the median [min-max], seconds also against the first column.
vm::RfcTableReport RfcTable(const std::string& release = "6.12.0") {
  vm::RfcTableReport t;
  t.options.runs = 2;
  t.options.columns = {vm::RfcColumn{"base", "", {}, hibernate::SlotSourceKind::kBase, false},
                       vm::RfcColumn{"allocator + bio",
                                     "hibernate_bio=runs",
                                     {},
                                     hibernate::SlotSourceKind::kFreeClustersSorted,
                                     true}};
  vm::RfcLayoutTable lt;
  lt.layout = workload::RfcLayout::kShuffled;
  const double writes[2][2] = {{10.0, 12.0}, {4.0, 5.0}};
  for (size_t c = 0; c < 2; ++c) {
    vm::RfcCell cell;
    cell.column = t.options.columns[c];
    for (double w : writes[c]) {
      vm::HibernateReport r = Hibernate(release);
      r.kernel.write_s = w;
      r.kernel.runs_disk_order = c ? 3 : 700;
      r.kernel.kernel_write_bios = c ? 40 : -1;  // the patched kernel counts its bios
      r.kernel.bios_per_page = 20480;
      r.minfo.image_expected = 100;
      r.minfo.image_agree = 100;
      cell.runs.push_back(r);
    }
    lt.cells.push_back(cell);
  }
  t.layouts.push_back(lt);
  return t;
}

TEST(VmRfcTableText, MediansRangesAndTheChangeAgainstBase) {
  const std::string t = VmRfcTableText(RfcTable(), nullptr);
  EXPECT_THAT(t, HasSubstr("2 run(s) per cell, medians [min-max]"));
  EXPECT_THAT(t, HasSubstr(" base = (no parameter); allocator + bio = hibernate_bio=runs;\n"));
  EXPECT_THAT(t, HasSubstr("\nShuffled free list (swap 128 MiB, image ~64 MiB asked, 10 stream "
                           "pages)\n"));
  // base: the median of 10 and 12; allocator + bio against base's 11.00
  EXPECT_THAT(t, HasSubstr("\n  write, s                     11.00 [10.00-12.00]   4.50 (-59%) "
                           "[4.00-5.00]\n"));
  // the kernel's bios: one per page where it prints no count, else its own
  EXPECT_THAT(t, HasSubstr("\n  bios                                       20.5K                   "
                           "     40\n"));
  EXPECT_THAT(t, HasSubstr("\n  image slots agree                        100.00%                   "
                           "100.00%\n"));
  EXPECT_THAT(t, HasSubstr("seed 001 (5.0G image, 4 CPUs)\n"));  // the shipped seed cells
  EXPECT_EQ(VmRfcTableText(vm::RfcTableReport{}, nullptr), "reproduce --vm: nothing ran\n");
}

TEST(VmRfcTableText, WhatCameFromTheGuestIsEscaped) {
  const std::string t = VmRfcTableText(RfcTable(std::string(report_test::kHostile)), nullptr);
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
}

TEST(VmRfcTableJson, SpreadsPerCellAndTheSeedsNumbers) {
  const auto j = nlohmann::json::parse(VmRfcTableJson(RfcTable(), nullptr));
  EXPECT_EQ(j["runs_per_cell"], 2);
  const auto& base = j["layouts"]["shuffled"]["base"];
  EXPECT_EQ(base["kernel"]["write_s"]["median"], 11.0);
  EXPECT_EQ(base["kernel"]["write_s"]["min"], 10.0);
  EXPECT_EQ(base["kernel"]["write_s"]["n"], 2);
  EXPECT_EQ(base["kernel"]["bios"]["median"], 20480);  // no count printed: one bio per page
  const auto& both = j["layouts"]["shuffled"]["allocator + bio"];
  EXPECT_EQ(both["boot_parameters"], "hibernate_bio=runs");
  EXPECT_EQ(both["kernel"]["bios"]["median"], 40);  // the kernel's own count
  EXPECT_EQ(both["model"]["image_agreement"]["min"], 1.0);
  EXPECT_TRUE(base["seed"]["write_s"].is_number()) << base["seed"].dump();
  EXPECT_EQ(both["runs"].size(), 2u);
}

// Seed 003's table on the patched kernel: prefer_nonfull off and on, the
// kernel's mTHP counters beside the model's and the seed's.
vm::NonfullTableReport NonfullTable(const std::string& release = "6.12.0") {
  vm::NonfullTableReport t;
  t.options.runs = 2;
  t.options.vm.kernel = "rfc-6.12";
  t.options.scenario.name = "nonfull-vs-free-8g";
  t.options.scenario.seed_reported.source = "seed 003";
  t.options.scenario.seed_reported.cells["64kB swpout"] = {{"Before", "1.2M"}, {"After", "1.5M"}};
  t.mthp_kb = {64};
  t.columns = {vm::NonfullColumn{"Before", "swapfile.prefer_nonfull=0", {}},
               vm::NonfullColumn{"After", "swapfile.prefer_nonfull=1", {"prefer_nonfull=1"}}};
  t.rows = {"64kB swpout", "64kB failure rate %"};
  const uint64_t out[2][2] = {{100, 140}, {300, 300}};
  for (size_t c = 0; c < 2; ++c) {
    t.kernel.emplace_back();
    for (uint64_t o : out[c]) {
      vm::ChurnVmResult r;
      r.release = release;
      r.accel = "tcg";
      r.guest_s = 2.0;
      r.stats.push_back(vm::MthpStat{64, o, 100, 500, 20});
      t.kernel.back().push_back(r);
    }
  }
  t.model["64kB swpout"] = {{"Before", 120}, {"After", 310}};
  return t;
}

TEST(VmNonfullTableText, KernelModelAndSeedRows) {
  const std::string t = VmNonfullTableText(NonfullTable());
  EXPECT_THAT(t, HasSubstr("seed 003 on a real kernel: rfc-6.12 (Linux 6.12.0) in qemu (tcg)"));
  EXPECT_THAT(t,
              HasSubstr(" Before = swapfile.prefer_nonfull=0; After = swapfile.prefer_nonfull=1;"));
  // kernel: the median of 100 and 140 swap-outs, and 100 fallbacks of 200
  // tries (50 %) and of 240 (41.7 %)
  EXPECT_THAT(t, HasSubstr("120 [100-140]"));
  EXPECT_THAT(t, HasSubstr("45.8 [41.7-50.0]"));
  EXPECT_THAT(t, HasSubstr("  64kB faulted [fell back]"));
  EXPECT_THAT(t, HasSubstr("500 [20]"));
  EXPECT_THAT(t, HasSubstr("model (linux-6.12)\n"));
  EXPECT_THAT(t, HasSubstr("310"));
  EXPECT_THAT(t, HasSubstr("seed 003 (full size)\n"));
  EXPECT_THAT(t, HasSubstr("1.5M"));
  EXPECT_EQ(VmNonfullTableText(vm::NonfullTableReport{}), "reproduce --vm: nothing ran\n");
}

TEST(VmNonfullTableText, WhatCameFromTheGuestIsEscaped) {
  const std::string t = VmNonfullTableText(NonfullTable(std::string(report_test::kHostile)));
  EXPECT_TRUE(report_test::TerminalSafe(t)) << t;
}

TEST(VmNonfullTableJson, ColumnsWithKernelModelSeedAndRuns) {
  const auto j = nlohmann::json::parse(VmNonfullTableJson(NonfullTable()));
  EXPECT_EQ(j["scenario"], "nonfull-vs-free-8g");
  EXPECT_EQ(j["release"], "6.12.0");
  const auto& before = j["columns"]["Before"];
  EXPECT_EQ(before["boot_parameters"], "swapfile.prefer_nonfull=0");
  EXPECT_EQ(before["kernel"]["64kB swpout"]["median"], 120);
  EXPECT_EQ(before["model"]["64kB swpout"], 120);
  EXPECT_TRUE(before["model"]["64kB failure rate %"].is_null());
  EXPECT_DOUBLE_EQ(before["seed"]["64kB swpout"].get<double>(), 1.2e6);
  EXPECT_EQ(j["columns"]["After"]["model_knobs"][0], "prefer_nonfull=1");
  EXPECT_EQ(before["runs"].size(), 2u);
  std::string text;
  ASSERT_NO_THROW(text = VmNonfullTableJson(NonfullTable(std::string(report_test::kHostile))));
  EXPECT_TRUE(nlohmann::json::accept(text));
}

}  // namespace
}  // namespace swaplab::report
