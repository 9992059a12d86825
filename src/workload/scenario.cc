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
#include "swaplab/workload/size.h"

namespace swaplab::workload {

using nlohmann::json;

namespace {

using alloc::kPageSize;
// The largest size a scenario may state anywhere (a device, a region, an
// image, a process): the largest swap area, 2^32 pages (16 TiB).
constexpr uint64_t kMaxPages = uint64_t{1} << 32;

// A JSON key as a path component: cut and escaped (swaplab/alloc/printable.h).
std::string PathKey(const std::string& key) { return Printable(key, kMaxTokenInMessage); }
// `msg` from a name parser that quotes `v` whole: the quote cut and escaped.
std::string WithToken(std::string msg, const std::string& v) {
  const std::string t = Printable(v, kMaxTokenInMessage);
  if (t == v) return msg;
  for (size_t at = msg.find(v); at != std::string::npos; at = msg.find(v, at + t.size()))
    msg.replace(at, v.size(), t);
  return msg;
}

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

// Carries the file name and the JSON path of the value being read; the
// first error wins and stops the parse.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  Status Error(const std::string& path, const std::string& what) const {
    return Status(-EINVAL, file_ + ": " + path + ": " + what);
  }
  // Refuses keys outside `known`.
  Status Keys(const json& j, const std::string& path,
              std::initializer_list<const char*> known) const {
    return Keys(j, path, std::vector<std::string_view>(known.begin(), known.end()));
  }
  Status Keys(const json& j, const std::string& path,
              const std::vector<std::string_view>& known) const {
    if (!j.is_object()) return Error(path, "expected an object, got " + std::string(j.type_name()));
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool ok = false;
      std::string list;
      for (std::string_view k : known) {
        ok |= it.key() == k;
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      if (!ok)
        return Error(path + "." + PathKey(it.key()), "unknown key (known here: " + list + ")");
    }
    return Status::Ok();
  }
  Status Str(const json& j, const std::string& path, const char* key, std::string* out,
             bool required = false) const {
    if (!j.contains(key)) return required ? Error(path + "." + key, "required") : Status::Ok();
    if (!j[key].is_string())
      return Error(path + "." + key, "expected a string, got " + std::string(j[key].type_name()));
    *out = j[key].get<std::string>();
    return Status::Ok();
  }
  Status Bool(const json& j, const std::string& path, const char* key, bool* out) const {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_boolean())
      return Error(path + "." + key,
                   "expected true or false, got " + std::string(j[key].type_name()));
    *out = j[key].get<bool>();
    return Status::Ok();
  }
  template <class T>
  Status Int(const json& j, const std::string& path, const char* key, T* out, int64_t lo,
             int64_t hi, bool required = false) const {
    if (!j.contains(key)) return required ? Error(path + "." + key, "required") : Status::Ok();
    const json& v = j[key];
    if (!v.is_number_integer())
      return Error(path + "." + key, "expected an integer, got " + std::string(v.type_name()));
    const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                          ? INT64_MAX
                          : v.get<int64_t>();
    if (x < lo || x > hi)
      return Error(path + "." + key, std::to_string(x) + " is outside " + std::to_string(lo) +
                                         ".." + std::to_string(hi));
    *out = static_cast<T>(x);
    return Status::Ok();
  }
  Status Num(const json& j, const std::string& path, const char* key, double* out, double lo,
             double hi) const {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_number())
      return Error(path + "." + key, "expected a number, got " + std::string(j[key].type_name()));
    const double x = j[key].get<double>();
    if (!(x >= lo && x <= hi))
      return Error(path + "." + key, "outside " + std::to_string(lo) + ".." + std::to_string(hi));
    *out = x;
    return Status::Ok();
  }
  // An optional string key read by `parse` (a hibernate::Parse* function,
  // whose message lists the names allowed); absent or "" leaves *out as is.
  template <class T, class Parse>
  Status Named(const json& j, const std::string& path, const char* key, Parse parse, T* out) const {
    std::string v;
    if (Status st = Str(j, path, key, &v); !st.ok()) return st;
    if (v.empty()) return Status::Ok();
    auto x = parse(v);
    if (!x.ok()) return Error(path + "." + key, WithToken(x.status().message(), v));
    *out = *x;
    return Status::Ok();
  }
  // A size ("64K", "6G", or bytes as an integer), a whole number of pages.
  Status Pages(const json& j, const std::string& path, const char* key, uint64_t* out,
               bool required = false) const {
    if (!j.contains(key)) return required ? Error(path + "." + key, "required") : Status::Ok();
    const json& v = j[key];
    Result<uint64_t> b = Status(-EINVAL, "");
    if (v.is_string())
      b = ParseSize(v.get<std::string>());
    else if (v.is_number_unsigned())
      b = v.get<uint64_t>();
    else
      return Error(path + "." + key,
                   "expected a size such as \"64K\" or \"6G\", got " + std::string(v.type_name()));
    if (!b.ok()) return Error(path + "." + key, b.status().message());
    if (*b == 0 || *b % kPageSize != 0)
      return Error(path + "." + key,
                   "size " + std::to_string(*b) + " is not a positive multiple of 4 KiB");
    if (*b / kPageSize > kMaxPages)
      return Error(path + "." + key,
                   "size " + std::to_string(*b / kPageSize) +
                       " pages is above the limit of 2^32 pages (16 TiB, the largest swap area)");
    *out = *b / kPageSize;
    return Status::Ok();
  }
  Status StrList(const json& j, const std::string& path, const char* key,
                 std::vector<std::string>* out) const {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_array()) return Error(path + "." + key, "expected an array of strings");
    for (size_t i = 0; i < j[key].size(); ++i) {
      if (!j[key][i].is_string())
        return Error(path + "." + key + "[" + std::to_string(i) + "]", "expected a string");
      out->push_back(j[key][i].get<std::string>());
    }
    return Status::Ok();
  }

 private:
  std::string file_;
};

