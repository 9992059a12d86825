// SPDX-License-Identifier: MIT
// A sweep's points merged into one table, its heatmaps, and the merged
// files written (include/swaplab/sweep/sweep.h).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "swaplab/alloc/printable.h"
#include "swaplab/report/svg.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Shown(const std::string& s) { return "'" + Printable(s, kMaxTokenInMessage) + "'"; }

// An axis value as a table cell and a heatmap label.
std::string Cell(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A CSV field: control characters (terminal escapes) from the spec as
// \xNN, C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F: U+009B is a
// terminal's CSI) as \u00NN, a byte that is not part of a valid UTF-8
// sequence (a lone 0x9b is an 8-bit terminal's CSI) as \xNN, other UTF-8
// kept.
std::string CsvField(const std::string& s) {
  std::string e;
  for (size_t i = 0; i < s.size();) {
    const auto u = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8Length(s, i);
    if (n == 0 || u < 0x20 || u == 0x7f) {
      e += fmt::format("\\x{:02x}", u);
      i += 1;
      continue;
    }
    const auto second = n == 2 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if (u == 0xc2 && second < 0xa0) {
      e += fmt::format("\\u{:04x}", second);
    } else {
      e.append(s, i, n);
    }
    i += n;
  }
  if (e.find_first_of(",\"") == std::string::npos) return e;
  std::string q = "\"";
  for (char c : e) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string Number(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{}", v);
}

double Value(const json& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  return it != metrics.end() && it->is_number() ? it->get<double>() : kNaN;
}

struct Stats {
  double mean = kNaN, min = kNaN, max = kNaN, sd = kNaN;
  size_t n = 0;
};
Stats Summarise(const std::vector<double>& v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  double sum = 0;
  s.min = s.max = v[0];
  for (double x : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = sum / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

// A cell's fill: diverging (blue below zero, red above) when the values
// straddle zero, else white to blue from the lowest to the highest.
std::string Fill(double v, double lo, double hi) {
  if (!std::isfinite(v)) return "#dddddd";
  double t;
  int r, g, b;
  if (lo < 0 && hi > 0) {
    const double m = std::max(-lo, hi);
    t = std::clamp(std::abs(v) / m, 0.0, 1.0);
    if (v >= 0) {
      r = 255, g = static_cast<int>(255 - 175 * t), b = static_cast<int>(255 - 195 * t);
    } else {
      r = static_cast<int>(255 - 205 * t), g = static_cast<int>(255 - 125 * t), b = 255;
    }
  } else {
    t = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.5;
    r = static_cast<int>(255 - 220 * t), g = static_cast<int>(255 - 160 * t),
    b = static_cast<int>(255 - 60 * t);
  }
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

std::string Short(double v) {
  if (!std::isfinite(v)) return "–";
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:.1f}K", v / 1e3);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

// Distinct values of axis `name` over the sweep's points, in first-seen
// order (a grid's order).
std::vector<json> AxisValues(const json& sweep, const std::string& name) {
  std::vector<json> out;
  std::set<std::string> seen;
  for (const json& p : sweep.at("points")) {
    const json& v = p.at("axes").at(name);
    if (seen.insert(v.dump()).second) out.push_back(v);
  }
  return out;
}

}  // namespace

namespace {

// Calls check(element, "FILE: $.KEY[i]") on each element of the list
// spec[KEY] (absent: none) and returns the first error.
template <typename Check>
Status EachOf(const json& spec, const char* key, const std::string& file, Check check) {
  if (!spec.contains(key)) return Status::Ok();
  if (!spec[key].is_array())
    return Status(-EINVAL, fmt::format("{}: $.{}: expected a list", Printable(file), key));
  for (size_t i = 0; i < spec[key].size(); ++i)
    if (Status st = check(spec[key][i], fmt::format("{}: $.{}[{}]", Printable(file), key, i));
        !st.ok())
      return st;
  return Status::Ok();
}

Status CheckDerived(const json& d, const std::string& where) {
  if (!d.is_object() || !d.contains("name") || !d["name"].is_string())
    return Status(-EINVAL, where + ".name: expected a string");
  const int ops = d.contains("minus") + d.contains("ratio");
  if (ops != 1 || d.size() != 2)
    return Status(-EINVAL, where + ": needs \"name\" and one of \"minus\", \"ratio\"");
  const json& args = d.contains("minus") ? d["minus"] : d["ratio"];
  if (!args.is_array() || args.size() != 2 || !args[0].is_string() || !args[1].is_string())
    return Status(-EINVAL, where + ": expected two metric names [\"VARIANT/METRIC\", ...]");
  return Status::Ok();
}

Status CheckHeatmap(const json& h, const std::set<std::string>& axes, const std::string& where) {
  if (!h.is_object()) return Status(-EINVAL, where + ": expected an object");
  for (const auto& [k, v] : h.items()) {
    if (k != "name" && k != "title" && k != "x" && k != "y" && k != "value" && k != "facet")
      return Status(-EINVAL, where + ": unknown key " + Shown(k) +
                                 " (allowed: name, title, x, y, value, facet)");
    if (!v.is_string()) return Status(-EINVAL, where + "." + k + ": expected a string");
  }
  for (const char* k : {"name", "x", "y", "value"})
    if (!h.contains(k)) return Status(-EINVAL, where + "." + k + ": required");
  for (const char* k : {"x", "y", "facet"}) {
    if (h.contains(k) && !axes.count(h[k].get<std::string>()))
      return Status(-EINVAL,
                    where + "." + k + ": " + Shown(h[k].get<std::string>()) + " is not an axis");
  }
  const std::string n = h["name"].get<std::string>();
  if (!ValidHeatmapName(n))
    return Status(-EINVAL, where + ".name: " + Shown(n) + ": a file name of 1 to " +
                               std::to_string(kMaxHeatmapName) + " of a-z 0-9 - _");
  return Status::Ok();
}

}  // namespace

Status CheckDerivedAndHeatmaps(const json& spec, const std::set<std::string>& axes,
                               const std::string& file) {
  if (Status st = EachOf(spec, "derived", file, CheckDerived); !st.ok()) return st;
  return EachOf(spec, "heatmaps", file, [&](const json& h, const std::string& where) {
    return CheckHeatmap(h, axes, where);
  });
}

Result<Table> Merge(const std::string& dir) {
  auto sweep = ReadSweep(dir);
  if (!sweep.ok()) return sweep.status();
  const json& spec = sweep->at("spec");
  Table t;
  for (const json& a : sweep->at("axes")) t.axes.push_back(a.get<std::string>());
  std::vector<std::pair<bool, std::array<std::string, 2>>> ops;  // minus?, operands
  if (spec.contains("derived")) {
    for (const json& d : spec["derived"]) {
      t.derived.push_back(d["name"].get<std::string>());
      const bool minus = d.contains("minus");
      const json& a = minus ? d["minus"] : d["ratio"];
      ops.push_back({minus, {a[0].get<std::string>(), a[1].get<std::string>()}});
    }
  }
  std::vector<json> metrics;  // per row
  std::set<std::string> names;
  t.points = sweep->at("points").size();
  for (const json& p : sweep->at("points")) {
    const std::string id = p.at("id").get<std::string>();
    auto read = ReadPointResult(dir, id);
    if (!read.ok() && read.status().code() == -ENOENT) continue;  // not run yet
    if (!read.ok()) return read.status();
    json& r = read.value();
    Table::Row row;
    row.id = id;
    row.axes = p.at("axes");
    row.cpu_seconds = r.value("cpu_seconds", 0.0);  // numbers (CheckPointResult)
    row.wall_seconds = r.value("wall_seconds", 0.0);
    t.cpu_seconds += row.cpu_seconds;
    for (const auto& [k, v] : r["metrics"].items()) names.insert(k);
    if (names.size() > kMaxMetrics)
      return Status(-EINVAL,
                    Printable(dir) + "/points/" + id +
                        fmt::format(".json: the points name more than {} metrics", kMaxMetrics));
    metrics.push_back(std::move(r["metrics"]));
    t.rows.push_back(std::move(row));
  }
  t.metrics.assign(names.begin(), names.end());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    auto& vals = t.rows[i].values;
    for (const auto& [minus, a] : ops) {
      const double x = Value(metrics[i], a[0]), y = Value(metrics[i], a[1]);
      vals.push_back(minus ? x - y : (y != 0 ? x / y : kNaN));
    }
    for (const auto& m : t.metrics) vals.push_back(Value(metrics[i], m));
  }
  return t;
}

std::string TableCsv(const Table& t) {
  std::string out = "id";
  for (const auto& a : t.axes) out += "," + CsvField(a);
  for (const auto& d : t.derived) out += "," + CsvField(d);
  for (const auto& m : t.metrics) out += "," + CsvField(m);
  out += ",cpu_seconds\n";
  for (const auto& r : t.rows) {
    out += r.id;
    for (const auto& a : t.axes) out += "," + CsvField(Cell(r.axes.at(a)));
    for (double v : r.values) out += "," + Number(v);
    out += "," + Number(r.cpu_seconds) + "\n";
  }
  return out;
}

json TableJson(const Table& t) {
  json cols = json::array();
  for (const auto& d : t.derived) cols.push_back(d);
  for (const auto& m : t.metrics) cols.push_back(m);
  json rows = json::array();
  for (const auto& r : t.rows) {
    json values = json::object();
    for (size_t i = 0; i < r.values.size(); ++i)
      values[cols[i].get<std::string>()] = std::isfinite(r.values[i]) ? json(r.values[i]) : json();
    rows.push_back(
        {{"id", r.id}, {"axes", r.axes}, {"values", values}, {"cpu_seconds", r.cpu_seconds}});
  }
  return {{"axes", t.axes},
          {"columns", cols},
          {"points", t.points},
          {"done", t.rows.size()},
          {"cpu_seconds", t.cpu_seconds},
          {"rows", rows}};
}

std::string Command(const json& sweep) {
  return sweep.value("command", std::string("swaplab sweep SPEC.json --out DIR"));
}

namespace {

// One of the spec's heatmaps: the table's column it shows, its cells'
// values and their range, and its SVG.
class Heatmap {
 public:
  Heatmap(const json& sweep, const Table& t, const json& h)
      : sweep_(sweep),
        t_(t),
        h_(h),
        name_(h["name"].get<std::string>()),
        xa_(h["x"].get<std::string>()),
        ya_(h["y"].get<std::string>()),
        va_(h["value"].get<std::string>()),
        fa_(h.value("facet", "")) {}
  // The column, the axes' values and the cells; an error for a value that
  // is no column or too many cells.
  Status Collect();
  std::string Svg() const;
  const std::string& name() const { return name_; }

 private:
  static constexpr int kCellW = 70, kCellH = 40, kLeft = 90, kTop = 62, kGap = 30;

  size_t ValueColumn() const;
  void CollectCells(size_t col);
  void DrawHeading(report::XmlWriter& w, const std::string& title) const;
  void DrawPanel(report::XmlWriter& w, size_t f) const;
  void DrawCell(report::XmlWriter& w, size_t f, size_t xi, size_t yi, int x, int y) const;
  void DrawScale(report::XmlWriter& w) const;

  const json& sweep_;
  const Table& t_;
  const json& h_;
  const std::string name_, xa_, ya_, va_, fa_;
  std::vector<json> xs_, ys_, fs_;
  // (facet, x, y) → the values over every other axis (seeds, ...).
  std::map<std::array<std::string, 3>, std::vector<double>> cells_;
  double lo_ = INFINITY, hi_ = -INFINITY;
  size_t per_cell_ = 0;
};

// The derived metric named by "value", else the metric; SIZE_MAX: neither.
size_t Heatmap::ValueColumn() const {
  size_t col = SIZE_MAX;
  for (size_t i = 0; i < t_.derived.size(); ++i)
    if (t_.derived[i] == va_) col = i;
  for (size_t i = 0; i < t_.metrics.size() && col == SIZE_MAX; ++i)
    if (t_.metrics[i] == va_) col = t_.derived.size() + i;
  return col;
}

Status Heatmap::Collect() {
  const size_t col = ValueColumn();
  if (col == SIZE_MAX && !t_.rows.empty())
    return Status(-EINVAL, "heatmap " + Shown(name_) + ": value " + Shown(va_) +
                               " is neither a derived metric nor a metric of the points");
  xs_ = AxisValues(sweep_, xa_), ys_ = AxisValues(sweep_, ya_);
  fs_ = fa_.empty() ? std::vector<json>{json()} : AxisValues(sweep_, fa_);
  if (xs_.size() * ys_.size() * fs_.size() > kMaxHeatmapCells)
    return Status(-EINVAL, fmt::format("heatmap {}: {} cells, at most {}", Shown(name_),
                                       xs_.size() * ys_.size() * fs_.size(), kMaxHeatmapCells));
  CollectCells(col);
  return Status::Ok();
}

void Heatmap::CollectCells(size_t col) {
  for (const auto& r : t_.rows) {
    if (col == SIZE_MAX || !std::isfinite(r.values[col])) continue;
    cells_[{fa_.empty() ? "null" : r.axes.at(fa_).dump(), r.axes.at(xa_).dump(),
            r.axes.at(ya_).dump()}]
        .push_back(r.values[col]);
  }
  for (const auto& [k, v] : cells_) {
    const Stats s = Summarise(v);
    lo_ = std::min(lo_, s.mean), hi_ = std::max(hi_, s.mean);
    per_cell_ = std::max(per_cell_, v.size());
  }
}

std::string Heatmap::Svg() const {
  const int panel_w = static_cast<int>(xs_.size()) * kCellW;
  const int width = std::max(520, kLeft + static_cast<int>(fs_.size()) * (panel_w + kGap) + 10);
  const int height = kTop + static_cast<int>(ys_.size()) * kCellH + 76;
  const std::string title = h_.value("title", va_);
  std::string svg;
  report::XmlWriter w(&svg);
  w.Open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"class", "heatmap"},
                 {"width", report::Num(width)},
                 {"height", report::Num(height)},
                 {"viewBox", fmt::format("0 0 {} {}", width, height)},
                 {"font-family", "sans-serif"},
                 {"font-size", "11"}});
  DrawHeading(w, title);
  for (size_t f = 0; f < fs_.size(); ++f) DrawPanel(w, f);
  DrawScale(w);
  w.Leaf("text", {{"x", "8"}, {"y", report::Num(height - 6)}, {"font-size", "10"}},
         "made by: " + Command(sweep_) + " && swaplab sweep merge DIR");
  w.Finish();
  return svg;
}

void Heatmap::DrawHeading(report::XmlWriter& w, const std::string& title) const {
  w.Leaf("title", {}, title);
  w.Leaf("text", {{"x", "8"}, {"y", "16"}, {"font-weight", "bold"}}, title);
  w.Leaf("text", {{"x", "8"}, {"y", "32"}},
         fmt::format("{} of {} points, {:.1f} CPU s ({:.4f} CPU-hours); cell: mean of {} over {} "
                     "(small: ± sample sd)",
                     t_.rows.size(), t_.points, t_.cpu_seconds, t_.cpu_seconds / 3600, va_,
                     per_cell_ > 1 ? fmt::format("{} runs", per_cell_) : "1 run"));
}

// Facet f's grid: the y labels (first facet only), the cells, the x labels.
void Heatmap::DrawPanel(report::XmlWriter& w, size_t f) const {
  const int x0 = kLeft + static_cast<int>(f) * (static_cast<int>(xs_.size()) * kCellW + kGap);
  if (!fa_.empty())
    w.Leaf("text", {{"x", report::Num(x0)}, {"y", "50"}, {"font-weight", "bold"}},
           fmt::format("{} = {}", fa_, Cell(fs_[f])));
  for (size_t yi = 0; yi < ys_.size(); ++yi) {
    const int y = kTop + static_cast<int>(yi) * kCellH;
    if (f == 0)
      w.Leaf("text",
             {{"x", report::Num(kLeft - 6)},
              {"y", report::Num(y + kCellH / 2 + 4)},
              {"text-anchor", "end"}},
             Cell(ys_[yi]));
    for (size_t xi = 0; xi < xs_.size(); ++xi)
      DrawCell(w, f, xi, yi, x0 + static_cast<int>(xi) * kCellW, y);
  }
  for (size_t xi = 0; xi < xs_.size(); ++xi)
    w.Leaf("text",
           {{"x", report::Num(x0 + static_cast<int>(xi) * kCellW + kCellW / 2)},
            {"y", report::Num(kTop + static_cast<int>(ys_.size()) * kCellH + 14)},
            {"text-anchor", "middle"}},
           Cell(xs_[xi]));
}

void Heatmap::DrawCell(report::XmlWriter& w, size_t f, size_t xi, size_t yi, int x, int y) const {
  const auto it =
      cells_.find({fa_.empty() ? "null" : fs_[f].dump(), xs_[xi].dump(), ys_[yi].dump()});
  const Stats s = it == cells_.end() ? Stats{} : Summarise(it->second);
  w.Open("rect", {{"class", "c"},
                  {"x", report::Num(x)},
                  {"y", report::Num(y)},
                  {"width", report::Num(kCellW - 1)},
                  {"height", report::Num(kCellH - 1)},
                  {"fill", Fill(s.mean, lo_, hi_)}});
  w.Leaf("title", {},
         fmt::format("{}={} {}={}: {} mean {}, min {}, max {}, sd {}, n {}", xa_, Cell(xs_[xi]),
                     ya_, Cell(ys_[yi]), va_, Number(s.mean), Number(s.min), Number(s.max),
                     Number(s.sd), s.n));
  w.Close();
  w.Leaf(
      "text",
      {{"x", report::Num(x + kCellW / 2)}, {"y", report::Num(y + 18)}, {"text-anchor", "middle"}},
      Short(s.mean));
  if (s.n > 1)
    w.Leaf("text",
           {{"x", report::Num(x + kCellW / 2)},
            {"y", report::Num(y + 32)},
            {"text-anchor", "middle"},
            {"font-size", "9"}},
           "±" + Short(s.sd));
}

// The axes' names and the colour scale's ends.
void Heatmap::DrawScale(report::XmlWriter& w) const {
  const int ly = kTop + static_cast<int>(ys_.size()) * kCellH + 40;
  w.Leaf("text",
         {{"x", report::Num(kLeft - 6)}, {"y", report::Num(ly - 18)}, {"text-anchor", "end"}},
         ya_ + " ↑");
  w.Leaf("text", {{"x", report::Num(kLeft)}, {"y", report::Num(ly - 4 + 0)}}, xa_ + " →");
  if (!std::isfinite(lo_)) return;
  int kx = kLeft;
  for (const auto& [label, v] :
       {std::pair<const char*, double>{"lowest ", lo_}, {"highest ", hi_}}) {
    w.Empty("rect", {{"x", report::Num(kx)},
                     {"y", report::Num(ly + 2)},
                     {"width", "12"},
                     {"height", "12"},
                     {"fill", Fill(v, lo_, hi_)},
                     {"stroke", "#888"}});
    w.Leaf("text", {{"x", report::Num(kx + 16)}, {"y", report::Num(ly + 12)}}, label + Short(v));
    kx += 130;
  }
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> Heatmaps(const json& sweep,
                                                                  const Table& t) {
  std::vector<std::pair<std::string, std::string>> out;
  const json& spec = sweep.at("spec");
  if (!spec.contains("heatmaps")) return out;
  for (const json& h : spec["heatmaps"]) {
    Heatmap map(sweep, t, h);
    if (Status st = map.Collect(); !st.ok()) return st;
    out.emplace_back("heatmap-" + map.name() + ".svg", map.Svg());
  }
  return out;
}

Result<Merged> MergeSweep(const std::string& dir, const std::string& html) {
  auto t = Merge(dir);
  if (!t.ok()) return t.status();
  auto sweep = ReadSweep(dir);
  if (!sweep.ok()) return sweep.status();
  auto maps = Heatmaps(*sweep, *t);
  if (!maps.ok()) return maps.status();
  Merged m;
  m.table = std::move(t).value();
  m.merged_csv = TableCsv(m.table);
  m.merged_json = TableJson(m.table).dump(1) + "\n";
  for (const auto& [name, content] :
       {std::pair<std::string, const std::string&>{"merged.csv", m.merged_csv},
        {"merged.json", m.merged_json}})
    if (Status st = WriteAtomic(dir + "/" + name, content); !st.ok()) return st;
  for (const auto& [name, svg] : *maps) {
    if (Status st = WriteAtomic(dir + "/" + name, svg); !st.ok()) return st;
    m.files.push_back(name);
  }
  if (!html.empty())
    if (Status st = WriteAtomic(html, SweepHtml(*sweep, m.table, *maps)); !st.ok()) return st;
  m.running = m.table.rows.size() < m.table.points && SweepRunning(dir);
  return m;
}

}  // namespace swaplab::sweep
