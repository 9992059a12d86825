// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text as DIR/sweep.json. What the schema check
// accepts is merged (a table of its points), drawn (its heatmaps) and
// paged (HTML) as `sweep merge --html` does, and must never throw or crash;
// what it refuses is an -EINVAL naming the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "swaplab/workload/json_file.h"
#include "sweep/sweep_internal.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto j = workload::ParseJson(text, "sweep.json");
  if (!j.ok()) return j.status().code() == -EINVAL ? 0 : (__builtin_trap(), 0);
  const Status st = sweep::CheckSweepDoc(*j, "sweep.json");
  if (!st.ok()) {
    if (st.code() != -EINVAL || st.message().rfind("sweep.json", 0) != 0) __builtin_trap();
    return 0;
  }
  // A table of every point, as Merge makes it from results.
  sweep::Table t;
  for (const auto& a : (*j)["axes"]) t.axes.push_back(a.get<std::string>());
  for (const auto& d : (*j)["spec"].value("derived", nlohmann::json::array()))
    t.derived.push_back(d["name"].get<std::string>());
  t.metrics = {"base/bios"};
  t.points = (*j)["points"].size();
  double v = 0;
  for (const auto& p : (*j)["points"]) {
    sweep::Table::Row r;
    r.id = p["id"].get<std::string>();
    r.axes = p["axes"];
    r.values.assign(t.derived.size() + t.metrics.size(), v++);
    t.rows.push_back(std::move(r));
  }
  (void)sweep::TableCsv(t);
  (void)sweep::TableJson(t).dump();
  auto maps = sweep::Heatmaps(*j, t);
  if (maps.ok()) (void)sweep::SweepHtml(*j, t, *maps);
  return 0;
}
