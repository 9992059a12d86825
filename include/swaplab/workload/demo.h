// SPDX-License-Identifier: MIT
// `swaplab demo`: a built-in allocation churn on one simulated device, run
// with each policy given, side by side: the kernel's counters and the
// cluster lists at the end.
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <string>
#include <vector>

#include "swaplab/alloc/policy.h"
#include "swaplab/alloc/swap_system.h"

namespace swaplab::workload {

struct DemoOptions {
  std::vector<alloc::Policy> policies;
  uint64_t size_mib = 1024;
  uint64_t seed = 1;
  uint64_t ops = 100000;
};

struct DemoRun {
  std::string policy;
  alloc::Policy effective;
  alloc::SwapCounters counters;
  alloc::DeviceInfo dev;
  std::string invariants;
  double seconds = 0;  // measured
};

struct DemoResult {
  DemoOptions options;
  std::vector<DemoRun> runs;  // one per policy, in order
};

DemoResult RunDemo(const DemoOptions& o);

}  // namespace swaplab::workload
#pragma GCC visibility pop
