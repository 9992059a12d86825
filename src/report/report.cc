// SPDX-License-Identifier: MIT
// Text tables, JSON and CSV of scenario results (report.h).
#include "swaplab/report/report.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "report_text.h"
#include "swaplab/report/policy_json.h"

namespace swaplab::report {

using workload::MetricKind;
using workload::ScenarioResult;

std::string FormatValue(double v, MetricKind k) {
  if (std::isnan(v)) return "-";
  switch (k) {
    case MetricKind::kModelledSeconds:
    case MetricKind::kMeasuredSeconds:
      return fmt::format("{:.2f}", v);
    case MetricKind::kPercent:
      return fmt::format("{:.1f}", v);
    case MetricKind::kMeasuredRate:
    case MetricKind::kCount:
      if (std::fabs(v) >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
      if (std::fabs(v) >= 1e4) return fmt::format("{:.1f}K", v / 1e3);
      if (v == std::floor(v)) return fmt::format("{:.0f}", v);
      return fmt::format("{:.1f}", v);
  }
  return "?";
}

std::vector<std::string> Rows(const ScenarioResult& r) {
  if (!r.scenario->rows.empty()) return r.scenario->rows;
  std::vector<std::string> rows;
  for (const auto& v : r.variants)
    for (const auto& m : v.order)
      if (std::find(rows.begin(), rows.end(), m) == rows.end()) rows.push_back(m);
  return rows;
}

namespace {

bool Pct(const ScenarioResult& r, const std::string& row) {
  const auto& p = r.scenario->pct_rows;
  return std::find(p.begin(), p.end(), row) != p.end();
}

MetricKind KindOf(const ScenarioResult& r, const std::string& row) {
  for (const auto& v : r.variants) {
    auto it = v.kinds.find(row);
    if (it != v.kinds.end()) return it->second;
  }
  return MetricKind::kCount;
}

// "(-12%)" against the first column; empty for the first column.
std::string PctText(double v, double base) {
  if (std::isnan(v) || std::isnan(base) || base == 0) return "";
  return fmt::format(" ({:+.0f}%)", 100.0 * (v - base) / base);
}

std::string RowLabel(const ScenarioResult& r, const std::string& row) {
  const MetricKind k = KindOf(r, row);
  if (k == MetricKind::kModelledSeconds) return row + " (modelled)";
  if (k == MetricKind::kMeasuredSeconds) return row + " (measured)";
  return row;
}

// One table: a label column and one column per variant.
std::string Table(const std::vector<std::string>& cols, const std::vector<std::string>& labels,
                  const std::vector<std::vector<std::string>>& cells) {
  size_t lw = 0;
  for (const auto& l : labels) lw = std::max(lw, l.size());
  std::vector<size_t> w(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    w[c] = cols[c].size();
    for (const auto& row : cells) w[c] = std::max(w[c], row[c].size());
  }
  std::string out = fmt::format("  {:<{}}", "", lw);
  for (size_t c = 0; c < cols.size(); ++c) out += fmt::format("  {:>{}}", cols[c], w[c]);
  out += "\n";
  for (size_t i = 0; i < labels.size(); ++i) {
    out += fmt::format("  {:<{}}", labels[i], lw);
    for (size_t c = 0; c < cols.size(); ++c) out += fmt::format("  {:>{}}", cells[i][c], w[c]);
    out += "\n";
  }
  return out;
}

}  // namespace

nlohmann::ordered_json HostCpuJson(const workload::HostCpuCost& c) {
  return {{"label", c.label},
          {"write_bio_us", c.write_bio_us},
          {"read_bio_us", c.read_bio_us},
          {"alloc_call_us", c.alloc_call_us}};
}

std::string RenderText(const ScenarioResult& r) {
  const workload::Scenario& sc = *r.scenario;
  std::string out =
      fmt::format("== {} — {}\n\nSetup\n", PrintablePath(sc.name), PrintablePath(sc.title));
  for (const auto& s : sc.setup) out += "  - " + PrintablePath(s) + "\n";
  if (sc.scale != 1.0)
    out += fmt::format(
        "  - run at scale {:g}: every size above (devices, regions, image) times {:g}\n", sc.scale,
        sc.scale);
  if (!r.image_io.empty()) out += "  - image I/O: " + PrintablePath(r.image_io) + "\n";
  if (r.structural_image)
    out +=
        "  - image structural: no page data generated, written or checked (runs, bios and modelled "
        "seconds\n"
        "    are those of a data-carrying run); data is checked only in the scaled real-file runs "
        "and in\n"
        "    `swaplab reproduce --check-data`\n";
  else if (r.has_image)
    out += "  - image data checked: every page read back is compared with the snapshot\n";
  if (sc.host_cpu)
    out += fmt::format(
        "  - \"+ host CPU\" rows: the modelled seconds plus {:g} us per write bio, {:g} us per "
        "read bio\n"
        "    and {:g} us per allocator call ({})\n",
        sc.host_cpu->write_bio_us, sc.host_cpu->read_bio_us, sc.host_cpu->alloc_call_us,
        PrintablePath(sc.host_cpu->label));
  out += fmt::format(
      "  - seed {} (repetition k uses seed {}+k), {} repetition{}{}, {} CPUs modelled\n", sc.seed,
      sc.seed, sc.repetitions, sc.repetitions > 1 ? "s" : "",
      sc.repetitions > 1 ? " (medians)" : "", sc.cpus);
  for (const auto& v : r.variants)
    out += fmt::format("  - {}: {}\n", PrintablePath(v.label), v.effective_policy.Describe());
  out += "\n";
  const auto rows = Rows(r);
  std::vector<std::string> cols, labels;
  for (const auto& v : r.variants) cols.push_back(v.label);
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows) {
    labels.push_back(PrintablePath(RowLabel(r, row)));
    std::vector<std::string> line;
    const double base = r.variants[0].Median(row);
    for (size_t c = 0; c < r.variants.size(); ++c) {
      const double v = r.variants[c].Median(row);
      line.push_back(FormatValue(v, KindOf(r, row)) +
                     (c > 0 && Pct(r, row) ? PctText(v, base) : ""));
    }
    cells.push_back(line);
  }
  out += Table(PrintablePaths(cols), labels, cells);
  const auto& ref = sc.seed_reported;
  if (!ref.cells.empty() || !ref.source.empty()) {
    out += fmt::format("\n  What {} reported for the same cells:\n",
                       ref.source.empty() ? "the seed" : PrintablePath(ref.source));
    for (const auto& s : ref.setup) out += "    " + PrintablePath(s) + "\n";
    std::vector<std::string> rl;
    std::vector<std::vector<std::string>> rc;
    std::vector<std::string> ref_rows = rows;  // ours first, then rows only the seed has
    for (const auto& [row, unused] : ref.cells)
      if (std::find(ref_rows.begin(), ref_rows.end(), row) == ref_rows.end())
        ref_rows.push_back(row);
    for (const auto& row : ref_rows) {
      auto it = ref.cells.find(row);
      if (it == ref.cells.end()) continue;
      rl.push_back(PrintablePath(row));
      std::vector<std::string> line;
      for (const auto& c : cols) {
        auto jt = it->second.find(c);
        line.push_back(jt == it->second.end() ? "-" : PrintablePath(jt->second));
      }
      rc.push_back(line);
    }
    if (!rl.empty()) out += Table(PrintablePaths(cols), rl, rc);
  }
  if (!sc.answers.empty()) out += "\n  " + PrintablePath(sc.answers) + "\n";
  out += fmt::format("\n  ({:.1f} s wall)\n\n", r.wall_seconds);
  return out;
}

nlohmann::ordered_json RenderJson(const ScenarioResult& r) {
  const workload::Scenario& sc = *r.scenario;
  nlohmann::ordered_json j;
  j["name"] = sc.name;
  j["group"] = sc.group;
  j["title"] = sc.title;
  j["setup"] = sc.setup;
  j["seed"] = sc.seed;
  j["repetitions"] = sc.repetitions;
  j["cpus"] = sc.cpus;
  j["scale"] = sc.scale;
  if (r.has_image) j["image_data_checked"] = !r.structural_image;
  if (!r.image_io.empty()) j["image_io"] = r.image_io;
  if (sc.host_cpu) j["host_cpu"] = HostCpuJson(*sc.host_cpu);
  j["wall_seconds"] = r.wall_seconds;
  nlohmann::ordered_json vars = nlohmann::ordered_json::array();
  for (const auto& v : r.variants) {
    nlohmann::ordered_json vj;
    vj["label"] = v.label;
    vj["policy"] = v.policy;
    vj["knobs"] = KnobsJson(v.effective_policy);
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& name : v.order) {
      const double med = v.Median(name);
      m[name] = {{"value", med},
                 {"kind", workload::Name(v.kinds.at(name))},
                 {"samples", v.samples.at(name)}};
      if (Pct(r, name) && &v != &r.variants[0]) {
        const double base = r.variants[0].Median(name);
        if (base != 0 && !std::isnan(base)) m[name]["pct_vs_first"] = 100.0 * (med - base) / base;
      }
    }
    vj["metrics"] = m;
    vars.push_back(vj);
  }
  j["variants"] = vars;
  nlohmann::ordered_json ref;
  ref["source"] = sc.seed_reported.source;
  ref["setup"] = sc.seed_reported.setup;
  ref["cells"] = sc.seed_reported.cells;
  j["seed_reported"] = ref;
  return j;
}

