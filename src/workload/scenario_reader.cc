// SPDX-License-Identifier: MIT
// The checked reader of scenario files (scenario_reader.h).
#include "workload/scenario_reader.h"

#include "swaplab/alloc/printable.h"
#include "swaplab/alloc/types.h"
#include "swaplab/workload/size.h"

namespace swaplab::workload {

using nlohmann::json;

std::string PathKey(const std::string& key) { return Printable(key, kMaxTokenInMessage); }

std::string WithToken(std::string msg, const std::string& v) {
  const std::string t = Printable(v, kMaxTokenInMessage);
  if (t == v) return msg;
  for (size_t at = msg.find(v); at != std::string::npos; at = msg.find(v, at + t.size()))
    msg.replace(at, v.size(), t);
  return msg;
}

Status ScenarioReader::Error(const std::string& path, const std::string& what) const {
  return Status(-EINVAL, file_ + ": " + path + ": " + what);
}

Status ScenarioReader::Keys(const json& j, const std::string& path,
                            const std::vector<std::string_view>& known) const {
  if (!j.is_object()) return Error(path, "expected an object, got " + std::string(j.type_name()));
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    std::string list;
    for (std::string_view k : known) {
      ok |= it.key() == k;
      list += (list.empty() ? "" : ", ") + std::string(k);
    }
    if (!ok) return Error(path + "." + PathKey(it.key()), "unknown key (known here: " + list + ")");
  }
  return Status::Ok();
}

Status ScenarioReader::Str(const json& j, const std::string& path, const char* key,
                           std::string* out, bool required) const {
  if (!j.contains(key)) return required ? Error(path + "." + key, "required") : Status::Ok();
  if (!j[key].is_string())
    return Error(path + "." + key, "expected a string, got " + std::string(j[key].type_name()));
  *out = j[key].get<std::string>();
  return Status::Ok();
}

Status ScenarioReader::Bool(const json& j, const std::string& path, const char* key,
                            bool* out) const {
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_boolean())
    return Error(path + "." + key,
                 "expected true or false, got " + std::string(j[key].type_name()));
  *out = j[key].get<bool>();
  return Status::Ok();
}

Status ScenarioReader::IntIn(const json& j, const std::string& path, const char* key, int64_t* out,
                             int64_t lo, int64_t hi, bool required) const {
  if (!j.contains(key)) return required ? Error(path + "." + key, "required") : Status::Ok();
  const json& v = j[key];
  if (!v.is_number_integer())
    return Error(path + "." + key, "expected an integer, got " + std::string(v.type_name()));
  const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                        ? INT64_MAX
                        : v.get<int64_t>();
  if (x < lo || x > hi)
    return Error(path + "." + key, std::to_string(x) + " is outside " + std::to_string(lo) + ".." +
                                       std::to_string(hi));
  *out = x;
  return Status::Ok();
}

Status ScenarioReader::Num(const json& j, const std::string& path, const char* key, double* out,
                           double lo, double hi) const {
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_number())
    return Error(path + "." + key, "expected a number, got " + std::string(j[key].type_name()));
  const double x = j[key].get<double>();
  if (!(x >= lo && x <= hi))
    return Error(path + "." + key, "outside " + std::to_string(lo) + ".." + std::to_string(hi));
  *out = x;
  return Status::Ok();
}

Status ScenarioReader::Pages(const json& j, const std::string& path, const char* key, uint64_t* out,
                             bool required) const {
  using alloc::kPageSize;
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
  if (*b / kPageSize > kMaxScenarioPages)
    return Error(path + "." + key,
                 "size " + std::to_string(*b / kPageSize) +
                     " pages is above the limit of 2^32 pages (16 TiB, the largest swap area)");
  *out = *b / kPageSize;
  return Status::Ok();
}

Status ScenarioReader::Either(const json& j, const std::string& path, const char* key,
                              const char* a, const char* b, std::string* out) const {
  SL_TRY(Str(j, path, key, out));
  if (*out != a && *out != b)
    return Error(path + "." + key, "'" + Printable(*out, kMaxTokenInMessage) + "' is neither \"" +
                                       a + "\" nor \"" + b + "\"");
  return Status::Ok();
}

Status ScenarioReader::StrList(const json& j, const std::string& path, const char* key,
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

Status ScenarioReader::FolioOrder(const json& j, const std::string& path, int* order) const {
  uint64_t pages = 1;
  SL_TRY(Pages(j, path, "folio", &pages));
  *order = OrderOfPages(pages);
  if (*order < 0 || *order > alloc::kMaxFolioOrder)
    return Error(path + ".folio", "a folio is 4K..2M, a power of two");
  return Status::Ok();
}

Status ScenarioReader::Mix(const json& j, const std::string& path,
                           std::vector<SizeWeight>* mix) const {
  if (!j.contains("sizes")) return Error(path + ".sizes", "required");
  if (!j["sizes"].is_array() || j["sizes"].empty())
    return Error(path + ".sizes", "expected a non-empty array");
  for (size_t i = 0; i < j["sizes"].size(); ++i) {
    const std::string p = path + ".sizes[" + std::to_string(i) + "]";
    const json& e = j["sizes"][i];
    SL_TRY(Keys(e, p, {"size", "weight"}));
    SizeWeight sw;
    SL_TRY(Pages(e, p, "size", &sw.pages, true));
    const int o = OrderOfPages(sw.pages);
    if (o < 0 || o > alloc::kMaxFolioOrder)
      return Error(p + ".size", "an mTHP size is 4K..2M, a power of two");
    SL_TRY(Num(e, p, "weight", &sw.weight, 0, 1e9));
    mix->push_back(sw);
  }
  return Status::Ok();
}

}  // namespace swaplab::workload
