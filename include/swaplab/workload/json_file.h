// SPDX-License-Identifier: MIT
// One reader for every JSON file swaplab did not just write itself (sweep
// specs, sweep.json, a point's input and result): a regular file only, a
// size limit, syntax errors as FILE:LINE:COL, and typed accessors whose
// schema errors name the JSON path ("FILE: $.points[3].scale: ...").
// Nothing here throws: every error is a Status.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "swaplab/alloc/status.h"

namespace swaplab::workload {

inline constexpr size_t kMaxJsonFile = size_t{16} << 20;   // specs, points
inline constexpr size_t kMaxSweepJson = size_t{64} << 20;  // sweep.json

// The bytes of `path`, a regular file of at most `limit` bytes (a FIFO or
// a device is refused before it can block). -ENOENT / -EACCES when it
// cannot be opened, -EINVAL when it is not a regular file or too large.
Result<std::string> ReadTextFile(const std::string& path, size_t limit);

// `text` parsed; a syntax error is -EINVAL "NAME:LINE:COL: what".
Result<nlohmann::json> ParseJson(const std::string& text, const std::string& name);

// ReadTextFile then ParseJson.
Result<nlohmann::json> ReadJsonFile(const std::string& path, size_t limit = kMaxJsonFile);

// A place in a parsed document: the value (null when absent), its JSON
// path and the file, for messages. Children are looked up without
// throwing; each accessor checks the type (and range) and on a mismatch
// returns -EINVAL "FILE: PATH: expected ..., not VALUE".
class JsonAt {
 public:
  JsonAt(const nlohmann::json& root, std::string file);
  JsonAt operator[](const std::string& key) const;  // absent unless an object with key
  JsonAt operator[](size_t i) const;                // absent unless an array longer than i
  bool present() const { return v_ != nullptr; }
  const nlohmann::json& value() const;  // requires present()
  const std::string& path() const { return path_; }
  size_t size() const;  // elements of an array or object, else 0

  Status Error(const std::string& what) const;  // -EINVAL "FILE: PATH: what"
  Status Object() const;                        // present and an object
  Status Array(size_t max_size) const;          // present, an array of at most max_size
  Result<std::string> Str() const;
  Result<bool> Bool() const;
  Result<double> Num(double lo, double hi) const;  // finite, in [lo, hi]

 private:
  JsonAt(const nlohmann::json* v, std::string path, std::string file)
      : v_(v), path_(std::move(path)), file_(std::move(file)) {}
  const nlohmann::json* v_;  // null: absent
  std::string path_;
  std::string file_;
};

}  // namespace swaplab::workload
#pragma GCC visibility pop
