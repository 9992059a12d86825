// SPDX-License-Identifier: MIT
// Prices of the CPU work in the image path that a simulated device does
// not price (docs/fidelity.md, "Modelled seconds price device requests,
// not bios"), and the named profiles of them: one table, the only home of
// these numbers (scenario files and --host-cpu name a profile).
#pragma once
#pragma GCC visibility push(default)

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace swaplab::workload {

// The kernel's per-bio work (bio_alloc, submission, completion) and each
// call into the swap allocator for hibernation slots. Added to modelled
// seconds only; measured seconds already contain this machine's.
struct HostCpuCost {
  std::string label;         // whose costs, and where they come from
  double write_bio_us = 0;   // per write bio
  double read_bio_us = 0;    // per read bio
  double alloc_call_us = 0;  // per allocator call (a slot, a range or a run)

  // Modelled seconds plus the priced work: a write's bios and allocator
  // calls, a read's bios.
  double Write(double modelled_s, uint64_t bios, uint64_t calls) const {
    return modelled_s + 1e-6 * (write_bio_us * static_cast<double>(bios) +
                                alloc_call_us * static_cast<double>(calls));
  }
  double Read(double modelled_s, uint64_t bios) const {
    return modelled_s + 1e-6 * read_bio_us * static_cast<double>(bios);
  }
};

struct HostCpuProfile {
  std::string_view name;   // what --host-cpu and a scenario's "host_cpu" say
  std::string_view label;  // whose costs, how they were obtained, where it is written up
  double write_bio_us, read_bio_us, alloc_call_us;

  HostCpuCost Cost() const {
    return HostCpuCost{std::string(label), write_bio_us, read_bio_us, alloc_call_us};
  }
};

// Every named profile, in the order --help lists them.
std::span<const HostCpuProfile> HostCpuProfiles();
// The profile called `name`, or nullptr.
const HostCpuProfile* FindHostCpuProfile(std::string_view name);
// "seed-001, tcg-6.12": for messages and help texts.
std::string HostCpuProfileNames();

}  // namespace swaplab::workload
#pragma GCC visibility pop
