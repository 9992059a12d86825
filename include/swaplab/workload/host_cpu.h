// Prices of the CPU work in the image path that a simulated device does
// not price (docs/fidelity.md, "Modelled seconds price device requests,
// not bios"), and the named profiles of them: one table, the only home of
// these numbers (scenario files and --host-cpu name a profile).
#pragma once

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
};

struct HostCpuProfile {
  std::string_view name;     // what --host-cpu and a scenario's "host_cpu" say
  std::string_view label;    // whose costs, how they were obtained, where it is written up
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
