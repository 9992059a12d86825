// SPDX-License-Identifier: MIT
// The preset of a kernel release (preset_for_release.h).
#include "swaplab/alloc/preset_for_release.h"

#include <cstdio>
#include <utility>

#include "swaplab/alloc/policy.h"

namespace swaplab::alloc {

namespace {

// "6.12.118+deb12-amd64" or "linux-6.12" → {6, 12}; {0, 0} when neither.
std::pair<int, int> Version(std::string_view s) {
  if (s.rfind("linux-", 0) == 0) s.remove_prefix(6);
  int major = 0, minor = 0;
  if (std::sscanf(std::string(s).c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

}  // namespace

std::string PresetForRelease(std::string_view release, std::string* why) {
  const auto want = Version(release);
  std::string exact, newer, newest;
  std::pair<int, int> newer_v{1 << 30, 0}, newest_v{0, 0};
  for (const std::string& p : Policy::PresetNames()) {
    const auto v = Version(p);
    if (v.first == 0) continue;
    if (v == want) exact = p;
    if (v > want && v < newer_v) newer = p, newer_v = v;
    if (v > newest_v) newest = p, newest_v = v;
  }
  if (why) why->clear();
  if (!exact.empty()) return exact;
  const std::string pick = newer.empty() ? newest : newer;
  if (why)
    *why = "no preset for Linux " + std::to_string(want.first) + "." + std::to_string(want.second) +
           ": the nearest " + (newer.empty() ? "" : "newer ") + "one, " + pick;
  return pick;
}

}  // namespace swaplab::alloc
