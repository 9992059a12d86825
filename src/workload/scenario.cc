// SPDX-License-Identifier: MIT
// Scenario parsing and checking (scenario.h; schema in scenarios/README.md).
#include "swaplab/workload/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "swaplab/alloc/printable.h"
#include "swaplab/workload/json_file.h"
#include "workload/steps.h"

namespace swaplab::workload {

using nlohmann::json;

namespace {

// Finds the first key given twice in one object (nlohmann::json keeps the
// last silently) with its JSON path ("$.devices[0].size"), during the
// parse: a stack of the objects and arrays open at the current point.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    if ((ev == E::object_start || ev == E::array_start || ev == E::value) && !open_.empty() &&
        !open_.back().object)
      ++open_.back().n;  // an element of the enclosing array
    switch (ev) {
      case E::object_start:
        open_.push_back({true});
        break;
      case E::array_start:
        open_.push_back({false});
        break;
      case E::object_end:
      case E::array_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case E::key: {
        if (open_.empty() || !parsed.is_string()) break;
        Open& o = open_.back();
        o.key = parsed.get<std::string>();
        if (!o.keys.insert(o.key).second && first_.empty()) first_ = Path();
        break;
      }
      case E::value:
        break;
    }
    return true;
  }
  // "" when every key is unique.
  const std::string& first_duplicate() const { return first_; }

 private:
  struct Open {
    bool object = true;
    std::set<std::string> keys{};
    std::string key{};  // object: the last key read
    size_t n = 0;       // array: elements begun
  };
  std::string Path() const {
    std::string p = "$";
    for (const Open& o : open_)
      p += o.object ? "." + PathKey(o.key) : "[" + std::to_string(o.n - 1) + "]";
    return p;
  }
  std::vector<Open> open_;
  std::string first_;
};

Status PolicyOf(const ScenarioReader& r, const json& j, const std::string& path, alloc::Policy* p) {
  SL_TRY(r.Keys(j, path, {"preset", "knobs"}));
  std::string preset;
  SL_TRY(r.Str(j, path, "preset", &preset));
  if (!preset.empty()) {
    auto pr = alloc::Policy::Preset(preset);
    if (!pr.ok()) return r.Error(path + ".preset", WithToken(pr.status().message(), preset));
    *p = *pr;
  }
  if (!j.contains("knobs")) return Status::Ok();
  const json& k = j["knobs"];
  const std::string kp = path + ".knobs";
  if (!k.is_object()) return r.Error(kp, "expected an object of knobs (alloc/policy.h lists them)");
  std::vector<std::string_view> allowed = {"name"};
  for (const auto& info : alloc::Policy::Knobs()) allowed.push_back(info.name);
  SL_TRY(r.Keys(k, kp, allowed));
  SL_TRY(r.Str(k, kp, "name", &p->name));
  // Every knob goes through Policy::Set, as --knob does; JSON types first.
  for (const auto& info : alloc::Policy::Knobs()) {
    if (!k.contains(info.name)) continue;
    const json& v = k[std::string(info.name)];
    const std::string at = kp + "." + std::string(info.name);
    std::string text;
    if (info.type == "bool") {
      if (!v.is_boolean()) return r.Error(at, "expected true or false");
      text = v.get<bool>() ? "true" : "false";
    } else if (info.type == "int") {
      if (!v.is_number_integer()) return r.Error(at, "expected an integer");
      text = std::to_string(v.get<int64_t>());
    } else {
      if (!v.is_array() || v.empty())
        return r.Error(at, "expected a non-empty array of search steps");
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
          return r.Error(at + "[" + std::to_string(i) + "]", "expected a step name");
        const std::string step = v[i].get<std::string>();
        if (!alloc::ParseSearchStep(step))
          return r.Error(at + "[" + std::to_string(i) + "]",
                         "unknown search step '" + Printable(step, kMaxTokenInMessage) + "'");
        text += (i ? "," : "") + step;
      }
    }
    if (Status st = p->Set(info.name, text); !st.ok()) return r.Error(at, st.message());
  }
  if (Status st = p->Validate(); !st.ok()) return r.Error(path, st.message());
  return Status::Ok();
}

Status ParseSteps(const ScenarioReader& r, const json& j, const char* key, int cpus,
                  uint64_t dev_pages, std::vector<Step>* out) {
  if (!j.contains(key)) return Status::Ok();
  const std::string path = std::string("$.") + key;
  if (!j[key].is_array()) return r.Error(path, "expected an array of generator steps");
  for (size_t i = 0; i < j[key].size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    auto st = ParseStep(r, j[key][i], p, cpus);
    if (!st.ok()) return st.status();
    const uint64_t need = PagesNeeded(*st);
    if (need > dev_pages - 1) {
      const char* what = PagesKey(*st);
      return r.Error(p + what, "needs " + std::to_string(need) +
                                   " pages but the device ($.devices[0]) has " +
                                   std::to_string(dev_pages - 1) + " usable pages");
    }
    out->push_back(*st);
  }
  return Status::Ok();
}

