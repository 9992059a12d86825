// SPDX-License-Identifier: MIT
// A sweep's spec read, checked and expanded into points
// (include/swaplab/sweep/sweep.h).
#include <fmt/core.h>
#include <sys/stat.h>

#include <cmath>
#include <set>

#include "swaplab/alloc/printable.h"
#include "swaplab/workload/json_file.h"
#include "swaplab/workload/shipped.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

using nlohmann::json;

Status Bad(const std::string& file, const std::string& what) {
  return Status(-EINVAL, Printable(file) + ": " + what);
}

std::string Shown(const std::string& s) { return "'" + Printable(s, kMaxTokenInMessage) + "'"; }

// Keys of `o` other than `allowed`: the first one, or "".
std::string UnknownKey(const json& o, std::initializer_list<const char*> allowed) {
  for (const auto& [k, v] : o.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) return k;
  }
  return "";
}

std::string Keys(std::initializer_list<const char*> allowed) {
  std::string s;
  for (const char* a : allowed) s += (s.empty() ? "" : ", ") + std::string(a);
  return s;
}

// "base": a shipped scenario's name or file, a path relative to the spec,
// or the scenario itself.
Result<json> ResolveBase(const json& base, const std::string& file) {
  if (base.is_object()) return base;
  if (!base.is_string()) return Bad(file, "$.base: expected a scenario object, name or path");
  const std::string b = base.get<std::string>();
  for (const auto& s : workload::ShippedScenarios()) {
    const std::string f = s.file;
    const auto slash = f.rfind('/');
    const std::string stem = f.substr(slash + 1, f.size() - slash - 1 - 5);  // drop ".json"
    if (b == f || b == stem) return json::parse(s.json);
  }
  std::string path = b;
  if (!path.empty() && path[0] != '/') {
    const auto slash = file.rfind('/');
    if (slash != std::string::npos) path = file.substr(0, slash + 1) + path;
  }
  auto j = workload::ReadJsonFile(path);
  if (!j.ok() && j.status().code() == -ENOENT) {
    return Bad(file, "$.base: " + Shown(b) +
                         " is neither a shipped scenario (swaplab reproduce --list) nor a "
                         "readable file");
  }
  if (!j.ok()) return Bad(file, "$.base: " + j.status().message());
  if (!j->is_object()) return Bad(file, "$.base: " + Shown(path) + ": not a JSON object");
  return j;
}

double Rounded(double v) { return std::round(v * 1e9) / 1e9; }

// An axis's "values" or "range", bounded before anything is allocated.
Status AxisValues(const json& a, const std::string& where, const std::string& file, Axis* axis) {
  const bool has_values = a.contains("values"), has_range = a.contains("range");
  if (has_values == has_range) return Bad(file, where + ": needs one of \"values\" or \"range\"");
  if (has_values) {
    const json& v = a["values"];
    if (!v.is_array() || v.empty()) return Bad(file, where + ".values: expected a non-empty list");
    if (v.size() > kMaxAxisValues)
      return Bad(file,
                 fmt::format("{}.values: {} values, at most {}", where, v.size(), kMaxAxisValues));
    axis->values.assign(v.begin(), v.end());
    return Status::Ok();
  }
  const json& r = a["range"];
  if (!r.is_object()) return Bad(file, where + ".range: expected {\"from\", \"to\", \"step\"}");
  if (std::string k = UnknownKey(r, {"from", "to", "step"}); !k.empty())
    return Bad(file, where + ".range: unknown key " + Shown(k) + " (allowed: from, to, step)");
  for (const char* k : {"from", "to", "step"}) {
    if (!r.contains(k) || !r[k].is_number())
      return Bad(file, fmt::format("{}.range.{}: expected a number", where, k));
  }
  const double from = r["from"].get<double>(), to = r["to"].get<double>(),
               step = r["step"].get<double>();
  if (!(step > 0) || !std::isfinite(from) || !std::isfinite(to) || to < from)
    return Bad(file, where + ".range: needs from <= to and step > 0");
  const double n = std::floor((to - from) / step + 1e-9) + 1;
  if (!(n <= static_cast<double>(kMaxAxisValues)))
    return Bad(file, fmt::format("{}.range: {:.0f} values, at most {}", where, n, kMaxAxisValues));
  const bool integral = r["from"].is_number_integer() && r["step"].is_number_integer();
  for (uint64_t i = 0; i < static_cast<uint64_t>(n); ++i) {
    if (integral) {
      axis->values.push_back(r["from"].get<int64_t>() +
                             static_cast<int64_t>(i) * r["step"].get<int64_t>());
    } else {
      axis->values.push_back(Rounded(from + static_cast<double>(i) * step));
    }
  }
  return Status::Ok();
}

