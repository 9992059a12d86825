// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text as a point's input (DIR/in/ID.json, what
// `sweep point` runs). What the schema check accepts is turned into its
// scenario with knobs and scale applied (never run); nothing may throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "swaplab/workload/json_file.h"
#include "swaplab/workload/shipped.h"
#include "sweep/sweep_internal.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto j = workload::ParseJson(text, "in.json");
  if (!j.ok()) return 0;
  // (const operator[] asserts on a missing key: find() instead.)
  const auto it = j->is_object() ? j->find("id") : j->end();
  const std::string id =
      it != j->end() && it->is_string() ? it->get<std::string>() : "0123456789abcdef";
  const Status st = sweep::CheckPointInput(*j, "in.json", id);
  if (!st.ok()) {
    if (st.code() != -EINVAL || st.message().rfind("in.json", 0) != 0) __builtin_trap();
    return 0;
  }
  auto sc = sweep::PointScenario(*j, "point");
  if (!sc.ok()) return 0;
  const double scale = (*j)["scale"].get<double>();
  if (!(scale >= 1e-4 && scale <= 16)) __builtin_trap();
  workload::ScaleScenario(sc.value(), scale);
  return 0;
}