// The text as JSON into *j; not JSON, or a key given twice, is an error.
Status ParseJson(const ScenarioReader& r, const std::string& text, json* j) {
  DuplicateKeyFinder dups;
  try {
    *j = json::parse(text, std::ref(dups));
  } catch (const json::exception& e) {
    // The message quotes the last token read: cut and escaped.
    return r.Error("$", "not JSON: " + Printable(e.what()));
  }
  if (!dups.first_duplicate().empty())
    return r.Error(dups.first_duplicate(),
                   "key given twice in one object (a JSON parser would keep only the last)");
  return Status::Ok();
}

// One scenario file's sections read into *sc, one step per section
// (scenarios/README.md), in the order their checks run: the first error
// is the one reported. base_ is the top-level policy the variants start
// from.
class ScenarioParser {
 public:
  ScenarioParser(const ScenarioReader& r, const json& j, Scenario* sc) : r_(r), j_(j), sc_(*sc) {}
  Status Parse() {
    SL_TRY(TopLevel());
    SL_TRY(Devices());
    SL_TRY(ParseSteps(r_, j_, "aging", sc_.cpus, sc_.devices[0].pages, &sc_.aging));
    SL_TRY(ParseSteps(r_, j_, "measured", sc_.cpus, sc_.devices[0].pages, &sc_.measured));
    if (sc_.measured.empty())
      return r_.Error("$.measured", "required: at least one generator step to measure");
    SL_TRY(Variants());
    if (j_.contains("host_cpu")) SL_TRY(HostCpu(j_["host_cpu"]));
    SL_TRY(r_.StrList(j_, "$", "rows", &sc_.rows));
    SL_TRY(r_.StrList(j_, "$", "pct_rows", &sc_.pct_rows));
    if (j_.contains("seed_reported")) SL_TRY(SeedReported(j_["seed_reported"]));
    return Status::Ok();
  }

 private:
  Status TopLevel();
  Status Devices();
  Status Device(size_t i, std::set<std::string>* names);
  Status Variants();
  Status Variant(size_t i);
  Status HostCpu(const json& h);
  Status SeedReported(const json& s);
  Status SeedCells(const json& cells);

  const ScenarioReader& r_;
  const json& j_;
  Scenario& sc_;
  alloc::Policy base_ = *alloc::Policy::Preset(alloc::kRfcBasePreset);
};

// The keys of the top level and its plain values, then its policy.
Status ScenarioParser::TopLevel() {
  SL_TRY(r_.Keys(
      j_, "$",
      {"name",     "group",         "title",   "setup",           "seed",     "repetitions", "cpus",
       "parallel", "policy",        "devices", "aging",           "measured", "variants",    "rows",
       "pct_rows", "seed_reported", "answers", "reproduce_scale", "host_cpu", "$comment"}));
  SL_TRY(r_.Str(j_, "$", "name", &sc_.name, true));
  sc_.group = sc_.name;
  SL_TRY(r_.Str(j_, "$", "group", &sc_.group));
  SL_TRY(r_.Str(j_, "$", "title", &sc_.title));
  SL_TRY(r_.Str(j_, "$", "answers", &sc_.answers));
  SL_TRY(r_.StrList(j_, "$", "setup", &sc_.setup));
  SL_TRY(r_.Int(j_, "$", "seed", &sc_.seed, 0, INT64_MAX));
  SL_TRY(r_.Int(j_, "$", "repetitions", &sc_.repetitions, 1, 100));
  SL_TRY(r_.Int(j_, "$", "cpus", &sc_.cpus, 1, 64));
  SL_TRY(r_.Bool(j_, "$", "parallel", &sc_.parallel));
  SL_TRY(r_.Num(j_, "$", "reproduce_scale", &sc_.reproduce_scale, 1e-4, 1));
  if (j_.contains("policy")) SL_TRY(PolicyOf(r_, j_["policy"], "$.policy", &base_));
  return Status::Ok();
}

Status ScenarioParser::Devices() {
  if (!j_.contains("devices") || !j_["devices"].is_array() || j_["devices"].empty())
    return r_.Error("$.devices", "required: a non-empty array of devices");
  std::set<std::string> names;
  for (size_t i = 0; i < j_["devices"].size(); ++i) SL_TRY(Device(i, &names));
  return Status::Ok();
}

