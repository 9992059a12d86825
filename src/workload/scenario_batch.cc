// Several scenarios in one go (scenario_batch.h).
#include "swaplab/workload/scenario_batch.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "swaplab/workload/shipped.h"
#include "swaplab/workload/temp_files.h"

namespace swaplab::workload {

Result<std::vector<ScenarioResult>> RunScenarios(const std::vector<Scenario>& scenarios,
                                                 const RunOptions& ro) {
  InstallTempFileCleanup();  // a real-file device's area goes on Ctrl-C too
  // The image writer allocates and frees a private copy per page in
  // flight: keep freed memory in the process instead of returning it to
  // the kernel and faulting it in again (a third of the time otherwise).
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::vector<std::optional<Result<ScenarioResult>>> out(scenarios.size());
  std::vector<size_t> pool;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const auto& sc = scenarios[i];
    if (sc.parallel && !sc.devices[0].real_file && ro.jobs > 1) {
      pool.push_back(i);
      continue;
    }
    if (ro.progress) ro.progress(sc.name + ": seed " + std::to_string(sc.seed) + "\n");
    out[i] = RunScenario(sc, ro);
    if (!out[i]->ok()) break;
  }
  // Largest devices first (longest scenarios), so the last one is short.
  std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) {
    return scenarios[a].devices[0].pages * scenarios[a].variants.size() >
           scenarios[b].devices[0].pages * scenarios[b].variants.size();
  });
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  for (const auto& r : out) failed = failed || (r && !r->ok());
  RunOptions one = ro;
  one.jobs = 1;
  auto worker = [&] {
    for (size_t k; !failed && (k = next.fetch_add(1)) < pool.size();) {
      auto r = RunScenario(scenarios[pool[k]], one);
      if (!r.ok()) failed = true;
      out[pool[k]] = std::move(r);
    }
  };
  std::vector<std::thread> th;
  for (int t = 1; t < ro.jobs; ++t) th.emplace_back(worker);
  worker();
  for (auto& t : th) t.join();
  std::vector<ScenarioResult> results;
  for (auto& r : out) {
    if (!r) continue;
    if (!r->ok()) return r->status();
    results.push_back(std::move(*r).value());
  }
  return results;
}

Result<std::vector<Scenario>> ShippedInReportOrder() {
  std::vector<Scenario> all;
  for (const auto& s : ShippedScenarios()) {
    auto sc = ParseScenario(s.json, s.file);
    if (!sc.ok()) return sc.status();
    all.push_back(*sc);
  }
  // The seeds' priority order; real-I/O tables right after their models.
  static const std::vector<std::string> kGroups = {"rfc-shuffled",    "rfc-holes",
                                                   "nonfull-vs-free", "slot-cache-vs-percpu",
                                                   "rfc-open-cases",  "rfc-review"};
  auto rank = [&](const Scenario& sc) {
    return std::find(kGroups.begin(), kGroups.end(), sc.group) - kGroups.begin();
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return all;
}

}  // namespace swaplab::workload
