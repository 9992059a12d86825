// SPDX-License-Identifier: MIT
// What the property tests generate (generators.cc): a CaseConfig, and a
// program of 1-3 swapons followed by operations drawn from a weighted mix.
#pragma once

#include <rapidcheck.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "alloc/property/harness.h"

namespace swaplab::alloc::model {

// How often each OpKind is drawn, in OpKind order.
using Weights = std::array<uint32_t, static_cast<size_t>(OpKind::kNumKinds)>;

// The mix of most properties: every kind of operation.
Weights MixedWeights();
// MixedWeights with kError ten times as often.
Weights ErrorHeavyWeights();
// Fill the devices: many allocations, few frees, so the allocator works
// near full (vm_swap_full reclaim, full devices off the avail list,
// fallback of large folios).
Weights PressureWeights();
// Devices come and go: swapon / swapoff / pins / hibernation slots between
// ordinary traffic.
Weights LifecycleWeights();

rc::Gen<OpSpec> GenOp(const Weights& w);
rc::Gen<OpSpec> GenSwapon();
rc::Gen<CaseConfig> GenConfig();

// Swapons first (1..3 devices), then `scale` × size operations.
std::vector<OpSpec> GenProgram(const Weights& w, double scale);

}  // namespace swaplab::alloc::model
