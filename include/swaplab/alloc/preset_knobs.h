// SPDX-License-Identifier: MIT
// The knobs a preset sets: its row's "NAME=VALUE ..." string
// (PresetInfo::knobs, alloc/policy.h) split once, for Policy::Preset and
// for every text that lists a preset's knobs (README's preset table).
#pragma once
#pragma GCC visibility push(default)

#include <string_view>
#include <vector>

#include "swaplab/alloc/policy.h"

namespace swaplab::alloc {

// Each "NAME=VALUE" of `preset.knobs`, in order (Policy::SetAssignment
// reads one); spaces separate them, empty ones are skipped. The views
// point into the presets table, which lives as long as the program.
std::vector<std::string_view> PresetKnobAssignments(const PresetInfo& preset);

}  // namespace swaplab::alloc
#pragma GCC visibility pop
