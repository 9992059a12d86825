// A policy's knobs as JSON (policy_json.h).
#include "swaplab/report/policy_json.h"

#include <algorithm>
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
    } else {
      auto& a = j[name] = nlohmann::ordered_json::array();
      for (size_t pos = 0; pos <= v.size();) {
        const size_t end = std::min(v.find(',', pos), v.size());
        a.push_back(v.substr(pos, end - pos));
        pos = end + 1;
      }
    }
  }
  return j;
}

}  // namespace swaplab::report
