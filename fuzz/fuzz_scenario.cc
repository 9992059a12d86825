// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text through the scenario parser (parse only, never
// run). It must return a scenario or an -EINVAL naming a JSON path, never
// throw, crash or echo unbounded input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "swaplab/workload/scenario.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto sc = workload::ParseScenario(text, "fuzz.json");
  if (!sc.ok()) {
    const Status st = sc.status();
    if (st.code() != -EINVAL) __builtin_trap();
    if (st.message().rfind("fuzz.json: $", 0) != 0) __builtin_trap();  // names the path
    if (st.message().size() > 1024) __builtin_trap();                  // bounded echo
    return 0;
  }
  // What parses is consistent: what the runner relies on.
  if (sc->devices.empty() || sc->measured.empty() || sc->variants.empty()) __builtin_trap();
  for (const auto& d : sc->devices)
    if (d.pages < 10 || d.pages > (uint64_t{1} << 32)) __builtin_trap();
  (void)workload::SetHostCpu(sc.value(), std::nullopt);
  return 0;
}
