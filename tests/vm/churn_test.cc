// SPDX-License-Identifier: MIT
// Seed 003 in a guest (vm_churn.h), the parts that need no guest: the
// agent's console lines, the load derived from a shipped scenario, the
// kernel's rows and the report. The guest runs are tests/vm/vm_patched.sh's
// `churn` step.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "swaplab/report/vm_report.h"
#include "swaplab/vm/vm_churn.h"
#include "swaplab/vm/vm_reproduce.h"
#include "swaplab/workload/shipped.h"

namespace swaplab::vm {
namespace {

const char kConsole[] =
    "[    1.0] swaplab-init: start at uptime 1.02 s, kernel 6.12.118-swaplab\n"
    "swaplab-init: swapfile.prefer_nonfull Y\n"
    "swaplab-churn: start processes 12 concurrent 12 growing 2 pages 2048..14336 zap 100/1000 "
    "swapped 15360 mix 1:4/16:1\n"
    "swaplab-churn: 8/12 processes, swap used 15000 pages, 2.0 s\n"
    "swaplab-churn: done processes 12 pages 98304 zapped 9830 kills 9 died 1 held 3 max_used 15800 "
    "seconds 3.95\n"
    "swaplab-churn: stat 16kB swpout 0 swpout_fallback 0\n"
    "[    6.0] swaplab-churn: stat 64kB swpout 3169 swpout_fallback 213 anon_fault_alloc 5000 "
    "anon_fault_fallback 7\n"
    "swaplab-churn: vmstat pswpout 70000 thp_swpout 0 thp_swpout_fallback 0\n";

TEST(ChurnConsole, TheAgentsLines) {
  auto r = ParseChurnConsole(kConsole);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->release, "6.12.118-swaplab");
  EXPECT_EQ(r->prefer_nonfull, 1);
  EXPECT_EQ(r->processes, 12u);
  EXPECT_EQ(r->pages, 98304u);
  EXPECT_EQ(r->zapped, 9830u);
  EXPECT_EQ(r->kills, 9u);
  EXPECT_EQ(r->died, 1u);
  EXPECT_EQ(r->held, 3u);
  EXPECT_EQ(r->max_swap_used, 15800u);
  EXPECT_DOUBLE_EQ(r->guest_s, 3.95);
  ASSERT_EQ(r->stats.size(), 2u);
  const MthpStat* s = r->Stat(64);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->swpout, 3169u);
  EXPECT_EQ(s->swpout_fallback, 213u);
  EXPECT_EQ(s->anon_fault_alloc, 5000);
  EXPECT_EQ(s->anon_fault_fallback, 7);
  EXPECT_EQ(r->Stat(16)->anon_fault_alloc, -1);  // a kernel that does not say
  EXPECT_EQ(r->Stat(128), nullptr);
  EXPECT_EQ(r->pswpout, 70000u);
  const auto rows = KernelRows(*r);
  EXPECT_DOUBLE_EQ(rows.at("64kB swpout"), 3169);
  EXPECT_DOUBLE_EQ(rows.at("64kB swpout_fallback"), 213);
  EXPECT_NEAR(rows.at("64kB failure rate %"), 100.0 * 213 / 3382, 1e-9);
  EXPECT_TRUE(std::isnan(rows.at("16kB failure rate %")));  // nothing tried: no rate
}

TEST(ChurnConsole, AnUnfinishedRunIsAnErrorWithTheConsolesTail) {
  const std::string cut =
      std::string(kConsole).substr(0, std::string(kConsole).find("swaplab-churn: done"));
  auto r = ParseChurnConsole(cut + "Out of memory: Killed process 7\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did not finish"), std::string::npos);
  EXPECT_NE(r.status().message().find("Out of memory"), std::string::npos);
  // The counters missing after "done": also unfinished.
  const std::string no_vmstat =
      std::string(kConsole).substr(0, std::string(kConsole).find("swaplab-churn: vmstat"));
  EXPECT_FALSE(ParseChurnConsole(no_vmstat).ok());
}

TEST(ChurnConsole, GarbageNumbersAreNotTakenForCounters) {
  auto r = ParseChurnConsole(
      "swaplab-churn: done processes 1 pages 2 zapped 3 kills 4 died 0 max_used 5 seconds 1\n"
      "swaplab-churn: stat 64kB swpout lots swpout_fallback 2\n"
      "swaplab-churn: stat kB swpout 1 swpout_fallback 2\n"
      "swaplab-churn: vmstat pswpout 1 thp_swpout 0 thp_swpout_fallback 0\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->stats.empty());
}

workload::Scenario Shipped(const std::string& name) {
  for (const auto& s : workload::ShippedScenarios())
    if (std::string(s.file) == "scenarios/" + name + ".json") {
      auto sc = workload::ParseScenario(s.json, s.file);
      EXPECT_TRUE(sc.ok());
      return *sc;
    }
  ADD_FAILURE() << "no shipped " << name;
  return {};
}

TEST(ChurnLoad, TheScaledScenariosStepIsTheAgentsLoad) {
  workload::Scenario sc = Shipped("nonfull-vs-free-8g");
  workload::ScaleScenario(sc, kNonfullVmScale);
  const auto& spec = std::get<workload::ChurnSpec>(sc.measured.at(0));
  auto l = ChurnLoadOf(spec, 7);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->processes, spec.processes);
  EXPECT_EQ(l->growing, spec.growing);
  EXPECT_EQ(l->min_pages, 2048u);   // 8M, not scaled
  EXPECT_EQ(l->max_pages, 14336u);  // 56M
  EXPECT_EQ(l->zap_permille, 100u);
  EXPECT_EQ(l->swapped_pages, spec.swapped_pages);
  EXPECT_EQ(l->seed, 7u);
  EXPECT_EQ(l->MixArg(), "1:4/16:1");
  EXPECT_EQ(sc.devices.at(0).pages * 4096, 256ull << 20);

  workload::ChurnSpec odd = spec;
  odd.mix = {{3, 1}};  // 12 KiB folios: no such mTHP size
  EXPECT_FALSE(ChurnLoadOf(odd, 1).ok());
  odd.mix = {{1024, 1}};  // 4 MiB: above PMD size
  EXPECT_FALSE(ChurnLoadOf(odd, 1).ok());
}

