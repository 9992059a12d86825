// SPDX-License-Identifier: MIT
// A policy's knobs in JSON outputs: every knob by name (alloc/policy.h).
#pragma once
#pragma GCC visibility push(default)

#include <nlohmann/json.hpp>

#include "swaplab/alloc/policy.h"

namespace swaplab::report {

// {"search": [steps...], "knob": value, ...}: bools and ints as JSON
// values, in Policy::Knobs() order.
nlohmann::ordered_json KnobsJson(const alloc::Policy& p);

}  // namespace swaplab::report
#pragma GCC visibility pop