// $.devices[i]; *names: the device names so far (each is given once).
Status ScenarioParser::Device(size_t i, std::set<std::string>* names) {
  const std::string p = "$.devices[" + std::to_string(i) + "]";
  const json& d = j_["devices"][i];
  SL_TRY(r_.Keys(d, p, {"name", "size", "ssd", "blkdev", "discard", "prio", "backing", "dir"}));
  DeviceSpec ds;
  ds.name = "swap" + std::to_string(i);
  SL_TRY(r_.Str(d, p, "name", &ds.name));
  SL_TRY(r_.Pages(d, p, "size", &ds.pages, true));
  if (ds.pages < 10) return r_.Error(p + ".size", "a swap area needs at least 10 pages (mkswap)");
  if (ds.pages > (uint64_t{1} << 32))
    return r_.Error(p + ".size", "larger than the largest swap area (2^32 pages)");
  SL_TRY(r_.Bool(d, p, "ssd", &ds.ssd));
  SL_TRY(r_.Bool(d, p, "blkdev", &ds.blkdev));
  SL_TRY(r_.Bool(d, p, "discard", &ds.discard));
  if (d.contains("prio")) {
    int prio = 0;
    SL_TRY(r_.Int(d, p, "prio", &prio, 0, alloc::kMaxSwapPrio));
    ds.prio = prio;
  }
  std::string backing = "simulated";
  SL_TRY(r_.Either(d, p, "backing", "simulated", "file", &backing));
  ds.real_file = backing == "file";
  SL_TRY(r_.Str(d, p, "dir", &ds.dir));
  if (!names->insert(ds.name).second)
    return r_.Error(p + ".name",
                    "device name '" + Printable(ds.name, kMaxTokenInMessage) + "' used twice");
  sc_.devices.push_back(ds);
  return Status::Ok();
}

// No variants: one, "result", with the base policy.
Status ScenarioParser::Variants() {
  if (!j_.contains("variants")) {
    sc_.variants.push_back(VariantSpec{"result", base_});
    return Status::Ok();
  }
  if (!j_["variants"].is_array() || j_["variants"].empty())
    return r_.Error("$.variants", "expected a non-empty array");
  for (size_t i = 0; i < j_["variants"].size(); ++i) SL_TRY(Variant(i));
  return Status::Ok();
}

Status ScenarioParser::Variant(size_t i) {
  const std::string p = "$.variants[" + std::to_string(i) + "]";
  const json& v = j_["variants"][i];
  SL_TRY(r_.Keys(v, p, {"label", "policy", "source", "batch", "threads"}));
  VariantSpec vs{"", base_};
  SL_TRY(r_.Str(v, p, "label", &vs.label, true));
  if (v.contains("policy")) SL_TRY(PolicyOf(r_, v["policy"], p + ".policy", &vs.policy));
  SL_TRY(r_.Named(v, p, "source", hibernate::ParseSlotSource, &vs.source));
  SL_TRY(r_.Named(v, p, "batch", hibernate::ParseBatchMode, &vs.batch));
  SL_TRY(r_.Int(v, p, "threads", &vs.threads, 1, sc_.cpus));
  sc_.variants.push_back(vs);
  return Status::Ok();
}

// $.host_cpu: a named profile (host_cpu.h) or the costs themselves; for
// simulated devices only.
Status ScenarioParser::HostCpu(const json& h) {
  const std::string p = "$.host_cpu";
  HostCpuCost c;
  if (h.is_string()) {  // a named profile (host_cpu.h)
    const HostCpuProfile* prof = FindHostCpuProfile(h.get<std::string>());
    if (prof == nullptr)
      return r_.Error(p, "'" + Printable(h.get<std::string>(), kMaxTokenInMessage) +
                             "' names no host CPU profile (known: " + HostCpuProfileNames() + ")");
    c = prof->Cost();
  } else {
    SL_TRY(r_.Keys(h, p, {"label", "write_bio_us", "read_bio_us", "alloc_call_us"}));
    SL_TRY(r_.Str(h, p, "label", &c.label, true));
    SL_TRY(r_.Num(h, p, "write_bio_us", &c.write_bio_us, 0, 1e6));
    SL_TRY(r_.Num(h, p, "read_bio_us", &c.read_bio_us, 0, 1e6));
    SL_TRY(r_.Num(h, p, "alloc_call_us", &c.alloc_call_us, 0, 1e6));
  }
  for (size_t i = 0; i < sc_.devices.size(); ++i) {
    if (sc_.devices[i].real_file)
      return r_.Error(
          p, "device " + Printable(sc_.devices[i].name, kMaxTokenInMessage) +
                 " is a real file: its measured seconds already include this machine's CPU; "
                 "host_cpu prices CPU work for simulated devices only");
  }
  sc_.host_cpu = c;
  return Status::Ok();
}

