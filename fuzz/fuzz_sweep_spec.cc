// SPDX-License-Identifier: MIT
// libFuzzer: arbitrary text as a sweep spec (`swaplab sweep SPEC`): expanded
// into points (each point's scenario parsed, never run). It must return a
// sweep or an -EINVAL naming the file, never throw or crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "swaplab/sweep/sweep.h"

using namespace swaplab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto s = sweep::ExpandSpec(text, "fuzz.json", 1.0);
  if (!s.ok()) {
    const Status st = s.status();
    if (st.code() != -EINVAL && st.code() != -ENOENT && st.code() != -EACCES) __builtin_trap();
    if (st.message().rfind("fuzz.json", 0) != 0) __builtin_trap();  // names the file
    if (st.message().size() > 2048) __builtin_trap();               // bounded echo
    return 0;
  }
  if (s->points.empty() || s->points.size() > sweep::kMaxPoints) __builtin_trap();
  return 0;
}