TEST(ChurnTable, ColumnsAreTheParameterAndTheModelsSearchOrder) {
  const auto cols = NonfullColumns(Shipped("nonfull-vs-free-10g"));
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].label, "Before");
  EXPECT_EQ(cols[0].append, "swapfile.prefer_nonfull=0");
  EXPECT_TRUE(cols[0].model_knobs.empty());
  EXPECT_EQ(cols[1].label, "After");
  EXPECT_EQ(cols[1].append, kNonfullFirstParam);
  ASSERT_EQ(cols[1].model_knobs.size(), 1u);
  EXPECT_EQ(cols[1].model_knobs[0], kNonfullFirstSearchKnob);
}

TEST(ChurnTable, BadOptionsAreRefusedBeforeAnyBoot) {
  NonfullTableOptions o;
  o.scenario = Shipped("nonfull-vs-free-8g");
  o.vm.kernel = "/nonexistent/bzImage";
  o.runs = 0;
  EXPECT_EQ(RunNonfullTable(o, nullptr).status().code(), -EINVAL);
  o.runs = 1;
  o.scenario = Shipped("rfc-shuffled");  // no build-churn step
  auto r = RunNonfullTable(o, nullptr);
  EXPECT_EQ(r.status().code(), -EINVAL);
  EXPECT_NE(r.status().message().find("build-churn"), std::string::npos);

  ChurnVmOptions c;
  c.load.processes = 1;
  c.load.concurrent = c.load.growing = c.load.min_pages = c.load.max_pages = 1;
  c.load.mix = {{1, 1}};
  c.memcg_bytes = 1024ull << 20;  // above the guest's memory
  EXPECT_EQ(RunChurnInVm(c, nullptr).status().code(), -EINVAL);
  c.memcg_bytes = 32ull << 20;
  c.mthp_kb = {48};
  EXPECT_EQ(RunChurnInVm(c, nullptr).status().code(), -EINVAL);
}

TEST(ChurnTable, TheReportHasTheKernelsTheModelsAndTheSeedsCells) {
  NonfullTableReport t;
  t.options.scenario = Shipped("nonfull-vs-free-8g");
  t.options.vm.kernel = "rfc-6.12";
  t.options.runs = 2;
  t.columns = NonfullColumns(t.options.scenario);
  t.rows = t.options.scenario.rows;
  t.mthp_kb = {64};
  auto r = ParseChurnConsole(kConsole);
  ASSERT_TRUE(r.ok());
  ChurnVmResult second = *r;
  second.stats[1].swpout_fallback = 413;
  t.kernel = {{*r, second}, {*r, *r}};
  t.model["64kB failure rate %"] = {{"Before", 22.7}, {"After", 13.9}};
  const std::string text = report::VmNonfullTableText(t);
  EXPECT_NE(text.find("seed 003 on a real kernel: rfc-6.12 (Linux 6.12.118-swaplab)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("313 [213-413]"), std::string::npos) << text;  // median of the two runs
  EXPECT_NE(text.find("22.7"), std::string::npos);
  EXPECT_NE(text.find("5000 [7]"), std::string::npos) << text;
  EXPECT_NE(text.find("189562"), std::string::npos) << text;  // the seed's cell
  const auto j = nlohmann::json::parse(report::VmNonfullTableJson(t));
  EXPECT_EQ(j["columns"]["Before"]["kernel"]["64kB swpout_fallback"]["median"], 313);
  EXPECT_EQ(j["columns"]["Before"]["kernel"]["64kB swpout_fallback"]["n"], 2);
  EXPECT_EQ(j["columns"]["After"]["model"]["64kB failure rate %"], 13.9);
  EXPECT_EQ(j["columns"]["Before"]["seed"]["64kB swpout_fallback"], 189562);
  EXPECT_TRUE(j["columns"]["Before"]["model"]["64kB swpout"].is_null());
  EXPECT_EQ(j["columns"]["After"]["runs"].size(), 2u);
  EXPECT_EQ(j["columns"]["After"]["runs"][0]["stats"]["64kB"]["swpout"], 3169);
}

}  // namespace
}  // namespace swaplab::vm
