// SPDX-License-Identifier: MIT
// A sweep directory's files read as untrusted input (sweep_internal.h):
// sweep.json, in/ID.json and points/ID.json may have been written by
// anyone with access to a shared directory, so each is read through the
// checked reader (swaplab/workload/json_file.h) and its whole schema is
// checked before any of it is used: a name that becomes a path, a number
// that sizes a run, a type that the merge takes for granted.
#include <fmt/core.h>

#include <set>

#include "swaplab/alloc/printable.h"
#include "swaplab/workload/json_file.h"
#include "sweep/sweep_internal.h"

namespace swaplab::sweep {

namespace {

using nlohmann::json;
using workload::JsonAt;

// An axis's values, a knob's value: bounded JSON, any type.
Status CheckSweepPoints(const JsonAt& points, const std::set<std::string>& axes) {
  if (Status st = points.Array(kMaxPoints); !st.ok()) return st;
  std::set<std::string> ids;
  for (size_t i = 0; i < points.size(); ++i) {
    const JsonAt p = points[i];
    if (Status st = p.Object(); !st.ok()) return st;
    auto id = p["id"].Str();
    if (!id.ok()) return id.status();
    if (!ValidId(*id))
      return p["id"].Error("'" + Printable(*id, kMaxTokenInMessage) + "': expected 16 hex digits");
    if (!ids.insert(*id).second) return p["id"].Error(*id + " listed twice");
    if (Status st = p["axes"].Object(); !st.ok()) return st;
    for (const std::string& a : axes)
      if (!p["axes"][a].present()) return p["axes"][a].Error("required (the point's value)");
  }
  return Status::Ok();
}

// The spec as sweep.json keeps it: what merge, its maps and the HTML page
// read of it.
Status CheckSweepSpec(const JsonAt& spec, const std::set<std::string>& axes,
                      const std::string& file) {
  if (Status st = spec.Object(); !st.ok()) return st;
  for (const char* k : {"name", "title"})
    if (spec[k].present())
      if (auto s = spec[k].Str(); !s.ok()) return s.status();
  if (Status st = spec["axes"].Array(kMaxAxes); !st.ok()) return st;
  for (size_t i = 0; i < spec["axes"].size(); ++i) {
    const JsonAt a = spec["axes"][i];
    if (Status st = a.Object(); !st.ok()) return st;
    auto name = a["name"].Str();
    if (!name.ok()) return name.status();
    if (!axes.count(*name)) return a["name"].Error("not one of $.axes");
  }
  return CheckDerivedAndHeatmaps(spec.value(), axes, file + " ($.spec)");
}

}  // namespace

bool ValidId(const std::string& id) {
  if (id.size() != 16) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool ValidHeatmapName(const std::string& name) {
  return !name.empty() && name.size() <= kMaxHeatmapName &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos;
}

Status CheckSweepDoc(const json& doc, const std::string& file) {
  const JsonAt root(doc, file);
  if (Status st = root.Object(); !st.ok()) return st;
  for (const char* k : {"name", "command"})
    if (root[k].present() || std::string(k) == "name")
      if (auto s = root[k].Str(); !s.ok()) return s.status();
  if (auto x = root["scale"].Num(1e-4, 16); !x.ok()) return x.status();
  if (auto b = root["structural"].Bool(); !b.ok()) return b.status();
  if (Status st = root["axes"].Array(kMaxAxes); !st.ok()) return st;
  std::set<std::string> axes;
  for (size_t i = 0; i < root["axes"].size(); ++i) {
    auto a = root["axes"][i].Str();
    if (!a.ok()) return a.status();
    if (!axes.insert(*a).second) return root["axes"][i].Error("named twice");
  }
  if (Status st = CheckSweepSpec(root["spec"], axes, file); !st.ok()) return st;
  return CheckSweepPoints(root["points"], axes);
}

Status CheckPointInput(const json& input, const std::string& file, const std::string& id) {
  const JsonAt root(input, file);
  if (Status st = root.Object(); !st.ok()) return st;
  auto got = root["id"].Str();
  if (!got.ok()) return got.status();
  if (*got != id) return root["id"].Error("not " + id + " (the file's name)");
  // The command line's --scale range: 0, -1 or 1e300 would size a region
  // of 2^64 - 2^18 pages.
  if (auto x = root["scale"].Num(1e-4, 16); !x.ok()) return x.status();
  if (auto b = root["structural"].Bool(); !b.ok()) return b.status();
  if (Status st = root["axes"].Object(); !st.ok()) return st;
  if (Status st = root["scenario"].Object(); !st.ok()) return st;
  if (Status st = root["knobs"].Array(kMaxAxes); !st.ok()) return st;
  for (size_t i = 0; i < root["knobs"].size(); ++i) {
    const JsonAt k = root["knobs"][i];
    if (Status st = k.Object(); !st.ok()) return st;
    for (const char* f : {"knob", "variant", "value"})
      if (auto s = k[f].Str(); !s.ok()) return s.status();
  }
  return Status::Ok();
}

Status CheckPointResult(const json& result, const std::string& file, const std::string& id) {
  const JsonAt root(result, file);
  if (Status st = root.Object(); !st.ok()) return st;
  auto got = root["id"].Str();
  if (!got.ok()) return got.status();
  if (*got != id) return root["id"].Error("not " + id + " (the file's name)");
  if (Status st = root["metrics"].Object(); !st.ok()) return st;
  if (root["metrics"].size() > kMaxMetrics)
    return root["metrics"].Error(
        fmt::format("{} metrics, at most {}", root["metrics"].size(), kMaxMetrics));
  for (const auto& [k, v] : result["metrics"].items())
    if (!v.is_number() && !v.is_null())
      return root["metrics"][k].Error("expected a number or null, not " +
                                      Printable(v.dump(), kMaxTokenInMessage));
  for (const char* k : {"cpu_seconds", "wall_seconds"})  // 0 when absent
    if (root[k].present())
      if (auto x = root[k].Num(0, 1e12); !x.ok()) return x.status();
  return Status::Ok();
}

Result<json> ReadPointResult(const std::string& dir, const std::string& id) {
  const std::string path = dir + "/points/" + id + ".json";
  auto r = workload::ReadJsonFile(path);
  if (!r.ok()) return r.status();
  if (Status st = CheckPointResult(*r, path, id); !st.ok()) return st;
  return r;
}

}  // namespace swaplab::sweep
