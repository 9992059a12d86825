// SPDX-License-Identifier: MIT
// --policy PRESET and --knob NAME=VALUE on the commands that build an
// allocator (replay, kernel run, image write, run, demo): one way to name
// a policy and change any knob of it (alloc/policy.h) without editing C++.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/status.h"
#include "swaplab/report/policy_json.h"

namespace swaplab::tools {

// "linux-6.1, linux-6.12, …": every preset, for help texts.
std::string PresetList();
// Adds --knob (repeatable) to `c`; its help lists every knob.
void AddKnobOption(CLI::App* c, std::vector<std::string>* knobs);
// `preset` with every "NAME=VALUE" of `knobs` applied in order, validated;
// -EINVAL naming the preset or the knob otherwise (exit 2).
Result<alloc::Policy> PolicyFromArgs(const std::string& preset,
                                     const std::vector<std::string>& knobs);
// Applies `knobs` to `p` and validates it.
Status ApplyKnobs(alloc::Policy* p, const std::vector<std::string>& knobs);
using report::KnobsJson;

}  // namespace swaplab::tools
