// SPDX-License-Identifier: MIT
// The HTML report (html_report.h).
#include "swaplab/report/html_report.h"

#include <fmt/core.h>

#include <cmath>
#include <set>

#include "swaplab/report/plots.h"
#include "swaplab/report/report.h"
#include "swaplab/report/svg.h"

namespace swaplab::report {

namespace {

constexpr const char* kCss =
    "body{font-family:sans-serif;margin:1.5em;color:#111;max-width:1100px}"
    "h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #999;margin-top:2em}"
    "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}"
    "th,td{border:1px solid #bbb;padding:2px 6px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}"
    "td.seed,th.seed{color:#a01c1c;background:#fbf0f0}"
    "svg{max-width:100%;height:auto;display:block;margin:.4em 0}"
    ".plots{display:flex;flex-wrap:wrap;gap:.5em}"
    "ul.setup{font-size:.9em}p.note{font-size:.85em;color:#444}"
    "@media print{body{margin:0;max-width:none}section{break-before:page}"
    "section:first-of-type{break-before:auto}.plots,figure{break-inside:avoid}"
    "td.seed,th.seed{background:none}}";

// A chart for the rows an mm developer compares first: the image's runs,
// bios and seconds, rates and percentages (fallback rates, throughput).
bool Plotted(const std::string& row, workload::MetricKind k) {
  static const std::set<std::string> kRows = {"runs",     "bios",    "read bios",
                                              "write, s", "read, s", "write + host CPU, s"};
  return kRows.count(row) || k == workload::MetricKind::kPercent ||
         k == workload::MetricKind::kMeasuredRate;
}

workload::MetricKind KindOfRow(const workload::ScenarioResult& r, const std::string& row) {
  for (const auto& v : r.variants)
    if (auto it = v.kinds.find(row); it != v.kinds.end()) return it->second;
  return workload::MetricKind::kCount;
}

std::string SeedCell(const workload::Scenario& sc, const std::string& row,
                     const std::string& variant) {
  auto it = sc.seed_reported.cells.find(row);
  if (it == sc.seed_reported.cells.end()) return "";
  auto jt = it->second.find(variant);
  return jt == it->second.end() ? "" : jt->second;
}

// One scenario's section of the report: its setup, the results table beside
// the seed's figures, the charts and the cluster maps.
class ScenarioSection {
 public:
  ScenarioSection(XmlWriter& w, const workload::ScenarioResult& r)
      : w_(w), r_(r), sc_(*r.scenario), seed_(!sc_.seed_reported.cells.empty()), rows_(Rows(r)) {}
  void Write(const MapCapture* maps, const HtmlOptions& o);

 private:
  void SetupList();
  void ResultsTable();
  void SeedNotes();
  void Plots();
  void ClusterMaps(const MapCapture& maps, const HtmlOptions& o);

