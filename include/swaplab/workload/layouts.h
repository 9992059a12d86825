// SPDX-License-Identifier: MIT
// Seed 001's two device states ("Results"), by name: the aging phase of the
// shipped scenario that reproduces each table, so `swaplab image write
// --layout`, the hibernate tests and `swaplab reproduce` build the same
// device state for the same name, seed and scale:
//   shuffled — scenarios/rfc-shuffled.json: "6G swap, 5.4G of 2M tmpfs
//              files swapped out, then all removed in random order" (2 MiB
//              folios, freed in a seeded random order: every cluster free,
//              the free list in free order);
//   holes    — scenarios/rfc-holes.json: "12G swap, one 4G file swapped
//              out, every other 64K of it freed" (order-0 pages on one CPU,
//              every other 16-page piece freed).
// A device of another size gets the scenario scaled to it (ScaleScenario).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "swaplab/alloc/status.h"
#include "swaplab/alloc/swap_system.h"
#include "swaplab/workload/scenario.h"

namespace swaplab::workload {

enum class RfcLayout { kFresh, kShuffled, kHoles };
Result<RfcLayout> ParseRfcLayout(std::string_view s);  // "fresh" | "shuffled" | "holes"
const char* Name(RfcLayout l);

// The shipped scenario of `l` at `scale` (ScaleScenario); -ENOENT for fresh.
Result<Scenario> LayoutScenario(RfcLayout l, double scale = 1.0);
// The scale at which the scenario's first device has `device_pages` pages.
Result<double> LayoutScale(RfcLayout l, uint64_t device_pages);

struct LayoutReport {
  uint64_t pages_swapped_out = 0;  // pages the aging swapped out
  uint64_t pages_left = 0;         // still in use on the device at the end
};

// Runs the aging of `l` (fresh: nothing) on `sys` through a Workload seeded
// with `seed`, as the scenario runner does for repetition 0 of the
// scenario at `scale` with seed `seed`; without a scale, at the one where
// the scenario's device is as large as device `type` (LayoutScale). The
// generators swap out as reclaim does and free by zapping (generators.h).
// -ENOSPC if the system cannot hold the layout.
Result<LayoutReport> ApplyRfcLayout(alloc::SwapSystem& sys, int type, RfcLayout l,
                                    uint64_t seed = 1, std::optional<double> scale = std::nullopt);

}  // namespace swaplab::workload
#pragma GCC visibility pop