Status ScenarioParser::SeedReported(const json& s) {
  SL_TRY(r_.Keys(s, "$.seed_reported", {"source", "setup", "cells"}));
  SL_TRY(r_.Str(s, "$.seed_reported", "source", &sc_.seed_reported.source));
  SL_TRY(r_.StrList(s, "$.seed_reported", "setup", &sc_.seed_reported.setup));
  if (s.contains("cells")) SL_TRY(SeedCells(s["cells"]));
  return Status::Ok();
}

// $.seed_reported.cells: row -> column -> text, as the seed printed it.
Status ScenarioParser::SeedCells(const json& cells) {
  if (!cells.is_object())
    return r_.Error("$.seed_reported.cells", "expected an object row -> column -> text");
  for (auto row = cells.begin(); row != cells.end(); ++row) {
    const std::string p = "$.seed_reported.cells." + PathKey(row.key());
    if (!row->is_object()) return r_.Error(p, "expected an object column -> text");
    for (auto col = row->begin(); col != row->end(); ++col) {
      if (!col->is_string())
        return r_.Error(p + "." + PathKey(col.key()), "expected a string (as the seed printed it)");
      sc_.seed_reported.cells[row.key()][col.key()] = col->get<std::string>();
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& file) {
  ScenarioReader r(file);
  json j;
  SL_TRY(ParseJson(r, text, &j));
  Scenario sc;
  sc.file = file;
  SL_TRY(ScenarioParser(r, j, &sc).Parse());
  return sc;
}

Result<std::optional<HostCpuCost>> ParseHostCpuArg(const std::string& s) {
  if (s == "none") return std::optional<HostCpuCost>{};
  if (const HostCpuProfile* prof = FindHostCpuProfile(s))
    return std::optional<HostCpuCost>{prof->Cost()};
  auto bad = [&](const std::string& why) {
    return Status(-EINVAL,
                  "--host-cpu '" + Printable(s, kMaxTokenInMessage) + "': " + why +
                      " (expected none, " + HostCpuProfileNames() +
                      ", or W,R,A: microseconds per write bio, per read bio, per allocator call)");
  };
  double v[3];
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? s.find(',', pos) : s.size();
    if (end == std::string::npos) return bad("three numbers needed");
    const std::string part = s.substr(pos, end - pos);
    size_t used = 0;
    try {
      v[i] = std::stod(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size())
      return bad("'" + Printable(part, kMaxTokenInMessage) + "' is not a number");
    if (!(v[i] >= 0 && v[i] <= 1e6))
      return bad("'" + Printable(part, kMaxTokenInMessage) + "' is outside 0..1000000");
    pos = end + 1;
  }
  HostCpuCost c;
  c.label = "--host-cpu " + s;
  c.write_bio_us = v[0];
  c.read_bio_us = v[1];
  c.alloc_call_us = v[2];
  return std::optional<HostCpuCost>{c};
}

bool SetHostCpu(Scenario& sc, const std::optional<HostCpuCost>& c) {
  for (const auto& d : sc.devices)
    if (d.real_file) return false;
  bool image = false;
  for (const auto& st : sc.measured) image |= std::holds_alternative<ImageStepSpec>(st);
  if (!image) return false;
  static const char* const kRows[] = {"write + host CPU, s", "read + host CPU, s"};
  auto drop = [](std::vector<std::string>& v) {
    for (const char* r : kRows) v.erase(std::remove(v.begin(), v.end(), r), v.end());
  };
  auto add = [](std::vector<std::string>& v) {
    if (std::find(v.begin(), v.end(), kRows[0]) != v.end()) return;
    auto at = std::find(v.begin(), v.end(), "read, s");
    if (at == v.end()) at = std::find(v.begin(), v.end(), "write, s");
    at = at == v.end() ? v.end() : at + 1;
    v.insert(at, {kRows[0], kRows[1]});
  };
  sc.host_cpu = c;
  if (!c) {
    drop(sc.rows);
    drop(sc.pct_rows);
    return true;
  }
  if (!sc.rows.empty()) add(sc.rows);
  if (std::find(sc.pct_rows.begin(), sc.pct_rows.end(), "write, s") != sc.pct_rows.end())
    add(sc.pct_rows);
  return true;
}

Result<Scenario> LoadScenario(const std::string& path) {
  // A regular file of at most 16 MiB (json_file.h): a FIFO or /dev/zero is
  // refused before it can block or fill memory.
  auto text = ReadTextFile(path, kMaxJsonFile);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace swaplab::workload