  XmlWriter& w_;
  const workload::ScenarioResult& r_;
  const workload::Scenario& sc_;
  const bool seed_;  // the seed reported figures to set beside ours
  const std::vector<std::string> rows_;
};

void ScenarioSection::Write(const MapCapture* maps, const HtmlOptions& o) {
  w_.Open("section", {{"id", sc_.name}});
  w_.Leaf("h2", {}, sc_.name + " — " + sc_.title);
  SetupList();
  ResultsTable();
  SeedNotes();
  if (!sc_.answers.empty()) w_.Leaf("p", {}, sc_.answers);
  Plots();
  if (maps != nullptr && r_.has_image) ClusterMaps(*maps, o);
  w_.Close();
}

void ScenarioSection::SetupList() {
  w_.Open("ul", {{"class", "setup"}});
  for (const auto& s : sc_.setup) w_.Leaf("li", {}, s);
  if (sc_.scale != 1.0) w_.Leaf("li", {}, fmt::format("run at scale {:g}", sc_.scale));
  if (!r_.image_io.empty()) w_.Leaf("li", {}, "image I/O: " + r_.image_io);
  if (r_.structural_image)
    w_.Leaf("li", {}, "image structural: no page data generated, written or checked");
  w_.Leaf("li", {},
          fmt::format("seed {}, {} repetition(s){}, {} CPUs modelled", sc_.seed, sc_.repetitions,
                      sc_.repetitions > 1 ? " (medians)" : "", sc_.cpus));
  for (const auto& v : r_.variants)
    w_.Leaf("li", {}, v.label + ": " + v.effective_policy.Describe());
  w_.Close();
}

// The table: ours, and the seed's figure beside each of our cells.
void ScenarioSection::ResultsTable() {
  w_.Open("table", {{"class", "results"}});
  w_.Open("tr").Leaf("th", {}, "");
  for (const auto& v : r_.variants) {
    w_.Leaf("th", {}, v.label);
    if (seed_) w_.Leaf("th", {{"class", "seed"}}, "seed");
  }
  w_.Close();
  for (const auto& row : rows_) {
    const auto kind = KindOfRow(r_, row);
    w_.Open("tr").Leaf("td", {}, row);
    for (const auto& v : r_.variants) {
      const double med = v.Median(row);
      // data-v: the median as --json prints it (shortest round-trip form).
      w_.Leaf("td", {{"class", "v"}, {"data-v", std::isnan(med) ? "" : fmt::format("{}", med)}},
              FormatValue(med, kind));
      if (seed_) w_.Leaf("td", {{"class", "seed"}}, SeedCell(sc_, row, v.label));
    }
    w_.Close();
  }
  w_.Close();
}

void ScenarioSection::SeedNotes() {
  if (!seed_) return;
  w_.Leaf(
      "p", {{"class", "note"}},
      "seed: what " +
          (sc_.seed_reported.source.empty() ? std::string("the seed") : sc_.seed_reported.source) +
          " reported for the same cell");
  for (const auto& s : sc_.seed_reported.setup) w_.Leaf("p", {{"class", "note"}}, s);
}

void ScenarioSection::Plots() {
  w_.Open("div", {{"class", "plots"}});
  for (const auto& row : rows_) {
    const auto kind = KindOfRow(r_, row);
    if (!Plotted(row, kind)) continue;
    std::vector<Bar> bars;
    for (const auto& v : r_.variants) {
      const std::string s = SeedCell(sc_, row, v.label);
      bars.push_back(
          {v.label, v.Median(row), ParseSeedNumber(s), FormatValue(v.Median(row), kind), s});
    }
    w_.Raw(InlineSvg(BarChartSvg(row, bars)));
  }
  w_.Close();
}

void ScenarioSection::ClusterMaps(const MapCapture& maps, const HtmlOptions& o) {
  std::vector<MapPanel> panels;
  for (const auto& v : r_.variants)
    for (const char* phase : {"before", "after"})
      if (const auto* m = maps.Find(sc_.name, v.label, phase))
        panels.push_back({v.label + ", " + phase + " the image write", m});
  if (panels.empty()) return;
  MapSvgOptions mo;
  mo.max_cells = o.map_cells;
  mo.max_run_labels = 300;
  w_.Open("figure");
  w_.Raw(InlineSvg(ClusterMapSvg(sc_.name + ": device 0's clusters", panels, mo)));
  w_.Leaf("figcaption", {},
          "Device 0's clusters (repetition 0), before and after the image write, per "
          "strategy. Hover a cell for its cluster, count, order and list.");
  w_.Close();
}

}  // namespace

void OpenHtmlPage(XmlWriter& w, const std::string& title) {
  w.Raw("<!DOCTYPE html>\n");
  w.Open("html", {{"lang", "en"}});
  w.Open("head");
  w.Empty("meta", {{"charset", "utf-8"}});
  w.Leaf("title", {}, title);
  w.Leaf("style", {}, kCss);
  w.Close();
  w.Open("body");
}

std::string InlineSvg(std::string svg) {
  const std::string ns = " xmlns=\"http://www.w3.org/2000/svg\"";
  for (size_t p; (p = svg.find(ns)) != std::string::npos;) svg.erase(p, ns.size());
  return svg;
}

std::string RenderHtml(const std::vector<workload::ScenarioResult>& results, const MapCapture* maps,
                       const HtmlOptions& o) {
  std::string out;
  XmlWriter w(&out);
  OpenHtmlPage(w, "swaplab: " + o.command);
  w.Leaf("h1", {}, "swaplab: " + o.command);
  w.Leaf("p", {},
         fmt::format("{} scenario(s), scale {:g}, {:.1f} s wall. Every number below is the one "
                     "--json prints for the same run (medians of the repetitions).",
                     results.size(), o.scale, o.wall_seconds));
  w.Open("ul");
  for (const auto& r : results)
    w.Open("li").Leaf("a", {{"href", "#" + r.scenario->name}}, r.scenario->name).Close();
  w.Close();
  for (const auto& r : results) ScenarioSection(w, r).Write(maps, o);
  w.Finish();
  return out;
}

}  // namespace swaplab::report
