// SPDX-License-Identifier: MIT
// Turning scenario results into what an mm developer posts: text tables in
// the seed's shape (rows as there, one column per variant, "% vs the first
// column" in parentheses), with the setup header and, under each table,
// what the seed reported for the same cells; and the same numbers as JSON
// and CSV (design.md "report/").
#pragma once
#pragma GCC visibility push(default)

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "swaplab/workload/scenario_runner.h"

namespace swaplab::report {

// "1.30M", "12.7K", "3560", "10.60": counts as the seed prints them
// (3 significant digits past 10K), seconds with two decimals.
std::string FormatValue(double v, workload::MetricKind k);

// The rows a scenario shows: its `rows` list, else every metric in order.
std::vector<std::string> Rows(const workload::ScenarioResult& r);

// A host CPU profile's prices as the JSON reports carry them ("host_cpu").
nlohmann::ordered_json HostCpuJson(const workload::HostCpuCost& c);

std::string RenderText(const workload::ScenarioResult& r);
nlohmann::ordered_json RenderJson(const workload::ScenarioResult& r);
// Header line and one line per (row, variant): scenario,row,variant,value,
// kind,pct_vs_first,seed_reported,repetitions.
std::string CsvHeader();
std::string RenderCsv(const workload::ScenarioResult& r);

// Several scenarios' results (`run`, `reproduce`): the text of each table
// and a total line; one JSON document {wall_seconds, scale, scenarios};
// the CSV header and every scenario's lines.
struct BatchReport {
  std::string text, json, csv;
};
BatchReport RenderBatch(const std::vector<workload::ScenarioResult>& results, double scale,
                        double wall_seconds);

}  // namespace swaplab::report
#pragma GCC visibility pop
