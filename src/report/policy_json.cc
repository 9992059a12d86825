// SPDX-License-Identifier: MIT
// A policy's knobs as JSON (policy_json.h).
#include "swaplab/report/policy_json.h"

#include <string>

namespace swaplab::report {

nlohmann::ordered_json KnobsJson(const alloc::Policy& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const auto& info = alloc::Policy::Knobs();
  const auto values = p.KnobValues();
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& [name, v] = values[i];
    if (info[i].type == "bool") {
      j[name] = v == "true";
    } else if (info[i].type == "int") {
      j[name] = std::stoll(v);
    } else {  // the search order: its steps, not the joined text
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (alloc::SearchStep s : p.search) a.push_back(alloc::Name(s));
      j[name] = std::move(a);
    }
  }
  return j;
}

}  // namespace swaplab::report
