// SPDX-License-Identifier: MIT
// ScaleScenario (shipped.h).
#include <algorithm>
#include <cmath>

#include "swaplab/workload/shipped.h"
#include "workload/steps.h"

namespace swaplab::workload {

uint64_t Scaled(uint64_t v, double f, uint64_t unit) {
  const double x = std::round(static_cast<double>(v) * f / static_cast<double>(unit));
  return std::max<uint64_t>(1, static_cast<uint64_t>(x)) * unit;
}

void ScaleScenario(Scenario& sc, double f) {
  constexpr uint64_t kCluster = 512;
  sc.scale *= f;
  for (auto& d : sc.devices) d.pages = Scaled(d.pages, f, kCluster);
  for (auto& s : sc.aging) ScaleStep(s, f);
  for (auto& s : sc.measured) ScaleStep(s, f);
}

}  // namespace swaplab::workload