Result<Axis> ParseAxis(const json& a, size_t i, const json& base, const std::string& file) {
  const std::string where = fmt::format("$.axes[{}]", i);
  static constexpr std::initializer_list<const char*> kKeys = {
      "name", "path", "knob", "seed", "variant", "values", "range", "multiply", "suffix"};
  if (!a.is_object()) return Bad(file, where + ": expected an object");
  if (std::string k = UnknownKey(a, kKeys); !k.empty())
    return Bad(file, where + ": unknown key " + Shown(k) + " (allowed: " + Keys(kKeys) + ")");
  Axis axis;
  if (!a.contains("name") || !a["name"].is_string() || a["name"].get<std::string>().empty())
    return Bad(file, where + ".name: expected a non-empty string");
  axis.name = a["name"].get<std::string>();
  const int kinds = a.contains("path") + a.contains("knob") + a.contains("seed");
  if (kinds != 1) return Bad(file, where + ": needs exactly one of \"path\", \"knob\", \"seed\"");
  if (a.contains("path")) {
    if (!a["path"].is_string()) return Bad(file, where + ".path: expected a JSON pointer string");
    axis.path = a["path"].get<std::string>();
    json::json_pointer p;
    try {
      p = json::json_pointer(axis.path);
    } catch (const json::exception&) {
      return Bad(file, where + ".path: " + Shown(axis.path) +
                           " is not a JSON pointer (\"/measured/0/size\")");
    }
    // The field may be absent (a default) but its parent must exist; the
    // scenario parser checks the key itself.
    // contains() throws on a token that is no array index ("/aging//x").
    bool there = false;
    try {
      there = !p.empty() && base.contains(p.parent_pointer()) &&
              (base.at(p.parent_pointer()).is_object() ||
               (base.at(p.parent_pointer()).is_array() && base.contains(p)));
    } catch (const json::exception&) {
      there = false;
    }
    if (!there) {
      return Bad(file,
                 where + ".path: " + Shown(axis.path) + ": no such place in the base scenario");
    }
  } else if (a.contains("knob")) {
    axis.kind = Axis::Kind::kKnob;
    if (!a["knob"].is_string()) return Bad(file, where + ".knob: expected a knob name");
    axis.knob = a["knob"].get<std::string>();
    if (a.contains("variant")) {
      if (!a["variant"].is_string()) return Bad(file, where + ".variant: expected a label");
      axis.variant = a["variant"].get<std::string>();
    }
  } else {
    axis.kind = Axis::Kind::kSeed;
    if (!a["seed"].is_boolean() || !a["seed"].get<bool>())
      return Bad(file, where + ".seed: expected true");
  }
  if (a.contains("variant") && axis.kind != Axis::Kind::kKnob)
    return Bad(file, where + ".variant: only for a knob axis");
  if (a.contains("multiply") || a.contains("suffix")) {
    if (axis.kind != Axis::Kind::kPath)
      return Bad(file, where + ": multiply and suffix are for a path axis");
    if (a.contains("multiply")) {
      if (!a["multiply"].is_number() || !std::isfinite(a["multiply"].get<double>()))
        return Bad(file, where + ".multiply: expected a number");
      axis.multiply = a["multiply"].get<double>();
    }
    if (a.contains("suffix")) {
      if (!a["suffix"].is_string()) return Bad(file, where + ".suffix: expected a string");
      axis.suffix = a["suffix"].get<std::string>();
    }
  }
  if (Status st = AxisValues(a, where, file, &axis); !st.ok()) return st;
  for (const json& v : axis.values) {
    if (axis.kind == Axis::Kind::kSeed && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      return Bad(file, where + ": a seed is a non-negative integer, not " + Shown(v.dump()));
    if ((axis.multiply != 1.0 || !axis.suffix.empty()) && !v.is_number())
      return Bad(file, where + ": multiply / suffix need numbers, not " + Shown(v.dump()));
  }
  return axis;
}

// The value an axis writes into the scenario.
json FieldValue(const Axis& a, const json& v) {
  if (a.multiply == 1.0 && a.suffix.empty()) return v;
  const double x = Rounded(v.get<double>() * a.multiply);
  if (a.suffix.empty()) return x;
  return fmt::format("{}{}", x, a.suffix);
}

std::string KnobText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const json& e : v)
      s += (s.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
    return s;
  }
  return v.dump();
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string PointName(const json& axes) {
  std::string s;
  for (const auto& [k, v] : axes.items()) s += (s.empty() ? "" : ", ") + k + "=" + v.dump();
  return Printable(s);
}

}  // namespace

