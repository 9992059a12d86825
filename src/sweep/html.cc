// SPDX-License-Identifier: MIT
// A sweep's merged table and heatmaps as one HTML page
// (include/swaplab/sweep/sweep.h), in the report's page and style
// (report/html_report.h).
#include <fmt/core.h>

#include <cmath>
#include <set>

#include "swaplab/report/html_report.h"
#include "swaplab/report/svg.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

using nlohmann::json;

// The number of distinct values of the seed axis (1 without one: the base
// scenario's seed).
size_t Seeds(const json& sweep) {
  for (const json& a : sweep.at("spec").at("axes")) {
    if (!a.contains("seed")) continue;
    std::set<std::string> seen;
    for (const json& p : sweep.at("points")) seen.insert(p.at("axes").at(a.at("name")).dump());
    return seen.size();
  }
  return 1;
}

}  // namespace

std::string SweepHtml(const json& sweep, const Table& t,
                      const std::vector<std::pair<std::string, std::string>>& maps) {
  const std::string name = sweep.value("name", "sweep");
  std::string out;
  report::XmlWriter w(&out);
  report::OpenHtmlPage(w, "swaplab sweep: " + name);
  w.Leaf("h1", {}, "swaplab sweep: " + name);
  const std::string title = sweep.at("spec").value("title", "");
  if (!title.empty()) w.Leaf("p", {}, title);
  w.Leaf("p", {},
         fmt::format("{} of {} points done, {} seed(s) per cell, scale {:g}, {:.1f} CPU s ({:.3f} "
                     "CPU-hours, the points' own).",
                     t.rows.size(), t.points, Seeds(sweep), sweep.value("scale", 1.0),
                     t.cpu_seconds, t.cpu_seconds / 3600));
  w.Leaf("p", {}, "Made by:");
  w.Leaf("pre", {}, Command(sweep) + "\nswaplab sweep merge DIR --html FILE");
  for (const auto& [file, svg] : maps) {
    w.Open("figure");
    w.Raw(report::InlineSvg(svg));
    w.Leaf("figcaption", {}, file + ": hover a cell for its mean, min, max, sd and n");
    w.Close();
  }
  w.Leaf("h2", {}, "The merged table");
  w.Open("table", {{"class", "results"}});
  w.Open("tr").Leaf("th", {}, "id");
  for (const auto& a : t.axes) w.Leaf("th", {}, a);
  for (const auto& d : t.derived) w.Leaf("th", {}, d);
  for (const auto& m : t.metrics) w.Leaf("th", {}, m);
  w.Leaf("th", {}, "cpu_seconds").Close();
  for (const auto& r : t.rows) {
    w.Open("tr").Leaf("td", {}, r.id);
    for (const auto& a : t.axes) {
      const json& v = r.axes.at(a);
      w.Leaf("td", {{"class", "axis"}}, v.is_string() ? v.get<std::string>() : v.dump());
    }
    // data-v: the value as merged.json holds it (shortest round-trip form).
    for (double v : r.values) {
      const std::string exact = std::isfinite(v) ? fmt::format("{}", v) : "";
      w.Leaf("td", {{"class", "v"}, {"data-v", exact}},
             std::isfinite(v) ? fmt::format("{:.6g}", v) : "–");
    }
    w.Leaf("td", {{"class", "cpu"}}, fmt::format("{:.2f}", r.cpu_seconds)).Close();
  }
  w.Finish();
  return out;
}

}  // namespace swaplab::sweep