#define SL_TRY(expr)           \
  do {                         \
    Status st_ = (expr);       \
    if (!st_.ok()) return st_; \
  } while (0)

Status FolioOrder(const Reader& r, const json& j, const std::string& path, int* order) {
  uint64_t pages = 1;
  SL_TRY(r.Pages(j, path, "folio", &pages));
  *order = OrderOfPages(pages);
  if (*order < 0 || *order > alloc::kMaxFolioOrder)
    return r.Error(path + ".folio", "a folio is 4K..2M, a power of two");
  return Status::Ok();
}

Status Mix(const Reader& r, const json& j, const std::string& path, std::vector<SizeWeight>* mix) {
  if (!j.contains("sizes")) return r.Error(path + ".sizes", "required");
  if (!j["sizes"].is_array() || j["sizes"].empty())
    return r.Error(path + ".sizes", "expected a non-empty array");
  for (size_t i = 0; i < j["sizes"].size(); ++i) {
    const std::string p = path + ".sizes[" + std::to_string(i) + "]";
    const json& e = j["sizes"][i];
    SL_TRY(r.Keys(e, p, {"size", "weight"}));
    SizeWeight sw;
    SL_TRY(r.Pages(e, p, "size", &sw.pages, true));
    const int o = OrderOfPages(sw.pages);
    if (o < 0 || o > alloc::kMaxFolioOrder)
      return r.Error(p + ".size", "an mTHP size is 4K..2M, a power of two");
    SL_TRY(r.Num(e, p, "weight", &sw.weight, 0, 1e9));
    mix->push_back(sw);
  }
  return Status::Ok();
}

