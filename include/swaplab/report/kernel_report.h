// SPDX-License-Identifier: MIT
// `swaplab kernel run`'s result: the kernel's placements and counters next
// to the model's, as text or one JSON document; `kernel cleanup`'s log.
#pragma once
#pragma GCC visibility push(default)

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/kernel/kernel_run.h"

namespace swaplab::report {

nlohmann::ordered_json KernelRunJson(const kernel::KernelComparison& k);
std::string KernelRunText(const kernel::KernelComparison& k);

// What `kernel cleanup` removed or restored, one action a line.
nlohmann::ordered_json CleanupJson(const std::vector<std::string>& actions, const Status& st);
std::string CleanupText(const std::vector<std::string>& actions);

}  // namespace swaplab::report
#pragma GCC visibility pop
