// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text as a point's result (DIR/points/ID.json, what
// `sweep merge` reads). What the schema check accepts is read as Merge
// reads it; nothing may throw.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "swaplab/workload/json_file.h"
#include "sweep/sweep_internal.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto j = workload::ParseJson(text, "r.json");
  if (!j.ok()) return 0;
  const Status st = sweep::CheckPointResult(*j, "r.json", "0123456789abcdef");
  if (!st.ok()) {
    if (st.code() != -EINVAL || st.message().rfind("r.json", 0) != 0) __builtin_trap();
    return 0;
  }
  const double cpu = j->value("cpu_seconds", 0.0), wall = j->value("wall_seconds", 0.0);
  if (!std::isfinite(cpu) || !std::isfinite(wall) || cpu < 0 || wall < 0) __builtin_trap();
  for (const auto& [k, v] : (*j)["metrics"].items())
    if (!v.is_number() && !v.is_null()) __builtin_trap();
  return 0;
}