Status PolicyOf(const Reader& r, const json& j, const std::string& path, alloc::Policy* p) {
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

Result<Step> ParseStep(const Reader& r, const json& j, const std::string& path, int cpus) {
  if (!j.is_object()) return r.Error(path, "expected an object with a \"generator\"");
  std::string gen;
  SL_TRY(r.Str(j, path, "generator", &gen, true));
  if (gen == "fill-free") {
    FillFreeSpec s;
    SL_TRY(r.Keys(j, path, {"generator", "region", "folio", "free_share", "shuffled", "cpus"}));
    SL_TRY(r.Pages(j, path, "region", &s.region_pages, true));
    SL_TRY(FolioOrder(r, j, path, &s.order));
    SL_TRY(r.Num(j, path, "free_share", &s.free_share, 0, 1));
    SL_TRY(r.Bool(j, path, "shuffled", &s.shuffled));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    if (s.region_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".region", "not a multiple of the folio");
    return Step(s);
  }
  if (gen == "holes") {
    HolesSpec s;
    SL_TRY(r.Keys(j, path, {"generator", "region", "folio", "hole", "cpus"}));
    SL_TRY(r.Pages(j, path, "region", &s.region_pages, true));
    SL_TRY(FolioOrder(r, j, path, &s.order));
    SL_TRY(r.Pages(j, path, "hole", &s.hole_pages, true));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    if (s.hole_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".hole", "not a multiple of the folio");
    if (s.region_pages % (uint64_t{1} << s.order))
      return r.Error(path + ".region", "not a multiple of the folio");
    return Step(s);
  }
  if (gen == "mthp-mix") {
    MthpSpec s;
    SL_TRY(r.Keys(j, path, {"generator", "total", "sizes", "cpus"}));
    SL_TRY(r.Pages(j, path, "total", &s.total_pages, true));
    SL_TRY(Mix(r, j, path, &s.mix));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    return Step(s);
  }
  if (gen == "build-churn") {
    ChurnSpec s;
    SL_TRY(r.Keys(j, path,
                  {"generator", "processes", "concurrent", "min", "max", "sizes", "partial_free",
                   "cpus", "exit", "exit_at_end", "swapped", "growing", "batch"}));
    SL_TRY(r.Int(j, path, "processes", &s.processes, 1, int64_t{1} << 32, true));
    SL_TRY(r.Int(j, path, "concurrent", &s.concurrent, 1, int64_t{1} << 20, true));
    SL_TRY(r.Pages(j, path, "min", &s.min_pages, true));
    SL_TRY(r.Pages(j, path, "max", &s.max_pages, true));
    if (s.max_pages < s.min_pages) return r.Error(path + ".max", "smaller than min");
    SL_TRY(Mix(r, j, path, &s.mix));
    SL_TRY(r.Num(j, path, "partial_free", &s.partial_free_share, 0, 1));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    std::string exit = "oldest";
    SL_TRY(r.Str(j, path, "exit", &exit));
    if (exit != "oldest" && exit != "random")
      return r.Error(path + ".exit", "'" + Printable(exit, kMaxTokenInMessage) +
                                         "' is neither \"oldest\" nor \"random\"");
    s.random_exit = exit == "random";
    SL_TRY(r.Bool(j, path, "exit_at_end", &s.exit_at_end));
    SL_TRY(r.Pages(j, path, "swapped", &s.swapped_pages, false));
    SL_TRY(r.Int(j, path, "growing", &s.growing, 1, int64_t{1} << 20));
    SL_TRY(r.Pages(j, path, "batch", &s.batch_pages, false));
    if (s.batch_pages == 0) return r.Error(path + ".batch", "at least one page");
    return Step(s);
  }
  if (gen == "usemem") {
    UsememStepSpec s;
    SL_TRY(
        r.Keys(j, path, {"generator", "processes", "size", "folio", "random", "passes", "limit"}));
    SL_TRY(r.Int(j, path, "processes", &s.spec.processes, 1, 1 << 16, true));
    SL_TRY(r.Pages(j, path, "size", &s.spec.pages_per_process, true));
    SL_TRY(FolioOrder(r, j, path, &s.spec.order));
    SL_TRY(r.Bool(j, path, "random", &s.spec.random));
    SL_TRY(r.Int(j, path, "passes", &s.spec.passes, 1, 1 << 20));
    SL_TRY(r.Pages(j, path, "limit", &s.spec.limit_pages, true));
    if (s.spec.pages_per_process % (uint64_t{1} << s.spec.order))
      return r.Error(path + ".size", "not a multiple of the folio");
    return Step(s);
  }
  if (gen == "rotation") {
    RotationStepSpec s;
    SL_TRY(r.Keys(j, path, {"generator", "allocations", "cpus"}));
    SL_TRY(r.Int(j, path, "allocations", &s.allocations, 1, int64_t{1} << 32, true));
    SL_TRY(r.Int(j, path, "cpus", &s.cpus, 1, cpus));
    return Step(s);
  }
  if (gen == "image") {
    ImageStepSpec s;
    SL_TRY(
        r.Keys(j, path, {"generator", "size", "source", "batch", "capacity", "max_pages", "read"}));
    SL_TRY(r.Pages(j, path, "size", &s.pages, true));
    SL_TRY(r.Named(j, path, "source", hibernate::ParseSlotSource, &s.source));
    SL_TRY(r.Named(j, path, "batch", hibernate::ParseBatchMode, &s.batch));
    std::string v = "exact";
    SL_TRY(r.Str(j, path, "capacity", &v));
    auto c = hibernate::ParseCapacityMode(v);
    if (!c.ok()) return r.Error(path + ".capacity", c.status().message());
    s.capacity = *c;
    SL_TRY(r.Int(j, path, "max_pages", &s.max_pages, 0, 4096));
    SL_TRY(r.Bool(j, path, "read", &s.read));
    return Step(s);
  }
  return r.Error(path + ".generator",
                 "unknown generator '" + Printable(gen, kMaxTokenInMessage) +
                     "' (known: fill-free, holes, mthp-mix, build-churn, usemem, rotation, image)");
}

// Pages a step leaves swapped out at most (for the size checks).
uint64_t PagesNeeded(const Step& s) {
  if (auto* f = std::get_if<FillFreeSpec>(&s)) return f->region_pages;
  if (auto* h = std::get_if<HolesSpec>(&s)) return h->region_pages;
  if (auto* i = std::get_if<ImageStepSpec>(&s)) return ImageStepSlots(*i);
  return 0;
}

Status ParseSteps(const Reader& r, const json& j, const char* key, int cpus, uint64_t dev_pages,
                  std::vector<Step>* out) {
  if (!j.contains(key)) return Status::Ok();
  const std::string path = std::string("$.") + key;
  if (!j[key].is_array()) return r.Error(path, "expected an array of generator steps");
  for (size_t i = 0; i < j[key].size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    auto st = ParseStep(r, j[key][i], p, cpus);
    if (!st.ok()) return st.status();
    const uint64_t need = PagesNeeded(*st);
    if (need > dev_pages - 1) {
      const char* what = std::holds_alternative<ImageStepSpec>(*st) ? ".size" : ".region";
      return r.Error(p + what, "needs " + std::to_string(need) +
                                   " pages but the device ($.devices[0]) has " +
                                   std::to_string(dev_pages - 1) + " usable pages");
    }
    out->push_back(*st);
  }
  return Status::Ok();
}

}  // namespace

