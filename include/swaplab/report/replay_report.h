// SPDX-License-Identifier: MIT
// `swaplab replay`'s result as text, one JSON document or CSV: the
// summary of the trace, the kernel's counters in /proc/vmstat and
// /sys/kernel/mm/transparent_hugepage/hugepages-*/stats names, each
// device's cluster lists and the agreement with the trace's expect lines.
#pragma once
#pragma GCC visibility push(default)

#include <nlohmann/json.hpp>
#include <string>

#include "swaplab/workload/replay.h"

namespace swaplab::report {

nlohmann::ordered_json ReplayJson(const workload::ReplayResult& r);
std::string ReplayText(const workload::ReplayResult& r);
std::string ReplayCsv(const workload::ReplayResult& r);

}  // namespace swaplab::report
#pragma GCC visibility pop
