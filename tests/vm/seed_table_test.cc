// SPDX-License-Identifier: MIT
// reproduce --vm's sizes: seed 001's image and devices times the scale,
// guest memory from the image, refusals (vm_reproduce.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "swaplab/report/vm_report.h"
#include "swaplab/vm/vm_reproduce.h"

namespace swaplab::vm {
namespace {

using workload::RfcLayout;

TEST(SeedTable, SizesScaleTheSeeds) {
  SeedTableOptions o;
  o.scale = 1.0 / 64;
  o.vm.mem_mib = 0;
  auto s = SeedLayoutOptions(o, RfcLayout::kShuffled);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->image_bytes, 80ull << 20);  // 5 GiB / 64
  EXPECT_EQ(s->swap_bytes, 128ull << 20);  // 6 GiB / 64 = 96 MiB < 80 MiB + the guest's own 48
  EXPECT_EQ(s->vm.mem_mib, 384);           // 3 x 80 MiB is below the floor
  EXPECT_TRUE(s->resume);
  EXPECT_EQ(s->compress, hibernate::Compressor::kNone);
  auto h = SeedLayoutOptions(o, RfcLayout::kHoles);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->swap_bytes, 192ull << 20);  // 12 GiB / 64
  EXPECT_EQ(h->image_bytes, s->image_bytes);
  o.scale = 1.0 / 5;
  auto big = SeedLayoutOptions(o, RfcLayout::kShuffled);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->image_bytes, 1024ull << 20);
  EXPECT_EQ(big->swap_bytes, 1229ull << 20);  // 6 GiB / 5, the seed's proportion
  EXPECT_EQ(big->vm.mem_mib, 3072);
  o.vm.mem_mib = 2000;  // the caller's memory is kept
  EXPECT_EQ(SeedLayoutOptions(o, RfcLayout::kShuffled)->vm.mem_mib, 2000);
}

TEST(SeedTable, EachLayoutReadsWithTheEngineAskedFor) {
  SeedTableOptions o;
  EXPECT_EQ(SeedLayoutOptions(o, RfcLayout::kShuffled)->io, area::EngineKind::kAuto);
  for (auto kind : {area::EngineKind::kPosix, area::EngineKind::kUring, area::EngineKind::kSim}) {
    o.io = kind;  // reproduce --vm --io KIND
    EXPECT_EQ(SeedLayoutOptions(o, RfcLayout::kShuffled)->io, kind);
    EXPECT_EQ(SeedLayoutOptions(o, RfcLayout::kHoles)->io, kind);
  }
}

TEST(SeedTable, RefusesScalesAndLayoutsItCannotRun) {
  SeedTableOptions o;
  for (double bad : {0.0, -1.0, 1.0 / 4, 1.0 / 129, 1.0}) {
    o.scale = bad;
    auto r = SeedLayoutOptions(o, RfcLayout::kShuffled);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), -EINVAL);
    EXPECT_NE(r.status().message().find("outside"), std::string::npos) << r.status().message();
  }
  o.scale = 1.0 / 64;
  auto f = SeedLayoutOptions(o, RfcLayout::kFresh);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), -EINVAL);
}

TEST(RfcTable, ColumnsAreOneKernelBootedThreeWays) {
  const auto c = RfcColumns();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].name, "base");
  // seed 001's base is mm-new's allocator: nonfull before free (seed 003).
  for (const auto& col : c) {
    EXPECT_NE(col.append.find("swapfile.prefer_nonfull=1"), std::string::npos) << col.name;
    ASSERT_EQ(col.model_knobs.size(), 1u);
    EXPECT_TRUE(ModelPolicy("linux-6.12", col.model_knobs).ok()) << col.model_knobs[0];
  }
  EXPECT_EQ(c[0].append.find("hibernate_"), std::string::npos);
  EXPECT_EQ(c[0].model_source, hibernate::SlotSourceKind::kBase);
  EXPECT_EQ(c[1].name, "allocator");
  EXPECT_NE(c[1].append.find("hibernate_alloc=clusters"), std::string::npos);
  EXPECT_EQ(c[1].append.find("hibernate_bio"), std::string::npos);
  EXPECT_EQ(c[1].model_source, hibernate::SlotSourceKind::kFreeClustersSorted);
  EXPECT_FALSE(c[1].bio_runs);
  EXPECT_EQ(c[2].name, "allocator + bio");
  EXPECT_NE(c[2].append.find("hibernate_bio=runs"), std::string::npos);
  EXPECT_TRUE(c[2].bio_runs);
}

TEST(RfcTable, RefusesRunCountsAndEmptyColumnsBeforeBooting) {
  RfcTableOptions o;
  o.table.vm.qemu = "/nonexistent/qemu";  // never reached
  for (int runs : {0, -1, kMaxRfcRuns + 1}) {
    o.runs = runs;
    auto r = RunRfcTable(o, nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), -EINVAL);
    EXPECT_NE(r.status().message().find("--runs"), std::string::npos);
  }
  o.runs = 1;
  o.columns.clear();
  auto r = RunRfcTable(o, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), -EINVAL);
}

// The "+ host CPU" rows: the model's seconds plus the profile's price per
// bio (per run in the allocator + bio column, per page in the others).
TEST(RfcTable, HostCpuRowsPriceEachColumnsOwnBios) {
  RfcTableReport t;
  t.options.runs = 1;
  RfcLayoutTable lt;
  lt.layout = RfcLayout::kHoles;
  for (const RfcColumn& col : RfcColumns()) {
    HibernateReport r;
    r.kinfo.release = "6.12.118-swaplab";
    r.kernel.write_s = 0.20;
    r.kernel.read_s = 0.25;
    r.model.write_s = r.model.write_s_per_run = 0.10;
    r.model.read_s = r.model.read_s_per_run = 0.12;
    r.model.bios_per_page = 10000;
    r.model.bios_per_run = 100;
    r.model.alloc_calls = 10000;
    lt.cells.push_back({col, {r}});
  }
  t.layouts.push_back(lt);
  workload::HostCpuCost cpu;
  cpu.label = "test prices";
  cpu.write_bio_us = 4;
  cpu.read_bio_us = 5;
  cpu.alloc_call_us = 1;
  const auto j = nlohmann::json::parse(report::VmRfcTableJson(t, &cpu));
  const auto& holes = j["layouts"]["holes"];
  // base: 0.10 s + 10000 x 4 us + 10000 x 1 us; allocator + bio: 100 bios.
  EXPECT_NEAR(holes["base"]["model"]["write_host_cpu_s"]["median"].get<double>(), 0.15, 1e-9);
  EXPECT_NEAR(holes["base"]["model"]["read_host_cpu_s"]["median"].get<double>(), 0.17, 1e-9);
  EXPECT_NEAR(holes["allocator + bio"]["model"]["write_host_cpu_s"]["median"].get<double>(), 0.1104,
              1e-9);
  EXPECT_NEAR(holes["allocator + bio"]["model"]["read_host_cpu_s"]["median"].get<double>(), 0.1205,
              1e-9);
  EXPECT_EQ(j["host_cpu"]["label"], "test prices");
  const std::string text = report::VmRfcTableText(t, &cpu);
  EXPECT_NE(text.find("write + host CPU, s"), std::string::npos) << text;
  EXPECT_NE(text.find("host CPU prices (+ host CPU rows): test prices"), std::string::npos);
  // Without prices: no such rows.
  EXPECT_EQ(report::VmRfcTableText(t, nullptr).find("host CPU"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(report::VmRfcTableJson(t, nullptr)).contains("host_cpu"));
}

}  // namespace
}  // namespace swaplab::vm
