// SPDX-License-Identifier: MIT
// The named host CPU profiles (include/swaplab/workload/host_cpu.h).
#include "swaplab/workload/host_cpu.h"

#include <array>

namespace swaplab::workload {

namespace {

constexpr std::array kProfiles{
    // Fitted, not measured: the differences between the columns of seed
    // 001's shuffled table, less our device model's own differences
    // (docs/results.md, "Seed 001's seconds: pricing the VM's CPU").
    HostCpuProfile{
        "seed-001",
        "seed 001's VM (qemu without KVM), fitted to seed 001's shuffled table; docs/results.md",
        1.10, 0.63, 0.94},
    // Measured: Debian's 6.12 hibernating in this machine's qemu under
    // TCG, 16 runs (bench/vm_price_fit.sh, docs/results.md "Measured
    // prices: Debian 6.12 under TCG"): the guest kernel's seconds over the
    // model's, per page on disk. 6.12 makes one bio, one allocator call and
    // one copy per page, so the price is the bio's and the call's is 0
    // (not separable). Write came out at -0.35 us (not above the model's
    // device: 0), read at 4.44 us.
    HostCpuProfile{"tcg-6.12",
                   "Debian 6.12 in this machine's qemu (TCG), measured over the model's device: "
                   "bench/vm_price_fit.sh, "
                   "docs/results.md",
                   0.0, 4.44, 0.0},
    // Measured: rfc-6.12 (kernel-patches/) hibernating in this machine's
    // qemu under TCG, seed 001's three columns, 18 runs
    // (KERNEL=rfc-6.12 COMPRESS=none bench/vm_price_fit.sh, docs/results.md
    // "Measured prices: the patched kernel under TCG"). hibernate_bio=runs
    // makes bios independent of pages, so a price per bio separates from
    // the price per page (allocator call + copy), which came out below the
    // model's device (-2.77 us written, -4.46 us read: 0 here).
    HostCpuProfile{"tcg-rfc-6.12",
                   "rfc-6.12 in this machine's qemu (TCG), measured over the model's device: "
                   "KERNEL=rfc-6.12 bench/vm_price_fit.sh, docs/results.md",
                   3.66, 3.72, 0.0},
};

}  // namespace

std::span<const HostCpuProfile> HostCpuProfiles() { return kProfiles; }

const HostCpuProfile* FindHostCpuProfile(std::string_view name) {
  for (const HostCpuProfile& p : kProfiles)
    if (p.name == name) return &p;
  return nullptr;
}

std::string HostCpuProfileNames() {
  std::string s;
  for (const HostCpuProfile& p : kProfiles) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

}  // namespace swaplab::workload
