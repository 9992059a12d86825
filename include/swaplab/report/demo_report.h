// SPDX-License-Identifier: MIT
// `swaplab demo`'s result: one row per policy (4 KiB and 64 KiB swpout,
// 64 KiB fallbacks, fast-path hits, clusters by list) as a text table or
// one JSON document, and whether the invariants held after each run.
#pragma once
#pragma GCC visibility push(default)

#include <string>

#include "swaplab/workload/demo.h"

namespace swaplab::report {

std::string DemoText(const workload::DemoResult& r);
std::string DemoJson(const workload::DemoResult& r);
// Every run ended with its invariants holding.
bool DemoInvariantsHold(const workload::DemoResult& r);

}  // namespace swaplab::report
#pragma GCC visibility pop
