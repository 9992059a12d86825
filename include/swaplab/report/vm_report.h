// SPDX-License-Identifier: MIT
// `vm hibernate`'s result: kernel and model side by side as a text table,
// or one JSON document (`kernel` and `model` objects with the same metric
// names; the kernel's holds the guest's release).
#pragma once
#pragma GCC visibility push(default)
#include <string>

#include "swaplab/vm/vm_churn.h"
#include "swaplab/vm/vm_hibernate.h"
#include "swaplab/vm/vm_reproduce.h"
#include "swaplab/vm/vm_run.h"
#include "swaplab/workload/host_cpu.h"

namespace swaplab::report {

std::string VmHibernateText(const vm::HibernateReport& r);
std::string VmHibernateJson(const vm::HibernateReport& r);
// `vm run`: the guest's kernel run (its JSON kept whole under "kernel_run")
// with where it ran and the host's replay.
std::string VmRunText(const vm::VmRunOptions& o, const vm::VmRunResult& r);
std::string VmRunJson(const vm::VmRunOptions& o, const vm::VmRunResult& r);

// `reproduce --vm`: both layouts in one table, kernel and model columns,
// with `cpu`'s prices added to the model's seconds when given, and the
// host's wall seconds of each side (the VM's boots, the model's replay and
// images) with their ratio.
std::string VmSeedTableText(const vm::SeedTableReport& r, const workload::HostCpuCost* cpu);
std::string VmSeedTableJson(const vm::SeedTableReport& r, const workload::HostCpuCost* cpu);
// `reproduce --vm --kernel NAME`: seed 001's two tables measured on a
// kernel built with kernel-patches/rfc-6.12, one column per boot
// (base / allocator / allocator + bio), each cell the median and spread of
// its runs, with the model's cells (the column's slot source and batching)
// and the seed's own numbers under them. The JSON holds kernel, model and
// seed objects with the same metric names per cell, and every run.
// With `cpu`, the model's cells also get "+ host CPU" rows: its seconds
// plus the prices of its bios (per run in the allocator + bio column) and
// allocator calls.
std::string VmRfcTableText(const vm::RfcTableReport& r, const workload::HostCpuCost* cpu);
std::string VmRfcTableJson(const vm::RfcTableReport& r, const workload::HostCpuCost* cpu);
// `reproduce nonfull-vs-free-* --vm --kernel NAME`: seed 003's rows
// (mTHP swpout, swpout_fallback, failure rate) measured on the patched
// kernel booted with swapfile.prefer_nonfull=0 and =1, each the median and
// range of its runs, with the model's medians of the same scaled scenario
// and the seed's full-size cells under them. JSON: per column kernel, model
// and seed objects with the same row names, and every run's counters.
std::string VmNonfullTableText(const vm::NonfullTableReport& r);
std::string VmNonfullTableJson(const vm::NonfullTableReport& r);

}  // namespace swaplab::report
#pragma GCC visibility pop