const char* GeneratorName(const Step& s) {
  static const char* const kNames[] = {"fill-free", "holes",    "mthp-mix", "build-churn",
                                       "usemem",    "rotation", "image"};
  static_assert(std::size(kNames) == std::variant_size_v<Step>, "a generator without a name");
  return kNames[s.index()];
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file) {
  Reader r(file);
  json j;
  DuplicateKeyFinder dups;
  try {
    j = json::parse(text, std::ref(dups));
  } catch (const json::exception& e) {
    // The message quotes the last token read: cut and escaped.
    return r.Error("$", "not JSON: " + Printable(e.what()));
  }
  if (!dups.first_duplicate().empty())
    return r.Error(dups.first_duplicate(),
                   "key given twice in one object (a JSON parser would keep only the last)");
  Scenario sc;
  sc.file = file;
  SL_TRY(r.Keys(j, "$", {"name",          "group",    "title",           "setup",    "seed",
                         "repetitions",   "cpus",     "parallel",        "policy",   "devices",
                         "aging",         "measured", "variants",        "rows",     "pct_rows",
                         "seed_reported", "answers",  "reproduce_scale", "host_cpu", "$comment"}));
  SL_TRY(r.Str(j, "$", "name", &sc.name, true));
  sc.group = sc.name;
  SL_TRY(r.Str(j, "$", "group", &sc.group));
  SL_TRY(r.Str(j, "$", "title", &sc.title));
  SL_TRY(r.Str(j, "$", "answers", &sc.answers));
  SL_TRY(r.StrList(j, "$", "setup", &sc.setup));
  SL_TRY(r.Int(j, "$", "seed", &sc.seed, 0, INT64_MAX));
  SL_TRY(r.Int(j, "$", "repetitions", &sc.repetitions, 1, 100));
  SL_TRY(r.Int(j, "$", "cpus", &sc.cpus, 1, 64));
  SL_TRY(r.Bool(j, "$", "parallel", &sc.parallel));
  SL_TRY(r.Num(j, "$", "reproduce_scale", &sc.reproduce_scale, 1e-4, 1));
  alloc::Policy base = *alloc::Policy::Preset("mm-new");
  if (j.contains("policy")) SL_TRY(PolicyOf(r, j["policy"], "$.policy", &base));
  if (!j.contains("devices") || !j["devices"].is_array() || j["devices"].empty())
    return r.Error("$.devices", "required: a non-empty array of devices");
  std::set<std::string> names;
  for (size_t i = 0; i < j["devices"].size(); ++i) {
    const std::string p = "$.devices[" + std::to_string(i) + "]";
    const json& d = j["devices"][i];
    SL_TRY(r.Keys(d, p, {"name", "size", "ssd", "blkdev", "discard", "prio", "backing", "dir"}));
    DeviceSpec ds;
    ds.name = "swap" + std::to_string(i);
    SL_TRY(r.Str(d, p, "name", &ds.name));
    SL_TRY(r.Pages(d, p, "size", &ds.pages, true));
    if (ds.pages < 10) return r.Error(p + ".size", "a swap area needs at least 10 pages (mkswap)");
    if (ds.pages > (uint64_t{1} << 32))
      return r.Error(p + ".size", "larger than the largest swap area (2^32 pages)");
    SL_TRY(r.Bool(d, p, "ssd", &ds.ssd));
    SL_TRY(r.Bool(d, p, "blkdev", &ds.blkdev));
    SL_TRY(r.Bool(d, p, "discard", &ds.discard));
    if (d.contains("prio")) {
      int prio = 0;
      SL_TRY(r.Int(d, p, "prio", &prio, 0, 32767));
      ds.prio = prio;
    }
    std::string backing = "simulated";
    SL_TRY(r.Str(d, p, "backing", &backing));
    if (backing != "simulated" && backing != "file")
      return r.Error(p + ".backing", "'" + Printable(backing, kMaxTokenInMessage) +
                                         "' is neither \"simulated\" nor \"file\"");
    ds.real_file = backing == "file";
    SL_TRY(r.Str(d, p, "dir", &ds.dir));
    if (!names.insert(ds.name).second)
      return r.Error(p + ".name",
                     "device name '" + Printable(ds.name, kMaxTokenInMessage) + "' used twice");
    sc.devices.push_back(ds);
  }
  SL_TRY(ParseSteps(r, j, "aging", sc.cpus, sc.devices[0].pages, &sc.aging));
  SL_TRY(ParseSteps(r, j, "measured", sc.cpus, sc.devices[0].pages, &sc.measured));
  if (sc.measured.empty())
    return r.Error("$.measured", "required: at least one generator step to measure");
  if (!j.contains("variants")) {
    sc.variants.push_back(VariantSpec{"result", base});
  } else {
    if (!j["variants"].is_array() || j["variants"].empty())
      return r.Error("$.variants", "expected a non-empty array");
    for (size_t i = 0; i < j["variants"].size(); ++i) {
      const std::string p = "$.variants[" + std::to_string(i) + "]";
      const json& v = j["variants"][i];
      SL_TRY(r.Keys(v, p, {"label", "policy", "source", "batch", "threads"}));
      VariantSpec vs{"", base};
      SL_TRY(r.Str(v, p, "label", &vs.label, true));
      if (v.contains("policy")) SL_TRY(PolicyOf(r, v["policy"], p + ".policy", &vs.policy));
      SL_TRY(r.Named(v, p, "source", hibernate::ParseSlotSource, &vs.source));
      SL_TRY(r.Named(v, p, "batch", hibernate::ParseBatchMode, &vs.batch));
      SL_TRY(r.Int(v, p, "threads", &vs.threads, 1, sc.cpus));
      sc.variants.push_back(vs);
    }
  }
  if (j.contains("host_cpu")) {
    const json& h = j["host_cpu"];
    const std::string p = "$.host_cpu";
    HostCpuCost c;
    if (h.is_string()) {  // a named profile (host_cpu.h)
      const HostCpuProfile* prof = FindHostCpuProfile(h.get<std::string>());
      if (prof == nullptr)
        return r.Error(p, "'" + Printable(h.get<std::string>(), kMaxTokenInMessage) +
                              "' names no host CPU profile (known: " + HostCpuProfileNames() + ")");
      c = prof->Cost();
    } else {
      SL_TRY(r.Keys(h, p, {"label", "write_bio_us", "read_bio_us", "alloc_call_us"}));
      SL_TRY(r.Str(h, p, "label", &c.label, true));
      SL_TRY(r.Num(h, p, "write_bio_us", &c.write_bio_us, 0, 1e6));
      SL_TRY(r.Num(h, p, "read_bio_us", &c.read_bio_us, 0, 1e6));
      SL_TRY(r.Num(h, p, "alloc_call_us", &c.alloc_call_us, 0, 1e6));
    }
    for (size_t i = 0; i < sc.devices.size(); ++i) {
      if (sc.devices[i].real_file)
        return r.Error(
            p, "device " + Printable(sc.devices[i].name, kMaxTokenInMessage) +
                   " is a real file: its measured seconds already include this machine's CPU; "
                   "host_cpu prices CPU work for simulated devices only");
    }
    sc.host_cpu = c;
  }
  SL_TRY(r.StrList(j, "$", "rows", &sc.rows));
  SL_TRY(r.StrList(j, "$", "pct_rows", &sc.pct_rows));
  if (j.contains("seed_reported")) {
    const json& s = j["seed_reported"];
    SL_TRY(r.Keys(s, "$.seed_reported", {"source", "setup", "cells"}));
    SL_TRY(r.Str(s, "$.seed_reported", "source", &sc.seed_reported.source));
    SL_TRY(r.StrList(s, "$.seed_reported", "setup", &sc.seed_reported.setup));
    if (s.contains("cells")) {
      if (!s["cells"].is_object())
        return r.Error("$.seed_reported.cells", "expected an object row -> column -> text");
      for (auto row = s["cells"].begin(); row != s["cells"].end(); ++row) {
        const std::string p = "$.seed_reported.cells." + PathKey(row.key());
        if (!row->is_object()) return r.Error(p, "expected an object column -> text");
        for (auto col = row->begin(); col != row->end(); ++col) {
          if (!col->is_string())
            return r.Error(p + "." + PathKey(col.key()),
                           "expected a string (as the seed printed it)");
          sc.seed_reported.cells[row.key()][col.key()] = col->get<std::string>();
        }
      }
    }
  }
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
  std::ifstream in(path);
  if (!in) return Status(-ENOENT, path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace swaplab::workload