Result<workload::Scenario> PointScenario(const json& input, const std::string& where) {
  auto parsed = workload::ParseScenario(input.at("scenario").dump(), where);
  if (!parsed.ok()) return parsed.status();
  workload::Scenario sc = std::move(parsed).value();
  for (const json& k : input.at("knobs")) {
    const std::string variant = k.at("variant").get<std::string>();
    bool found = false;
    for (auto& v : sc.variants) {
      if (!variant.empty() && v.label != variant) continue;
      found = true;
      if (Status st =
              v.policy.Set(k.at("knob").get<std::string>(), k.at("value").get<std::string>());
          !st.ok())
        return Status(-EINVAL, where + ": variant " + Printable(v.label) + ": " + st.message());
      if (Status st = v.policy.Validate(); !st.ok())
        return Status(-EINVAL, where + ": variant " + Printable(v.label) + ": " + st.message());
    }
    if (!found) return Status(-EINVAL, where + ": no variant labelled " + Shown(variant));
  }
  return sc;
}

namespace {

// ExpandSpec's steps, in the order they check the spec (its first error is
// the one reported), and what they have read so far.
class SpecExpander {
 public:
  SpecExpander(json spec, const std::string& file, double scale)
      : spec_(std::move(spec)), file_(file), scale_(scale) {}
  Result<Sweep> Expand();

 private:
  Status ReadNameAndBase();
  Status ReadScale();
  Status ReadStructuralAndCombine();
  Status ReadAxes();
  Status CheckHeatmapCells() const;
  Status CountPoints();
  std::vector<size_t> PointIndices(uint64_t p) const;
  json PointInput(const std::vector<size_t>& idx) const;
  Status AddPoint(uint64_t p);

