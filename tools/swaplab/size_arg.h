// SPDX-License-Identifier: MIT
// Size arguments of the command line, one parser for every subcommand.
#pragma once

#include <string>

#include "swaplab/alloc/status.h"

namespace swaplab::tools {

// workload::ParseSize ("4096", "64M", "1GiB", "512k", "7.5G"), the
// message naming the option `opt`.
Result<uint64_t> ParseSize(const std::string& s, const std::string& opt);

}  // namespace swaplab::tools
