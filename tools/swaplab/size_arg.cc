// SPDX-License-Identifier: MIT
#include "size_arg.h"

#include "swaplab/workload/size.h"

namespace swaplab::tools {

Result<uint64_t> ParseSize(const std::string& s, const std::string& opt) {
  auto r = workload::ParseSize(s);
  if (!r.ok()) return Status(r.status().code(), opt + ": " + r.status().message());
  return r;
}

}  // namespace swaplab::tools