  json spec_;
  const std::string& file_;
  const double scale_;  // --scale
  Sweep s_;
  json base_;  // the base scenario, resolved
  std::string combine_ = "grid";
  std::set<std::string> names_;  // of the axes
  uint64_t n_ = 1;               // points
  std::set<std::string> ids_;    // of the points made so far
};

Result<Sweep> SpecExpander::Expand() {
  static constexpr std::initializer_list<const char*> kKeys = {
      "name", "title", "base", "scale", "structural", "combine", "axes", "derived", "heatmaps"};
  if (std::string k = UnknownKey(spec_, kKeys); !k.empty())
    return Bad(file_, "$: unknown key " + Shown(k) + " (allowed: " + Keys(kKeys) + ")");
  if (Status st = ReadNameAndBase(); !st.ok()) return st;
  if (Status st = ReadScale(); !st.ok()) return st;
  if (Status st = ReadStructuralAndCombine(); !st.ok()) return st;
  if (Status st = ReadAxes(); !st.ok()) return st;
  if (Status st = CheckDerivedAndHeatmaps(spec_, names_, file_); !st.ok()) return st;
  if (Status st = CheckHeatmapCells(); !st.ok()) return st;
  if (Status st = CountPoints(); !st.ok()) return st;
  for (uint64_t p = 0; p < n_; ++p)
    if (Status st = AddPoint(p); !st.ok()) return st;
  s_.spec = std::move(spec_);
  return std::move(s_);
}

Status SpecExpander::ReadNameAndBase() {
  if (!spec_.contains("name") || !spec_["name"].is_string())
    return Bad(file_, "$.name: expected a string");
  s_.name = spec_["name"].get<std::string>();
  if (spec_.contains("title") && !spec_["title"].is_string())
    return Bad(file_, "$.title: expected a string");
  if (!spec_.contains("base")) return Bad(file_, "$.base: required");
  auto base = ResolveBase(spec_["base"], file_);
  if (!base.ok()) return base.status();
  base_ = *base;
  spec_["base"] = base_;
  return Status::Ok();
}

Status SpecExpander::ReadScale() {
  double spec_scale = 1.0;
  if (spec_.contains("scale")) {
    if (!spec_["scale"].is_number() || !(spec_["scale"].get<double>() > 0) ||
        spec_["scale"].get<double>() > 16)
      return Bad(file_, "$.scale: expected a number in (0, 16]");
    spec_scale = spec_["scale"].get<double>();
  }
  s_.scale = Rounded(spec_scale * scale_);
  if (!(s_.scale >= 1e-4 && s_.scale <= 16))
    return Bad(file_, fmt::format("$.scale × --scale = {}: outside [0.0001, 16]", s_.scale));
  return Status::Ok();
}

Status SpecExpander::ReadStructuralAndCombine() {
  if (spec_.contains("structural")) {
    if (!spec_["structural"].is_boolean())
      return Bad(file_, "$.structural: expected true or false");
    s_.structural = spec_["structural"].get<bool>();
  }
  if (spec_.contains("combine")) {
    if (!spec_["combine"].is_string())
      return Bad(file_, "$.combine: expected \"grid\" or \"list\"");
    combine_ = spec_["combine"].get<std::string>();
    if (combine_ != "grid" && combine_ != "list")
      return Bad(file_, "$.combine: " + Shown(combine_) + ": expected \"grid\" or \"list\"");
  }
  return Status::Ok();
}

Status SpecExpander::ReadAxes() {
  if (!spec_.contains("axes") || !spec_["axes"].is_array() || spec_["axes"].empty())
    return Bad(file_, "$.axes: expected a non-empty list");
  if (spec_["axes"].size() > kMaxAxes)
    return Bad(file_, fmt::format("$.axes: {} axes, at most {}", spec_["axes"].size(), kMaxAxes));
  for (size_t i = 0; i < spec_["axes"].size(); ++i) {
    auto a = ParseAxis(spec_["axes"][i], i, base_, file_);
    if (!a.ok()) return a.status();
    if (!names_.insert(a->name).second)
      return Bad(file_, fmt::format("$.axes[{}].name: {} named twice", i, Shown(a->name)));
    s_.axes.push_back(*a);
  }
  return Status::Ok();
}

// A heatmap's cells (x × y × facets) bounded like the points.
Status SpecExpander::CheckHeatmapCells() const {
  if (!spec_.contains("heatmaps")) return Status::Ok();
  auto values = [this](const json& name) -> uint64_t {
    for (const Axis& a : s_.axes)
      if (a.name == name.get<std::string>()) return a.values.size();
    return 1;
  };
  for (size_t i = 0; i < spec_["heatmaps"].size(); ++i) {
    const json& h = spec_["heatmaps"][i];
    const uint64_t cells =
        values(h["x"]) * values(h["y"]) * (h.contains("facet") ? values(h["facet"]) : 1);
    if (cells > kMaxHeatmapCells)
      return Bad(file_,
                 fmt::format("$.heatmaps[{}]: {} cells, at most {}", i, cells, kMaxHeatmapCells));
  }
  return Status::Ok();
}

// The number of points, bounded before any is made.
Status SpecExpander::CountPoints() {
  for (const Axis& a : s_.axes) {
    if (combine_ == "list") {
      if (a.values.size() != s_.axes[0].values.size())
        return Bad(file_, fmt::format("$.axes: \"list\" zips axes of equal length; {} has {} "
                                      "values, {} has {}",
                                      Shown(s_.axes[0].name), s_.axes[0].values.size(),
                                      Shown(a.name), a.values.size()));
      n_ = a.values.size();
    } else {
      n_ *= a.values.size();
      if (n_ > kMaxPoints) break;
    }
  }
  if (n_ > kMaxPoints) {
    return Bad(file_, fmt::format("$.axes: the grid has more than {} points (the product of the "
                                  "axes' lengths); split the sweep",
                                  kMaxPoints));
  }
  return Status::Ok();
}

// Point p's value index on each axis. Grid: the first axis varies slowest.
std::vector<size_t> SpecExpander::PointIndices(uint64_t p) const {
  std::vector<size_t> idx(s_.axes.size(), 0);
  uint64_t rest = p;
  for (size_t a = s_.axes.size(); a-- > 0;) {
    if (combine_ == "list") {
      idx[a] = p;
    } else {
      idx[a] = rest % s_.axes[a].values.size();
      rest /= s_.axes[a].values.size();
    }
  }
  return idx;
}

// What a point runs: the base scenario with the point's axis values set.
json SpecExpander::PointInput(const std::vector<size_t>& idx) const {
  json scenario = base_, axes = json::object(), knobs = json::array();
  for (size_t a = 0; a < s_.axes.size(); ++a) {
    const Axis& ax = s_.axes[a];
    const json& v = ax.values[idx[a]];
    axes[ax.name] = v;
    if (ax.kind == Axis::Kind::kPath) {
      scenario[json::json_pointer(ax.path)] = FieldValue(ax, v);
    } else if (ax.kind == Axis::Kind::kSeed) {
      scenario["seed"] = v;
    } else {
      knobs.push_back({{"knob", ax.knob}, {"variant", ax.variant}, {"value", KnobText(v)}});
    }
  }
  return {{"axes", axes},
          {"knobs", knobs},
          {"scale", s_.scale},
          {"structural", s_.structural},
          {"scenario", scenario}};
}

Status SpecExpander::AddPoint(uint64_t p) {
  json input = PointInput(PointIndices(p));
  const json axes = input["axes"];
  const std::string id = fmt::format("{:016x}", Fnv1a(input.dump()));
  const std::string where = Printable(file_) + ": point " + PointName(axes);
  auto sc = PointScenario(input, where);
  if (!sc.ok()) return sc.status();
  if (!ids_.insert(id).second) return Bad(file_, "point " + PointName(axes) + " is listed twice");
  input["id"] = id;
  s_.points.push_back(Point{id, axes, std::move(input)});
  return Status::Ok();
}

}  // namespace

Result<Sweep> ExpandSpec(const std::string& text, const std::string& file, double scale) {
  auto parsed = workload::ParseJson(text, file);
  if (!parsed.ok()) return parsed.status();
  json spec = std::move(parsed).value();
  if (!spec.is_object()) return Bad(file, "$: expected an object");
  return SpecExpander(std::move(spec), file, scale).Expand();
}

Result<Sweep> LoadSpec(const std::string& path, double scale) {
  auto text = workload::ReadTextFile(path, workload::kMaxJsonFile);
  if (!text.ok()) return text.status();
  return ExpandSpec(*text, path, scale);
}

}  // namespace swaplab::sweep