std::string CsvHeader() {
  return "scenario,row,variant,value,kind,pct_vs_first,seed_reported,repetitions\n";
}

std::string RenderCsv(const ScenarioResult& r) {
  std::string out;
  auto quote = [](const std::string& raw) {
    const std::string s = PrintablePath(raw);
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const auto& row : Rows(r)) {
    const double base = r.variants[0].Median(row);
    for (size_t c = 0; c < r.variants.size(); ++c) {
      const auto& v = r.variants[c];
      const double med = v.Median(row);
      std::string pct;
      if (c > 0 && Pct(r, row) && base != 0 && !std::isnan(base) && !std::isnan(med))
        pct = fmt::format("{:.2f}", 100.0 * (med - base) / base);
      std::string seed;
      auto it = r.scenario->seed_reported.cells.find(row);
      if (it != r.scenario->seed_reported.cells.end() && it->second.count(v.label))
        seed = it->second.at(v.label);
      out += fmt::format("{},{},{},{},{},{},{},{}\n", quote(r.scenario->name), quote(row),
                         quote(v.label), std::isnan(med) ? "" : fmt::format("{:.6g}", med),
                         workload::Name(KindOf(r, row)), pct, quote(seed),
                         v.samples.count(row) ? v.samples.at(row).size() : 0);
    }
  }
  return out;
}

BatchReport RenderBatch(const std::vector<ScenarioResult>& results, double scale,
                        double wall_seconds) {
  nlohmann::ordered_json j;
  j["wall_seconds"] = wall_seconds;
  j["scale"] = scale;
  j["scenarios"] = nlohmann::ordered_json::array();
  BatchReport b;
  b.csv = CsvHeader();
  for (const auto& r : results) {
    j["scenarios"].push_back(RenderJson(r));
    b.text += RenderText(r);
    b.csv += RenderCsv(r);
  }
  b.text += fmt::format("total: {} scenario(s), {:.1f} s wall\n", results.size(), wall_seconds);
  b.json = j.dump(2);
  return b;
}

}  // namespace swaplab::report
