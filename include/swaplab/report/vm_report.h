// `vm hibernate`'s result: kernel and model side by side as a text table,
// or one JSON document (`kernel` and `model` objects with the same metric
// names; the kernel's holds the guest's release).
#pragma once
#include <string>
#include "swaplab/vm/vm_hibernate.h"

namespace swaplab::report {

std::string VmHibernateText(const vm::HibernateReport& r);
std::string VmHibernateJson(const vm::HibernateReport& r);

}  // namespace swaplab::report
