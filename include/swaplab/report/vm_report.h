// `vm hibernate`'s result: kernel and model side by side as a text table,
// or one JSON document (`kernel` and `model` objects with the same metric
// names; the kernel's holds the guest's release).
#pragma once
#pragma GCC visibility push(default)
#include <string>

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

}  // namespace swaplab::report
#pragma GCC visibility pop
