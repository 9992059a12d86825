// SPDX-License-Identifier: MIT
// The checked reader of scenario files (scenario.cc, and the generator rows
// of steps.cc): every value is read with its JSON path, and the first
// error, "FILE: $.path: what was wrong", stops the parse.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/workload/generators.h"

namespace swaplab::workload {

// The largest size a scenario may state anywhere (a device, a region, an
// image, a process): the largest swap area, 2^32 pages (16 TiB).
inline constexpr uint64_t kMaxScenarioPages = uint64_t{1} << 32;

// A JSON key as a path component: cut and escaped (swaplab/alloc/printable.h).
std::string PathKey(const std::string& key);
// `msg` from a name parser that quotes `v` whole: the quote cut and escaped.
std::string WithToken(std::string msg, const std::string& v);

class ScenarioReader {
 public:
  using json = nlohmann::json;
  explicit ScenarioReader(std::string file) : file_(std::move(file)) {}
  Status Error(const std::string& path, const std::string& what) const;
  // Refuses keys outside `known`.
  Status Keys(const json& j, const std::string& path,
              std::initializer_list<const char*> known) const {
    return Keys(j, path, std::vector<std::string_view>(known.begin(), known.end()));
  }
  Status Keys(const json& j, const std::string& path,
              const std::vector<std::string_view>& known) const;
  Status Str(const json& j, const std::string& path, const char* key, std::string* out,
             bool required = false) const;
  Status Bool(const json& j, const std::string& path, const char* key, bool* out) const;
  // An integer in lo..hi.
  template <class T>
  Status Int(const json& j, const std::string& path, const char* key, T* out, int64_t lo,
             int64_t hi, bool required = false) const {
    int64_t x = 0;
    if (Status st = IntIn(j, path, key, &x, lo, hi, required); !st.ok() || !j.contains(key))
      return st;
    *out = static_cast<T>(x);
    return Status::Ok();
  }
  Status Num(const json& j, const std::string& path, const char* key, double* out, double lo,
             double hi) const;
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
               bool required = false) const;
  // An optional string key that is `a` or `b` (*out keeps its default
  // when absent).
  Status Either(const json& j, const std::string& path, const char* key, const char* a,
                const char* b, std::string* out) const;
  Status StrList(const json& j, const std::string& path, const char* key,
                 std::vector<std::string>* out) const;
  // A folio size ("folio": 4K..2M, a power of two) as an order; absent: 0.
  Status FolioOrder(const json& j, const std::string& path, int* order) const;
  // An mTHP mix ("sizes": [{"size", "weight"}, ...]).
  Status Mix(const json& j, const std::string& path, std::vector<SizeWeight>* mix) const;

 private:
  Status IntIn(const json& j, const std::string& path, const char* key, int64_t* out, int64_t lo,
               int64_t hi, bool required) const;
  std::string file_;
};

#define SL_TRY(expr)           \
  do {                         \
    Status st_ = (expr);       \
    if (!st_.ok()) return st_; \
  } while (0)

}  // namespace swaplab::workload
